//! The wall clock as milliseconds since the Unix epoch: the unit of every
//! time a task, a task store and a sealed request state keep.

use std::time::SystemTime;

/// Now, in milliseconds since the Unix epoch (0 before it).
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}
