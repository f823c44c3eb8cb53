//! Locks that survive a panic: the crate's critical sections replace whole
//! values, so a lock left poisoned by a panicking thread still guards
//! consistent data and is taken as it is.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `mutex`, taking the guard even when another thread panicked while
/// holding it.
pub(crate) fn lock<T: ?Sized>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
