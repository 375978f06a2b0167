//! Read-backs queued together after one kernel (its checks' flags, its
//! partial sums). On a device with a transfer queue each read must wait for
//! the main queue's commands (through a marker when that queue records no
//! events), and a queue must be flushed before another queue waits on it:
//! done per read, that is a marker and two flushes each. A batch does it
//! once for all of its reads. Nothing may be queued on the main queue while
//! a batch is open (the reads would not wait for it).

use crate::error::{ClResultExt, Result};
use crate::events::ClEvent;
use crate::runtime::Runtime;
use std::cell::RefCell;

/// Several [`MatrixCl::read_later_in`](crate::MatrixCl::read_later_in)
/// reads that share one wait for the main queue and one flush of each
/// queue; [`finish`](Self::finish) submits them.
///
/// ```
/// use clfuse_core::{MatrixCl, ReadBatch};
/// let (a, b) = (MatrixCl::from_slice(1, 1, &[1])?, MatrixCl::from_slice(1, 1, &[2])?);
/// let batch = ReadBatch::new();
/// let (ra, rb) = (a.read_later_in(&batch)?, b.read_later_in(&batch)?);
/// batch.finish()?;
/// assert_eq!((ra.wait()?, rb.wait()?), (vec![1], vec![2]));
/// # Ok::<(), clfuse_core::Error>(())
/// ```
#[derive(Debug, Default)]
pub struct ReadBatch {
    state: RefCell<Option<Shared>>,
}

/// What the batch's reads on one device share.
#[derive(Debug)]
struct Shared {
    rt: &'static Runtime,
    /// What each read waits for besides its matrix's events: the marker
    /// behind the main queue's commands (none when that queue records
    /// events).
    marker: Option<ClEvent>,
    /// A read was queued on the transfer queue since its last flush.
    transfer_unflushed: bool,
}

impl ReadBatch {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether a read on `rt` can share this batch (its reads are all on
    /// one device, the first one's).
    pub(crate) fn serves(&self, rt: &'static Runtime) -> bool {
        self.state
            .borrow()
            .as_ref()
            .is_none_or(|s| std::ptr::eq(s.rt, rt))
    }

    /// For a read on `rt`'s transfer queue: the event it waits for behind
    /// the main queue's commands, queued and the main queue flushed on the
    /// batch's first read only.
    pub(crate) fn behind_main_queue(&self, rt: &'static Runtime) -> Result<Option<ClEvent>> {
        let mut state = self.state.borrow_mut();
        if let Some(shared) = state.as_ref() {
            return Ok(shared.marker.clone());
        }
        let marker = if rt.tracks_events() {
            None
        } else {
            // SAFETY: an empty wait list; the marker's event is released
            // when the batch and the reads holding it drop.
            let marker = unsafe { rt.queue().enqueue_marker_with_wait_list(&[]) }
                .call("clEnqueueMarkerWithWaitList")?;
            Some(ClEvent::new(marker))
        };
        rt.queue().flush().call("clFlush")?;
        *state = Some(Shared {
            rt,
            marker: marker.clone(),
            transfer_unflushed: false,
        });
        Ok(marker)
    }

    /// Notes a read queued on the transfer queue, to be flushed by
    /// [`finish`](Self::finish).
    pub(crate) fn transfer_queued(&self) {
        if let Some(shared) = self.state.borrow_mut().as_mut() {
            shared.transfer_unflushed = true;
        }
    }

    /// Submits the batch's reads (flushes the transfer queue), so that
    /// other queues may wait for them.
    pub fn finish(self) -> Result<()> {
        self.flush()
    }

    fn flush(&self) -> Result<()> {
        if let Some(shared) = self.state.borrow_mut().as_mut()
            && std::mem::take(&mut shared.transfer_unflushed)
            && let Some(transfer) = shared.rt.transfer_queue()
        {
            transfer.flush().call("clFlush")?;
        }
        Ok(())
    }
}

impl Drop for ReadBatch {
    fn drop(&mut self) {
        // Unfinished (an error on the way): the reads are still submitted.
        let _ = self.flush();
    }
}
