//! Locking a `std::sync::Mutex` without letting one panic take the server down with it.

use std::sync::{Mutex, MutexGuard};

/// Locks `m`, taking the data even if another thread panicked while holding the lock.
///
/// The server's mutexes guard small maps and queues that are never held across an `.await` and
/// whose every update leaves them consistent at each step, so a panic elsewhere (one table's bug,
/// say) must not turn every later lock into a second panic: the guard is recovered from the
/// poison and used as it is. Use it for such data only.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
