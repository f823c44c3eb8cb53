//! Retry policy: how many attempts, how long to wait between them, and which
//! error classes count. The executor retries only idempotent tools.

use std::hash::BuildHasher;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::ErrorClass;

/// How the delay between attempts is randomised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Jitter {
    /// Exactly the computed backoff.
    None,
    /// A uniformly random delay between zero and the computed backoff
    /// ("full jitter"). The default: it spreads retries of many calls apart.
    #[default]
    Full,
    /// Half the computed backoff plus a random part of the other half.
    Equal,
}

/// When and how a failed call is tried again.
///
/// `max_attempts` counts every attempt, the first included: `1` (the default)
/// means no retry.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RetryPolicy {
    /// Total attempts, the first included (at least 1).
    pub max_attempts: u32,
    /// The delay before the second attempt.
    pub initial_backoff: Duration,
    /// The longest delay between two attempts.
    pub max_backoff: Duration,
    /// How the delay is randomised.
    pub jitter: Jitter,
    /// The error classes that may be retried (by default only
    /// [`ErrorClass::Retry`]).
    pub retry_on: Vec<ErrorClass>,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy::none()
    }
}

impl RetryPolicy {
    /// No retry: one attempt.
    pub fn none() -> Self {
        RetryPolicy {
            max_attempts: 1,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(10),
            jitter: Jitter::Full,
            retry_on: vec![ErrorClass::Retry],
        }
    }

    /// Up to `max_attempts` attempts (clamped to at least 1) with exponential
    /// backoff starting at `initial_backoff`.
    pub fn attempts(max_attempts: u32, initial_backoff: Duration) -> Self {
        RetryPolicy {
            max_attempts: max_attempts.max(1),
            initial_backoff,
            max_backoff: initial_backoff.saturating_mul(64).max(initial_backoff),
            ..RetryPolicy::none()
        }
    }

    setters! {
        /// Sets the jitter.
        with_jitter(jitter: Jitter) => jitter = jitter;
        /// Sets the longest delay.
        with_max_backoff(max_backoff: Duration) => max_backoff = max_backoff;
        /// Sets the retryable classes.
        with_retry_on(classes: impl IntoIterator<Item = ErrorClass>) =>
            retry_on = classes.into_iter().collect();
    }

    /// True when the policy allows more than one attempt.
    pub fn retries(&self) -> bool {
        self.max_attempts > 1
    }

    /// True when an error of `class` may be retried under this policy.
    pub fn retries_class(&self, class: ErrorClass) -> bool {
        self.retry_on.contains(&class)
    }

    /// The exponential backoff before attempt `next_attempt` (2 for the first
    /// retry), before jitter, capped at `max_backoff`.
    pub fn base_delay(&self, next_attempt: u32) -> Duration {
        let exponent = next_attempt.saturating_sub(2).min(31);
        self.initial_backoff
            .saturating_mul(1u32 << exponent)
            .min(self.max_backoff)
    }

    /// The delay before attempt `next_attempt`, jitter applied.
    pub fn delay(&self, next_attempt: u32) -> Duration {
        let base = self.base_delay(next_attempt);
        let random = || {
            let r = std::collections::hash_map::RandomState::new().hash_one(next_attempt);
            // A fraction in [0, 1).
            (r >> 11) as f64 / (1u64 << 53) as f64
        };
        match self.jitter {
            Jitter::None => base,
            Jitter::Full => base.mul_f64(random()),
            Jitter::Equal => base / 2 + (base / 2).mul_f64(random()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_is_capped() {
        let p = RetryPolicy::attempts(6, Duration::from_millis(100))
            .with_max_backoff(Duration::from_millis(350))
            .with_jitter(Jitter::None);
        assert_eq!(p.delay(2), Duration::from_millis(100));
        assert_eq!(p.delay(3), Duration::from_millis(200));
        assert_eq!(p.delay(4), Duration::from_millis(350));
    }

    #[test]
    fn full_jitter_stays_within_the_backoff() {
        let p = RetryPolicy::attempts(3, Duration::from_millis(100));
        for _ in 0..100 {
            assert!(p.delay(2) <= Duration::from_millis(100));
        }
    }
}
