//! Which of a device's compute queues this thread's commands go to: the
//! main one, or the side queue while [`Runtime::on_side_queue`] runs its
//! work (a thread-local choice, so other threads keep the main queue).
//!
//! [`Runtime::on_side_queue`]: crate::Runtime::on_side_queue

use std::cell::Cell;

thread_local! {
    /// The slot of the runtime whose side queue takes this thread's commands.
    static SIDE: Cell<Option<usize>> = const { Cell::new(None) };
}

/// Whether this thread's commands for the runtime in `slot` go to its side queue.
pub(crate) fn on_side(slot: usize) -> bool {
    SIDE.with(Cell::get) == Some(slot)
}

/// Sends this thread's commands for the runtime in `slot` to its side
/// queue until dropped (also on error), then restores the previous choice.
pub(crate) struct ToSide {
    previous: Option<usize>,
}

impl ToSide {
    pub(crate) fn enter(slot: usize) -> Self {
        ToSide {
            previous: SIDE.with(|s| s.replace(Some(slot))),
        }
    }
}

impl Drop for ToSide {
    fn drop(&mut self) {
        SIDE.with(|s| s.set(self.previous));
    }
}
