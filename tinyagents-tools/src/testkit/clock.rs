//! [`ManualClock`]: a time source that moves only when a test moves it.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::runtime::TimeSource;
use crate::util::sync::lock;

/// A time source that stands still until the test advances it: give it to a
/// run ([`RunContextBuilder::time_source`](crate::runtime::RunContextBuilder::time_source)
/// or [`ToolHarnessBuilder::time_source`](super::ToolHarnessBuilder::time_source)),
/// keep a clone, and every call admitted until the next
/// [`advance`](Self::advance) or [`set`](Self::set) is given the same time.
/// Clones share one time.
///
/// ```
/// use std::time::{Duration, UNIX_EPOCH};
/// use tinyagents_tools::runtime::TimeSource;
/// use tinyagents_tools::testkit::ManualClock;
///
/// let clock = ManualClock::at_unix_ms(1_700_000_000_000);
/// let shared = clock.clone();
/// assert_eq!(shared.now(), clock.now()); // it stands still
/// clock.advance(Duration::from_secs(90));
/// assert_eq!(shared.now(), UNIX_EPOCH + Duration::from_millis(1_700_000_090_000));
/// ```
#[derive(Debug, Clone)]
pub struct ManualClock {
    now: Arc<Mutex<SystemTime>>,
}

impl ManualClock {
    /// A clock standing at `start`.
    pub fn new(start: SystemTime) -> Self {
        ManualClock {
            now: Arc::new(Mutex::new(start)),
        }
    }

    /// A clock standing at `ms` milliseconds after the Unix epoch.
    pub fn at_unix_ms(ms: u64) -> Self {
        ManualClock::new(UNIX_EPOCH + Duration::from_millis(ms))
    }

    /// Moves the clock `by` forward.
    pub fn advance(&self, by: Duration) {
        let mut now = lock(&self.now);
        *now += by;
    }

    /// Puts the clock at `to` (backwards too).
    pub fn set(&self, to: SystemTime) {
        *lock(&self.now) = to;
    }
}

impl Default for ManualClock {
    /// A clock standing at the Unix epoch.
    fn default() -> Self {
        ManualClock::new(UNIX_EPOCH)
    }
}

impl TimeSource for ManualClock {
    fn now(&self) -> SystemTime {
        *lock(&self.now)
    }
}
