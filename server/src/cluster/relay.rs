//! The leaderboards' relay: every change to a day's leaderboard made at
//! this node goes to the others on one Redis channel, and theirs come back
//! into this node's [`LeaderboardFeed`], so that a day followed at any node
//! is live with every node's attempts.
//!
//! Redis pub/sub keeps nothing: a change published while a node is not
//! subscribed (Redis restarting, the node reconnecting) never reaches it.
//! Nothing is lost for good by that: changes are numbered, so a follower
//! that misses one is sent the whole page at the next (see
//! [`leaderboard_feed`](crate::leaderboard_feed)).
//!
//! A change made here that does not reach Redis (its `PUBLISH` fails or
//! times out, or the relay fell behind the feed) is counted in
//! `patience_cluster_writes_dropped_total`, one per change, besides the
//! failed call in `patience_cluster_redis_errors_total`. While the
//! subscription is lost the relay goes on publishing (and counting what
//! fails) and tries to subscribe again a second (its Redis timeout) after
//! each failed try.

use futures::StreamExt as _;
use redis::aio::PubSubStream;
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

use super::{Cluster, ClusterError, PREFIX, REDIS_TIMEOUT};
use crate::leaderboard_feed::{Change, LeaderboardFeed, Origin};

/// The channel, under the cluster's prefix.
fn channel() -> String {
    format!("{PREFIX}leaderboards")
}

/// A message on the channel: the sending node's id, so that a node skips
/// its own, then the `leaderboard_update` frame its followers got.
fn message(node_id: &str, frame: &[u8]) -> Vec<u8> {
    let id = node_id.as_bytes();
    let length = u16::try_from(id.len()).unwrap_or(u16::MAX);
    let id = &id[..usize::from(length)];
    let mut message = Vec::with_capacity(2 + id.len() + frame.len());
    message.extend_from_slice(&length.to_be_bytes());
    message.extend_from_slice(id);
    message.extend_from_slice(frame);
    message
}

/// The sender's id and the frame of a message, if it is one.
fn parse(message: &[u8]) -> Option<(&[u8], &[u8])> {
    let (length, rest) = message.split_first_chunk::<2>()?;
    let length = usize::from(u16::from_be_bytes(*length));
    (rest.len() >= length).then(|| rest.split_at(length))
}

/// This node's subscription to the other nodes' changes.
pub struct Relay {
    cluster: Cluster,
    /// The other nodes' changes; `None` while the subscription is lost.
    messages: Option<PubSubStream>,
}

impl Cluster {
    /// Subscribes to the other nodes' leaderboard changes: from when this
    /// returns, none they publish is missed while Redis stays up.
    pub async fn subscribe_leaderboards(&self) -> Result<Relay, ClusterError> {
        Ok(Relay {
            cluster: self.clone(),
            messages: Some(self.leaderboard_messages().await?),
        })
    }

    async fn leaderboard_messages(&self) -> Result<PubSubStream, ClusterError> {
        let mut pubsub = self.call(self.inner.client.get_async_pubsub()).await?;
        self.call(pubsub.subscribe(channel())).await?;
        Ok(pubsub.into_on_message())
    }
}

impl Relay {
    /// Relays changes both ways until the server stops.
    pub async fn run_forever(mut self, feed: LeaderboardFeed, shutdown: CancellationToken) {
        let mut made_here = feed.changes();
        // When to subscribe again, while the subscription is lost.
        let mut resubscribe_at = tokio::time::Instant::now();
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                change = made_here.recv() => match change {
                    Ok(change) if change.origin == Origin::Here => self.send(&change).await,
                    Ok(_) => {}
                    // The other nodes' followers are sent whole pages at
                    // their next change.
                    Err(RecvError::Lagged(missed)) => {
                        tracing::warn!(missed, "leaderboard changes were not relayed");
                        self.dropped(missed);
                    }
                    Err(RecvError::Closed) => return,
                },
                message = next_message(self.messages.as_mut()), if self.messages.is_some() => {
                    match message {
                        Some(message) => self.take(message.get_payload_bytes(), &feed),
                        None => {
                            tracing::warn!("the subscription to the leaderboards channel is lost");
                            self.messages = None;
                            resubscribe_at = tokio::time::Instant::now();
                        }
                    }
                }
                () = tokio::time::sleep_until(resubscribe_at), if self.messages.is_none() => {
                    match self.cluster.leaderboard_messages().await {
                        Ok(messages) => {
                            self.messages = Some(messages);
                            tracing::info!("subscribed to the leaderboards channel again");
                        }
                        Err(error) => {
                            tracing::warn!(%error, "cannot subscribe to the leaderboards channel");
                            resubscribe_at = tokio::time::Instant::now() + REDIS_TIMEOUT;
                        }
                    }
                }
            }
        }
    }

    /// Publishes a change made here; one that does not reach Redis is
    /// counted as dropped (the failed call is counted by `call`).
    async fn send(&self, change: &Change) {
        let mut redis = self.cluster.redis();
        let payload = message(self.cluster.node_id(), &change.frame);
        let published: Result<i64, ClusterError> = self
            .cluster
            .call(
                redis::cmd("PUBLISH")
                    .arg(channel())
                    .arg(payload)
                    .query_async(&mut redis),
            )
            .await;
        if let Err(error) = published {
            tracing::warn!(%error, "a leaderboard change was not relayed");
            self.dropped(1);
        }
    }

    /// Counts `changes` made here that the other nodes will not get.
    fn dropped(&self, changes: u64) {
        self.cluster
            .inner
            .metrics
            .cluster_writes_dropped
            .fetch_add(changes, std::sync::atomic::Ordering::Relaxed);
    }

    fn take(&self, message: &[u8], feed: &LeaderboardFeed) {
        let Some((sender, frame)) = parse(message) else {
            tracing::warn!("a message on the leaderboards channel is not one");
            return;
        };
        if sender == self.cluster.node_id().as_bytes() {
            return;
        }
        if let Err(error) = feed.publish_from_elsewhere(frame) {
            tracing::warn!(%error, "another node's leaderboard change does not decode");
        }
    }
}

/// The next message of the subscription (`None` once it is lost; never
/// ready without one, though the caller polls only with one).
async fn next_message(messages: Option<&mut PubSubStream>) -> Option<redis::Msg> {
    match messages {
        Some(messages) => messages.next().await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::{message, parse};

    #[test]
    fn a_message_names_its_node_and_carries_the_frame() {
        let cases: [(&str, &[u8]); 3] = [("node-a", b"\x82frame"), ("", b""), ("n", b"\x00\x01")];
        for (node, frame) in cases {
            let sent = message(node, frame);
            assert_eq!(parse(&sent), Some((node.as_bytes(), frame)), "{node:?}");
        }
        assert_eq!(parse(b""), None);
        assert_eq!(parse(b"\x00"), None);
        assert_eq!(parse(b"\x00\x05node"), None, "shorter than its id");
    }
}
