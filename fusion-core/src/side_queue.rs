//! A second compute queue, for work that may overlap the main queue's.
//!
//! A blocked factorization is a chain of small dependent launches (its
//! panels) beside large products that the next panel does not need yet.
//! On one in-order queue the chain waits for every product; work queued
//! through [`Runtime::on_side_queue`] runs on a queue of its own instead,
//! after everything the main queue held when it was queued, and the main
//! queue waits for it only where [`SideWork::join`] says so.
//!
//! While the closure runs, this thread's commands for that device (kernel
//! launches, fills, copies) go to the side queue. Where the runtime tracks
//! events (out-of-order queues, PoCL) buffers order both queues' commands
//! as they order one queue's; on an in-order queue without tracking the
//! fork and the join are the only ordering, so the caller must not let the
//! main queue touch what the side work writes before the join.

use crate::error::{ClResultExt, Result};
use crate::events::ClEvent;
use crate::queue_choice::{ToSide, on_side};
use crate::runtime::Runtime;

/// Work queued on a runtime's side queue that the main queue has not yet
/// waited for. [`join`](Self::join) makes the main queue's later commands
/// wait for it; dropping it joins too, so no side work outlives its owner
/// unordered.
#[must_use = "the main queue waits for side work only once it is joined"]
#[derive(Debug)]
pub struct SideWork {
    runtime: &'static Runtime,
    /// A marker behind the side work (`None`: the work ran on the main queue).
    done: Option<ClEvent>,
}

impl SideWork {
    /// Makes every command queued on the main queue from now on wait for
    /// the side work.
    ///
    /// ```
    /// use clfuse_core::{MatrixCl, Runtime};
    /// let rt = Runtime::get()?;
    /// let m = MatrixCl::<f64>::zeros(4, 4)?;
    /// let side = rt.on_side_queue(|| m.fill(2.0))?;
    /// side.join()?;
    /// assert_eq!(m.to_vec()?, vec![2.0; 16]);
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn join(mut self) -> Result<()> {
        self.wait_on_main()
    }

    fn wait_on_main(&mut self) -> Result<()> {
        let Some(done) = self.done.take() else {
            return Ok(());
        };
        // SAFETY: the wait list is one live event of this runtime's context.
        let barrier = unsafe {
            self.runtime
                .main_queue()
                .enqueue_barrier_with_wait_list(&[done.raw()])
        }
        .call("clEnqueueBarrierWithWaitList")?;
        drop(ClEvent::new(barrier));
        Ok(())
    }
}

impl Drop for SideWork {
    fn drop(&mut self) {
        // Nothing to report an error to here; `join` reports it.
        let _ = self.wait_on_main();
    }
}

impl Runtime {
    /// Runs `work`, which queues commands, with this thread's commands for
    /// this device going to its second compute queue, behind everything
    /// queued on the main queue so far. Returns the work to
    /// [`join`](SideWork::join) where the main queue needs its results.
    /// Called again inside `work`, it runs the inner work on the side
    /// queue in order (an inner join waits for nothing).
    ///
    /// The main queue may meanwhile run commands that neither read nor
    /// write what `work` writes, and write nothing `work` reads: on an
    /// in-order queue without event tracking nothing else orders them.
    ///
    /// ```
    /// use clfuse_core::{MatrixCl, Runtime};
    /// let rt = Runtime::get()?;
    /// let (a, b) = (MatrixCl::<f32>::zeros(3, 1)?, MatrixCl::<f32>::zeros(3, 1)?);
    /// let side = rt.on_side_queue(|| a.fill(1.0))?;
    /// b.fill(2.0)?; // may run while `a` is filled
    /// side.join()?;
    /// assert_eq!((a.to_vec()?, b.to_vec()?), (vec![1.0; 3], vec![2.0; 3]));
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn on_side_queue(&'static self, work: impl FnOnce() -> Result<()>) -> Result<SideWork> {
        if on_side(self.slot()) {
            work()?;
            return Ok(SideWork {
                runtime: self,
                done: None,
            });
        }
        let side = self.side_queue()?;
        // Held launches run first, on the main queue, where the fork
        // below orders them before the side work.
        self.launch_held()?;
        // SAFETY: an empty wait list; markers and barriers take no buffers.
        let fork = unsafe { self.main_queue().enqueue_marker_with_wait_list(&[]) }
            .call("clEnqueueMarkerWithWaitList")?;
        let fork = ClEvent::new(fork);
        // SAFETY: the wait list is one live event of this runtime's context.
        let wait = unsafe { side.enqueue_barrier_with_wait_list(&[fork.raw()]) }
            .call("clEnqueueBarrierWithWaitList")?;
        drop(ClEvent::new(wait));
        let outcome = {
            let _to_side = ToSide::enter(self.slot());
            // What `work` held back runs with it, on the side queue.
            work().and_then(|()| self.launch_held())
        };
        // SAFETY: as for the fork's marker.
        let done = match unsafe { side.enqueue_marker_with_wait_list(&[]) }
            .call("clEnqueueMarkerWithWaitList")
        {
            Ok(done) => done,
            Err(error) => {
                // Without a marker to join, the side work must end before
                // the main queue goes on.
                let _ = side.finish();
                return Err(outcome.err().unwrap_or(error));
            }
        };
        let side_work = SideWork {
            runtime: self,
            done: Some(ClEvent::new(done)),
        };
        side.flush().call("clFlush")?;
        match outcome {
            Ok(()) => Ok(side_work),
            Err(error) => {
                side_work.join()?;
                Err(error)
            }
        }
    }
}
