//! Opens the rooms of rematches: a finished room whose racers all accepted
//! a rematch hands its plan here ([`OpenRematch`]), and one task opens the
//! new room (under a code the cluster gives, in a cluster), takes back its
//! bots' seats, and answers the finished room with the code, which tells
//! each racer its seat's token.
//!
//! The decisions (who votes, when the vote settles, the series' score) are
//! the room core's; this is the wiring that needs the whole server, which a
//! room's actor does not hold.

use std::sync::Arc;

use tokio::sync::mpsc;

use crate::bots;
use crate::room;
use crate::room_handle::{Command, OpenRematch, RematchPlan};
use crate::state::Shared;

/// Serves rematch requests until every finished room has gone and the
/// server stops.
pub async fn serve(shared: Arc<Shared>, mut requests: mpsc::Receiver<OpenRematch>) {
    loop {
        let request = tokio::select! {
            () = shared.shutdown.cancelled() => return,
            request = requests.recv() => request,
        };
        let Some(OpenRematch { plan, reply }) = request else {
            return;
        };
        let code = open(&shared, *plan).await;
        let _ = reply.send(Command::RematchOpened { code }).await;
    }
}

/// Opens the rematch's room; its code, or `None` if it could not open.
async fn open(shared: &Shared, plan: RematchPlan) -> Option<Arc<str>> {
    let bots: Vec<(u8, patience_shared::protocol::BotLevel)> = plan
        .seats
        .iter()
        .filter_map(|seat| Some((seat.seat, seat.bot?)))
        .collect();
    let code = match &shared.cluster {
        None => None,
        Some(cluster) => match cluster.claim_new_code(&shared.registry).await {
            Ok(code) => Some(code),
            Err(error) => {
                tracing::warn!(%error, "no code could be claimed for a rematch's room");
                return None;
            }
        },
    };
    let context = shared.room_context();
    let Some(handle) = room::create_rematch(&context, code.clone(), plan) else {
        if let (Some(cluster), Some(code)) = (&shared.cluster, &code) {
            cluster.release(code);
        }
        return None;
    };
    tracing::info!(code = %handle.code, "a rematch's room opened");
    bots::reseat_bots(shared.bot_hosting(), &handle, &bots).await;
    Some(Arc::clone(&handle.code))
}
