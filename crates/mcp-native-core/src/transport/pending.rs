//! The pending-request table of one connection, and where each outcome goes ([`Reply`]).

use std::collections::{BTreeSet, HashMap};

use tokio::sync::oneshot;
use tokio::time::Instant;

use super::deadline::{Deadline, ProgressReset};
use super::{Event, EventSink, Outcome};
use crate::error::Error;

/// Where the outcome of a request goes: as an [`Event`] to the transport's sink (the JavaScript
/// binding: one batch, one wake-up), or to a channel that a Rust caller awaits.
#[derive(Debug, Default)]
pub enum Reply {
    /// [`Event::Response`] / [`Event::Failed`] through the sink.
    #[default]
    Event,
    /// The awaiting caller's channel.
    Channel(oneshot::Sender<Outcome>),
}

impl Reply {
    /// Hands `outcome` of request `id` over: pushed to `events` for the sink, or sent.
    pub fn deliver(self, id: u64, outcome: Outcome, events: &mut Vec<Event>) {
        match self {
            Reply::Event => events.push(outcome_event(id, outcome)),
            Reply::Channel(tx) => {
                let _ = tx.send(outcome);
            }
        }
    }

    /// Whether this outcome goes to the sink.
    pub fn is_event(&self) -> bool {
        matches!(self, Reply::Event)
    }
}

/// The event that reports `outcome` of request `id`.
pub fn outcome_event(id: u64, outcome: Outcome) -> Event {
    match outcome {
        Ok(result) => Event::Response { id, result },
        Err(error) => Event::Failed { id, error },
    }
}

/// The event that reports `outcome` of request `id` to `sink`, for an outcome that did not come
/// as the server's message (HTTP, a call of the Rust client): a result of the size the sink takes
/// unparsed ([`EventSink::raw_answers_from`]) crosses as an [`Event::RawAnswer`] of
/// `{"result":<result>}` (the result was checked as JSON when the reply was read; one copy).
pub fn outcome_event_for<S: EventSink + ?Sized>(sink: &S, id: u64, outcome: Outcome) -> Event {
    match outcome {
        Ok(Some(result))
            if sink
                .raw_answers_from()
                .is_some_and(|n| result.get().len() >= n) =>
        {
            const HEAD: &[u8] = b"{\"result\":";
            let text = result.get().as_bytes();
            let mut message = Vec::with_capacity(HEAD.len() + text.len() + 1);
            message.extend_from_slice(HEAD);
            message.extend_from_slice(text);
            message.push(b'}');
            Event::RawAnswer {
                id,
                message: message.into(),
            }
        }
        outcome => outcome_event(id, outcome),
    }
}

/// One pending request.
#[derive(Debug)]
pub struct Entry {
    /// When it times out.
    pub deadline: Deadline,
    /// Whether giving up on it tells the server (`notifications/cancelled`).
    pub cancellable: bool,
    /// Where its outcome goes.
    pub reply: Reply,
}

/// The pending requests of one connection: entries by id plus their deadlines in order, so that
/// the earliest deadline is known without a scan. Each settlement removes the entry and its
/// deadline together, exactly once. Pure data: the transport decides when to look at the clock.
#[derive(Debug, Default)]
pub struct Pending {
    entries: HashMap<u64, Entry>,
    deadlines: BTreeSet<(Instant, u64)>,
}

impl Pending {
    /// Registers request `id`; returns its deadline.
    pub fn insert(
        &mut self,
        id: u64,
        timeout_ms: u64,
        now: Instant,
        progress: Option<ProgressReset>,
        cancellable: bool,
        reply: Reply,
    ) -> Instant {
        let deadline = Deadline::new(now, timeout_ms, progress);
        let at = deadline.at();
        self.deadlines.insert((at, id));
        self.entries.insert(
            id,
            Entry {
                deadline,
                cancellable,
                reply,
            },
        );
        at
    }

    /// A progress notification for `id` at `now`: with a reset rule, its deadline restarts.
    /// Returns whether it moved.
    pub fn progress(&mut self, id: u64, now: Instant) -> bool {
        let Some(entry) = self.entries.get_mut(&id) else {
            return false;
        };
        let before = entry.deadline.at();
        if !entry.deadline.on_progress(now) {
            return false;
        }
        self.deadlines.remove(&(before, id));
        self.deadlines.insert((entry.deadline.at(), id));
        true
    }

    /// Whether `id` is still pending.
    pub fn contains(&self, id: u64) -> bool {
        self.entries.contains_key(&id)
    }

    /// Whether `id` is pending and its outcome goes to the sink ([`Reply::Event`]).
    pub fn goes_to_sink(&self, id: u64) -> bool {
        self.entries.get(&id).is_some_and(|e| e.reply.is_event())
    }

    /// Removes `id` and its deadline; `None` if it was not pending (already settled).
    pub fn settle(&mut self, id: u64) -> Option<Entry> {
        let entry = self.entries.remove(&id)?;
        self.deadlines.remove(&(entry.deadline.at(), id));
        Some(entry)
    }

    /// The earliest deadline of all pending requests.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.deadlines.first().map(|(d, _)| *d)
    }

    /// Removes and returns every request whose deadline is at or before `now`, earliest first.
    pub fn expire(&mut self, now: Instant) -> Vec<(u64, Entry)> {
        let mut out = Vec::new();
        while let Some(&(deadline, id)) = self.deadlines.first() {
            if deadline > now {
                break;
            }
            self.deadlines.pop_first();
            if let Some(entry) = self.entries.remove(&id) {
                out.push((id, entry));
            }
        }
        out
    }

    /// Number of pending requests.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Removes every entry (the connection ended): awaiting callers get `reason`; outcomes for
    /// the sink are left to the [`Event::Closed`] that follows, which carries the same reason.
    pub fn close_all(&mut self, reason: &Error) {
        self.deadlines.clear();
        for (_, entry) in self.entries.drain() {
            if let Reply::Channel(tx) = entry.reply {
                let _ = tx.send(Err(reason.clone()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn deadlines_expire_once_in_order_and_settled_requests_never_expire() {
        let ms = Duration::from_millis;
        let mut p = Pending::default();
        let t0 = Instant::now();
        p.insert(1, 50, t0, None, true, Reply::Event);
        p.insert(2, 100, t0, None, true, Reply::Event);
        p.insert(3, 10, t0, None, true, Reply::Event);
        assert_eq!(p.next_deadline(), Some(t0 + ms(10)));
        assert!(p.settle(3).is_some());
        assert!(p.settle(3).is_none());
        assert_eq!(p.next_deadline(), Some(t0 + ms(50)));
        assert!(p.expire(t0 + ms(49)).is_empty());
        let gone: Vec<u64> = p
            .expire(t0 + ms(100))
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        assert_eq!(gone, vec![1, 2]);
        assert!(p.is_empty() && p.next_deadline().is_none());
        p.insert(4, 0, t0, None, true, Reply::Event);
        assert_eq!(p.expire(t0).len(), 1);
    }

    #[test]
    fn progress_moves_the_ordered_deadline() {
        let ms = Duration::from_millis;
        let mut p = Pending::default();
        let t0 = Instant::now();
        let reset = Some(ProgressReset {
            max_total_ms: Some(250),
        });
        p.insert(1, 100, t0, reset, true, Reply::Event);
        p.insert(2, 100, t0, None, true, Reply::Event);
        assert!(p.progress(1, t0 + ms(80)));
        assert!(!p.progress(2, t0 + ms(80)), "no reset rule: no change");
        assert_eq!(p.next_deadline(), Some(t0 + ms(100)));
        assert!(p.expire(t0 + ms(179)).iter().all(|(id, _)| *id == 2));
        assert!(p.progress(1, t0 + ms(170)));
        let (id, e) = p.expire(t0 + ms(250)).pop().unwrap();
        assert_eq!((id, e.deadline.reported_ms()), (1, 250));
    }

    #[tokio::test]
    async fn outcomes_go_to_the_channel_or_the_sink_and_closing_tells_every_waiter() {
        let t0 = Instant::now();
        let mut p = Pending::default();
        let (tx, rx) = oneshot::channel();
        let (tx2, rx2) = oneshot::channel();
        p.insert(1, 100, t0, None, true, Reply::Channel(tx));
        p.insert(2, 100, t0, None, true, Reply::Event);
        p.insert(3, 100, t0, None, true, Reply::Channel(tx2));
        let mut events = Vec::new();
        p.settle(1).unwrap().reply.deliver(1, Ok(None), &mut events);
        p.settle(2).unwrap().reply.deliver(2, Ok(None), &mut events);
        assert!(matches!(events[..], [Event::Response { id: 2, .. }]));
        assert!(matches!(rx.await, Ok(Ok(None))));
        p.close_all(&Error::closed());
        assert!(p.is_empty());
        assert_eq!(
            rx2.await.unwrap().unwrap_err().to_string(),
            "Transport closed"
        );
    }
}
