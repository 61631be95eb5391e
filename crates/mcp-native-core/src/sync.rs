//! The one place where lock poisoning is decided.
//!
//! A `Mutex` is poisoned when a thread panicked while holding it. Every lock in this crate (and
//! its binding) guards state that each critical section leaves whole at every point where it
//! could panic — maps updated by a single insert or remove, flags stored in one write — and the
//! binding catches every panic before it reaches the host (`MCP_INTERNAL`). So the policy is
//! the same everywhere: a poisoned lock is taken as it is, and the connection or manager behind
//! it goes on (or is closed by its own logic), instead of every later caller panicking too and a
//! single bug turning into a crash of the host process.

use std::sync::{Mutex, MutexGuard};

/// [`Mutex::lock`] and [`Mutex::get_mut`] with the crate's poisoning policy (see the module doc).
pub trait Locked<T: ?Sized> {
    /// The guard, poisoned or not.
    fn locked(&self) -> MutexGuard<'_, T>;
    /// The data, through an exclusive reference, poisoned or not.
    fn locked_mut(&mut self) -> &mut T;
}

impl<T: ?Sized> Locked<T> for Mutex<T> {
    fn locked(&self) -> MutexGuard<'_, T> {
        self.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn locked_mut(&mut self) -> &mut T {
        self.get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// `m.locked()` as a function, for call sites that read better so.
pub fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.locked()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poisoned_lock_is_taken_with_its_data() {
        let mut m = Mutex::new(vec![1]);
        let _ = std::thread::scope(|s| {
            s.spawn(|| {
                let mut g = m.lock().unwrap();
                g.push(2);
                panic!("poison it");
            })
            .join()
        });
        assert!(m.is_poisoned());
        assert_eq!(*m.locked(), [1, 2]);
        m.locked_mut().push(3);
        assert_eq!(*lock(&m), [1, 2, 3]);
    }
}
