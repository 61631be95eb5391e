//! The one deadline type of every transport: a request's timeout from its start, moved later by
//! progress when the request asked for it (SPEC 3.4 `resetTimeoutOnProgress`), never beyond
//! `maxTotalTimeout` from the start. Pure data on tokio's clock (so tests can pause time); the
//! stdio transport keeps them in its pending table, the HTTP transport wraps one per exchange.

use std::time::Duration;

use tokio::time::Instant;

/// Longest deadline honoured (about 24.8 days, like JavaScript timers); longer ones are clamped.
pub const MAX_TIMEOUT_MS: u64 = i32::MAX as u64;

/// How progress notifications move a request's deadline (SPEC 3.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProgressReset {
    /// `maxTotalTimeout`: the deadline never passes start + this.
    pub max_total_ms: Option<u64>,
}

/// See the module documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadline {
    started: Instant,
    timeout: Duration,
    reset: Option<ProgressReset>,
    at: Instant,
}

impl Deadline {
    /// A deadline `timeout_ms` after `now` (clamped to [`MAX_TIMEOUT_MS`]).
    pub fn new(now: Instant, timeout_ms: u64, reset: Option<ProgressReset>) -> Self {
        let timeout = Duration::from_millis(timeout_ms.min(MAX_TIMEOUT_MS));
        let mut d = Deadline {
            started: now,
            timeout,
            reset,
            at: now + timeout,
        };
        d.at = d.capped(d.at);
        d
    }

    /// When it passes.
    pub fn at(&self) -> Instant {
        self.at
    }

    /// Moves it (and the start its cap counts from) `by` later: time that does not count, such
    /// as an authorization step waiting for its user (SPEC 10.3).
    pub fn postpone(&mut self, by: Duration) {
        self.started += by;
        self.at += by;
    }

    fn cap(&self) -> Option<Instant> {
        let max = self.reset?.max_total_ms?;
        Some(self.started + Duration::from_millis(max.min(MAX_TIMEOUT_MS)))
    }

    fn capped(&self, at: Instant) -> Instant {
        self.cap().map_or(at, |cap| at.min(cap))
    }

    /// A progress notification arrived at `now`: with a reset rule, the deadline restarts from
    /// `now` (capped). Returns whether it moved.
    pub fn on_progress(&mut self, now: Instant) -> bool {
        if self.reset.is_none() {
            return false;
        }
        let next = self.capped(now + self.timeout);
        if next <= self.at {
            return false;
        }
        self.at = next;
        true
    }

    /// The deadline that passed, in milliseconds, for the error message: `maxTotalTimeout` when
    /// progress had pushed the deadline up to that cap, else the request timeout.
    pub fn reported_ms(&self) -> u64 {
        match (self.cap(), self.reset.and_then(|r| r.max_total_ms)) {
            (Some(cap), Some(max)) if self.at >= cap && self.timeout > Duration::ZERO => max,
            _ => self.timeout.as_millis() as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_restarts_up_to_max_total_and_reports_what_passed() {
        let ms = Duration::from_millis;
        let t0 = Instant::now();
        let mut d = Deadline::new(
            t0,
            100,
            Some(ProgressReset {
                max_total_ms: Some(250),
            }),
        );
        assert_eq!(d.at(), t0 + ms(100));
        assert!(d.on_progress(t0 + ms(80)));
        assert_eq!(d.at(), t0 + ms(180));
        assert!(!d.on_progress(t0 + ms(60)), "never earlier");
        assert!(d.on_progress(t0 + ms(170)));
        assert_eq!(d.at(), t0 + ms(250), "capped");
        assert_eq!(d.reported_ms(), 250);
        let mut plain = Deadline::new(t0, 100, None);
        assert!(!plain.on_progress(t0 + ms(50)));
        assert_eq!(plain.reported_ms(), 100);
        let mut uncapped = Deadline::new(t0, 100, Some(ProgressReset { max_total_ms: None }));
        assert!(uncapped.on_progress(t0 + ms(50)));
        assert_eq!((uncapped.at(), uncapped.reported_ms()), (t0 + ms(150), 100));
        let huge = Deadline::new(t0, u64::MAX, None);
        assert_eq!(huge.at(), t0 + ms(MAX_TIMEOUT_MS));
    }
}
