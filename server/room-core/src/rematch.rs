//! A rematch's vote: who accepted, who declined, who has yet to answer, and
//! until when. Pure: the time is an argument, and the room core decides what
//! to send.
//!
//! Every seat of the finished race votes. A bot accepts at once; a seat
//! whose player is gone (left the room, or let its grace period pass)
//! declines. One decline settles it (no rematch); so does the deadline
//! while anyone has yet to answer; the rematch is ready once every seat
//! accepted. A settled vote changes no more: a new proposal after a
//! decline or an expiry opens a new vote.
//!
//! The room's part ([`RoomCore`]'s methods here) tells each answer, hands
//! the shell the plan of the new room once every racer accepted, gives
//! each racer its seat's token once that room is open, and starts a
//! rematch's room once its racers are all back.

use patience_shared::protocol::{RematchOffer, RematchStatus};

use std::sync::Arc;

use patience_shared::protocol::{
    ErrorCode, Phase, PlayerStatus, REMATCH_WAIT_MS, SeriesScore, ServerMessage,
};

use crate::records::{RematchPlan, RematchSeat};
use crate::secrets::token_hash;
use crate::{Audience, ConnId, Millis, Output, REMATCH_OPEN_MS, RoomCore};

/// Who a seat's vote is in a rematch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Voter {
    /// A person who may answer.
    Person,
    /// A server bot: it accepts at once.
    Bot,
    /// A player who is gone: it declines.
    Gone,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Answer {
    Waiting,
    Accepted,
    Declined,
}

/// The vote on one rematch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vote {
    answers: Vec<(u8, Answer)>,
    deadline: Millis,
    status: RematchStatus,
}

impl Vote {
    /// A vote of `seats`, opened at `now`, open for `wait_ms`.
    pub fn open(seats: impl IntoIterator<Item = (u8, Voter)>, now: Millis, wait_ms: u64) -> Vote {
        let answers = seats
            .into_iter()
            .map(|(seat, voter)| {
                let answer = match voter {
                    Voter::Person => Answer::Waiting,
                    Voter::Bot => Answer::Accepted,
                    Voter::Gone => Answer::Declined,
                };
                (seat, answer)
            })
            .collect();
        let mut vote = Vote {
            answers,
            deadline: now.saturating_add(wait_ms),
            status: RematchStatus::Open,
        };
        vote.settle();
        vote
    }

    /// Where the vote stands.
    pub fn status(&self) -> RematchStatus {
        self.status
    }

    /// When an open vote expires; `None` once settled.
    pub fn deadline(&self) -> Option<Millis> {
        (self.status == RematchStatus::Open).then_some(self.deadline)
    }

    /// `seat` answers; whether anything changed (a settled vote, a seat
    /// not in the vote, or the same answer again change nothing).
    pub fn answer(&mut self, seat: u8, accept: bool) -> bool {
        if self.status != RematchStatus::Open {
            return false;
        }
        let Some((_, answer)) = self.answers.iter_mut().find(|(voter, _)| *voter == seat) else {
            return false;
        };
        let new = if accept {
            Answer::Accepted
        } else {
            Answer::Declined
        };
        if *answer == new {
            return false;
        }
        *answer = new;
        self.settle();
        true
    }

    /// The vote at `now`: an open vote past its deadline expires. Whether
    /// it did.
    pub fn expire(&mut self, now: Millis) -> bool {
        if self.status == RematchStatus::Open && now >= self.deadline {
            self.status = RematchStatus::Expired;
            return true;
        }
        false
    }

    /// The vote as the room tells it at `now`.
    pub fn offer(&self, now: Millis) -> RematchOffer {
        let seats = |wanted: Answer| {
            self.answers
                .iter()
                .filter(|(_, answer)| *answer == wanted)
                .map(|(seat, _)| *seat)
                .collect()
        };
        RematchOffer {
            status: self.status,
            accepted: seats(Answer::Accepted),
            declined: seats(Answer::Declined),
            waiting: seats(Answer::Waiting),
            expires_in_ms: self
                .deadline()
                .map_or(0, |deadline| deadline.saturating_sub(now)),
        }
    }

    fn settle(&mut self) {
        if self
            .answers
            .iter()
            .any(|(_, answer)| *answer == Answer::Declined)
        {
            self.status = RematchStatus::Declined;
        } else if self
            .answers
            .iter()
            .all(|(_, answer)| *answer == Answer::Accepted)
        {
            self.status = RematchStatus::Ready;
        }
    }
}

/// A rematch as the room runs it: the vote, the plan of the new room,
/// and the new room's gathering of its racers.
impl RoomCore {
    /// A racer answers a rematch (the first to accept proposes it): every
    /// seat of the race votes (see [`rematch`]), and everyone in the room
    /// hears where it stands.
    pub(crate) fn rematch(&mut self, conn: ConnId, accept: bool) {
        let Some(index) = self.seat_index_of(conn) else {
            return self.error_to(conn, ErrorCode::NotAPlayer, "only racers answer a rematch");
        };
        let over = self.phase == Phase::Finished
            && self.race.as_ref().is_some_and(|race| race.result.is_some());
        if !over {
            return self.error_to(
                conn,
                ErrorCode::RaceNotStarted,
                "a rematch is offered once the race is over",
            );
        }
        let settled = self.vote.as_ref().is_none_or(|vote| {
            matches!(
                vote.status(),
                RematchStatus::Declined | RematchStatus::Expired
            )
        });
        if settled {
            if !accept {
                return;
            }
            let voters: Vec<(u8, Voter)> = self
                .seats
                .iter()
                .map(|seat| {
                    let voter = if seat.bot.is_some() {
                        Voter::Bot
                    } else if seat.status == PlayerStatus::Left
                        || (seat.conn.is_none() && seat.grace_until.is_none())
                    {
                        Voter::Gone
                    } else {
                        Voter::Person
                    };
                    (seat.seat, voter)
                })
                .collect();
            let vote = Vote::open(voters, self.now, REMATCH_WAIT_MS);
            // The room stays open while the vote is.
            if let (Some(deadline), Some(close_at)) = (vote.deadline(), self.close_at.as_mut()) {
                *close_at = (*close_at).max(deadline);
            }
            self.vote = Some(vote);
        }
        let seat = self.seats[index].seat;
        if !self.answer_rematch(seat, accept) && settled {
            self.tell_rematch();
        }
    }

    /// Records `seat`'s answer to an open vote and tells it; whether it
    /// changed anything.
    pub(crate) fn answer_rematch(&mut self, seat: u8, accept: bool) -> bool {
        let changed = self
            .vote
            .as_mut()
            .is_some_and(|vote| vote.answer(seat, accept));
        if changed {
            self.tell_rematch();
        }
        changed
    }

    /// Tells everyone in the room where the rematch stands; once every
    /// racer accepted, asks the shell to open its room.
    pub(crate) fn tell_rematch(&mut self) {
        let Some(offer) = self.vote.as_ref().map(|vote| vote.offer(self.now)) else {
            return;
        };
        let ready = offer.status == RematchStatus::Ready;
        self.emit(Audience::Everyone, |seq| ServerMessage::RematchOffer {
            seq,
            offer,
        });
        if ready && self.rematch_tokens.is_empty() {
            self.open_rematch();
        }
    }

    /// Every racer accepted: a token for each seat of the new room, and the
    /// plan of that room for the shell.
    pub(crate) fn open_rematch(&mut self) {
        let mut seats = Vec::with_capacity(self.seats.len());
        for index in 0..self.seats.len() {
            let token = self.new_secret(24);
            let seat = &self.seats[index];
            seats.push(RematchSeat {
                seat: seat.seat,
                name: seat.name.clone(),
                player: seat.player,
                bot: seat.bot,
                token: token_hash(&token),
            });
            self.rematch_tokens.push((seat.seat, token));
        }
        let plan = RematchPlan {
            game: self.params.game,
            options: self.params.options,
            series: self.series.as_ref().map(SeriesScore::for_rematch),
            seats,
        };
        tracing::info!("every racer accepted a rematch: its room opens");
        if let Some(close_at) = self.close_at.as_mut() {
            *close_at = (*close_at).max(self.now.saturating_add(REMATCH_OPEN_MS));
        }
        self.out(Output::OpenRematch(Box::new(plan)));
    }

    /// The rematch's room is open: each racer gets its code and the token
    /// of its seat there (a bot's seat the server takes itself).
    pub(crate) fn rematch_opened(&mut self, code: Option<Arc<str>>) {
        let tokens = std::mem::take(&mut self.rematch_tokens);
        let Some(code) = code else {
            let conns: Vec<ConnId> = self.seats.iter().filter_map(|seat| seat.conn).collect();
            for conn in conns {
                self.error_to(
                    conn,
                    ErrorCode::Internal,
                    "the rematch's room could not open",
                );
            }
            return;
        };
        for (seat, resume_token) in tokens {
            let is_bot = self
                .seats
                .iter()
                .any(|kept| kept.seat == seat && kept.bot.is_some());
            if is_bot {
                continue;
            }
            let code = code.to_string();
            self.emit(Audience::Seat(seat), |seq| ServerMessage::RematchReady {
                seq,
                code,
                resume_token,
            });
        }
    }

    /// A rematch's room begins its countdown once every seat is back (a
    /// seat whose player does not come back within its grace period is
    /// given up, and the others race without it).
    pub(crate) fn start_if_gathered(&mut self) {
        if self.gathering
            && self.phase == Phase::Lobby
            && !self.seats.is_empty()
            && self.seats.iter().all(|seat| seat.conn.is_some())
        {
            self.gathering = false;
            self.begin_start();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WAIT: u64 = 30_000;

    /// One step of a vote: at a time, a seat's answer (or none: the clock).
    type Step = (Millis, Option<(u8, bool)>);

    /// Opens a vote of `seats` at 0, plays `steps`, and checks the offer.
    fn check(seats: &[(u8, Voter)], steps: &[Step], expected: (RematchStatus, [&[u8]; 3], u64)) {
        let mut vote = Vote::open(seats.iter().copied(), 0, WAIT);
        let mut now = 0;
        for &(at, answer) in steps {
            now = at;
            vote.expire(now);
            if let Some((seat, accept)) = answer {
                vote.answer(seat, accept);
            }
        }
        let offer = vote.offer(now);
        let (status, [accepted, declined, waiting], expires_in_ms) = expected;
        assert_eq!(offer.status, status, "{steps:?}");
        assert_eq!(offer.accepted, accepted, "{steps:?}");
        assert_eq!(offer.declined, declined, "{steps:?}");
        assert_eq!(offer.waiting, waiting, "{steps:?}");
        assert_eq!(offer.expires_in_ms, expires_in_ms, "{steps:?}");
    }

    const TWO: &[(u8, Voter)] = &[(0, Voter::Person), (1, Voter::Person)];

    #[test]
    fn a_vote_is_ready_once_everyone_accepts() {
        check(TWO, &[], (RematchStatus::Open, [&[], &[], &[0, 1]], WAIT));
        check(
            TWO,
            &[(1_000, Some((0, true)))],
            (RematchStatus::Open, [&[0], &[], &[1]], WAIT - 1_000),
        );
        check(
            TWO,
            &[(1_000, Some((0, true))), (29_999, Some((1, true)))],
            (RematchStatus::Ready, [&[0, 1], &[], &[]], 0),
        );
    }

    #[test]
    fn one_decline_settles_it_and_nothing_changes_after() {
        check(
            TWO,
            &[(1_000, Some((1, false))), (2_000, Some((0, true)))],
            (RematchStatus::Declined, [&[], &[1], &[0]], 0),
        );
        check(
            TWO,
            &[
                (1_000, Some((0, true))),
                (2_000, Some((1, false))),
                (3_000, Some((1, true))),
            ],
            (RematchStatus::Declined, [&[0], &[1], &[]], 0),
        );
    }

    #[test]
    fn the_deadline_expires_a_vote_still_waiting() {
        check(
            TWO,
            &[(1_000, Some((0, true))), (WAIT, Some((1, true)))],
            (RematchStatus::Expired, [&[0], &[], &[1]], 0),
        );
    }

    #[test]
    fn bots_accept_at_once_and_the_gone_decline() {
        check(
            &[(0, Voter::Person), (1, Voter::Bot)],
            &[],
            (RematchStatus::Open, [&[1], &[], &[0]], WAIT),
        );
        check(
            &[(0, Voter::Person), (1, Voter::Bot)],
            &[(5, Some((0, true)))],
            (RematchStatus::Ready, [&[0, 1], &[], &[]], 0),
        );
        check(
            &[(0, Voter::Person), (2, Voter::Gone)],
            &[],
            (RematchStatus::Declined, [&[], &[2], &[0]], 0),
        );
    }

    #[test]
    fn a_seat_not_in_the_vote_changes_nothing() {
        let mut vote = Vote::open(TWO.iter().copied(), 0, WAIT);
        assert!(!vote.answer(5, false));
        assert!(vote.answer(0, true));
        assert!(!vote.answer(0, true));
        assert_eq!(vote.status(), RematchStatus::Open);
        assert_eq!(vote.deadline(), Some(WAIT));
    }
}
