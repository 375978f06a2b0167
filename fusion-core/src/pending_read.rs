//! A device-to-host copy queued now and waited for later: several small
//! read-backs of one kernel (check flags, reduction partials) then share one
//! round trip to the device instead of paying one each.

use crate::cl_type::ClType;
use crate::error::{ClResultExt, Result};
use crate::events::ClEvent;
use crate::pinned::PinnedSlot;
use crate::runtime::Runtime;

/// The host copy of a matrix that [`MatrixCl::read_later`](crate::MatrixCl::read_later)
/// queued; [`wait`](Self::wait) returns it.
///
/// ```
/// let a = clfuse_core::MatrixCl::from_slice(2, 1, &[1, 2])?;
/// let b = clfuse_core::MatrixCl::from_slice(1, 1, &[3.5])?;
/// let (ra, rb) = (a.read_later()?, b.read_later()?);
/// assert_eq!(ra.wait()?, vec![1, 2]);
/// assert_eq!(rb.wait()?, vec![3.5]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
#[derive(Debug)]
pub struct PendingRead<T: ClType> {
    /// Written by the device until `event` completes (unless `slot` is the
    /// destination); its heap block never moves while `self` lives.
    data: Vec<T>,
    /// Page-locked memory the device writes instead, copied into `data` by
    /// `wait`.
    slot: Option<PinnedSlot>,
    /// The copy, the runtime whose queue it is on, and whether that is the
    /// main queue even though the runtime has a transfer queue (a read
    /// waited for at once).
    event: Option<(&'static Runtime, ClEvent, bool)>,
}

impl<T: ClType> PendingRead<T> {
    pub(crate) fn new(
        data: Vec<T>,
        slot: Option<PinnedSlot>,
        event: Option<(&'static Runtime, ClEvent, bool)>,
    ) -> Self {
        PendingRead { data, slot, event }
    }

    /// After a failed wait the device may still write into the slot: it is
    /// never unmapped nor reused.
    fn abandon_slot(&mut self) {
        if let Some(slot) = self.slot.take() {
            std::mem::forget(slot);
        }
    }

    /// Waits for the copy and returns the column-major host data.
    pub fn wait(mut self) -> Result<Vec<T>> {
        if let Some((rt, event, on_main)) = self.event.take() {
            // A copy on the transfer queue was flushed when it was queued.
            if (on_main || rt.transfer_queue().is_none()) && !event.is_complete() {
                rt.queue().flush().call("clFlush")?;
            }
            if let Err(e) = event.wait() {
                self.abandon_slot();
                return Err(e);
            }
        }
        if let Some(slot) = self.slot.take() {
            let bytes = std::mem::size_of_val(self.data.as_slice());
            // SAFETY: the read into the slot has completed; the slot holds at
            // least `bytes` bytes and `data` exactly `bytes`; they do not overlap.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    slot.ptr(),
                    self.data.as_mut_ptr().cast::<u8>(),
                    bytes.min(slot.bytes()),
                );
            }
            crate::pinned::give(slot);
        }
        Ok(std::mem::take(&mut self.data))
    }
}

impl<T: ClType> Drop for PendingRead<T> {
    fn drop(&mut self) {
        // The device may still be writing into `data`: it must not be freed first.
        if let Some((_, event, _)) = self.event.take()
            && event.wait().is_err()
        {
            self.abandon_slot();
            return;
        }
        if let Some(slot) = self.slot.take() {
            crate::pinned::give(slot);
        }
    }
}
