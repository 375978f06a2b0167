//! Read and write event lists of a device buffer (paper §2.3).
//!
//! A command that reads a buffer waits for its pending writes; a command that
//! writes waits for its pending reads and writes; a host read waits for the
//! writes. Completed events are pruned so that a matrix that is only ever
//! read (data) does not accumulate events forever.
//!
//! Gathering a command's wait list, enqueueing it and recording its event are
//! one step with respect to other threads (`Runtime::ordered`): otherwise a
//! read could gather the write list just before another thread records a
//! write, run beside that write on an out-of-order queue and return a mix of
//! the old and new contents. The lock is the device's own: buffers never
//! cross contexts, so two devices' launches never wait for each other.

use crate::error::{ClResultExt, Result};
use opencl3::event::Event;
use opencl3::types::cl_event;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// An OpenCL event that can be cloned cheaply: clones share one driver
/// reference (a count on the host, no driver call per clone; a buffer's
/// event lists clone every launch's event).
#[derive(Debug, Clone)]
pub struct ClEvent(Option<Arc<Shared>>);

/// The driver's event, and whether it was seen complete (a finished
/// command stays finished: the driver is asked once).
#[derive(Debug)]
struct Shared {
    event: Event,
    done: AtomicBool,
}

impl ClEvent {
    /// Wraps an event returned by an enqueue call.
    pub fn new(event: Event) -> Self {
        ClEvent(Some(Arc::new(Shared {
            event,
            done: AtomicBool::new(false),
        })))
    }

    /// The raw handle (null for an empty event), valid while `self` lives.
    pub fn raw(&self) -> cl_event {
        self.0
            .as_deref()
            .map_or(std::ptr::null_mut(), |shared| shared.event.get())
    }

    /// Blocks until the command has finished.
    pub fn wait(&self) -> Result<()> {
        match &self.0 {
            Some(shared) => shared.event.wait().call("clWaitForEvents"),
            None => Ok(()),
        }
    }

    /// Whether the command has finished (or failed, which also ends it).
    pub fn is_complete(&self) -> bool {
        let Some(shared) = &self.0 else { return true };
        if shared.done.load(Ordering::Relaxed) {
            return true;
        }
        // CL_COMPLETE is 0; errors are negative; both mean nothing is pending.
        let done = shared
            .event
            .command_execution_status()
            .map_or(true, |s| s.0 <= 0);
        if done {
            shared.done.store(true, Ordering::Relaxed);
        }
        done
    }

    /// Device execution time in nanoseconds (needs a profiling queue).
    pub fn elapsed_ns(&self) -> Result<u64> {
        Ok(self
            .profiling_interval()?
            .map_or(0, |(start, end)| end.saturating_sub(start)))
    }

    /// When the host queued the command, and when the device started and
    /// ended it (ns, the device's clock) on a profiling queue, after waiting
    /// for it; `None` for an empty event.
    pub fn profiling_times(&self) -> Result<Option<[u64; 3]>> {
        let Some(shared) = &self.0 else {
            return Ok(None);
        };
        let e = &shared.event;
        e.wait().call("clWaitForEvents")?;
        let queued = e
            .profiling_command_queued()
            .call("clGetEventProfilingInfo")?;
        let start = e
            .profiling_command_start()
            .call("clGetEventProfilingInfo")?;
        let end = e.profiling_command_end().call("clGetEventProfilingInfo")?;
        Ok(Some([queued, start, end]))
    }

    /// Start and end timestamps (ns) of the command on a profiling queue,
    /// after waiting for it; `None` for an empty event.
    pub fn profiling_interval(&self) -> Result<Option<(u64, u64)>> {
        let Some(shared) = &self.0 else {
            return Ok(None);
        };
        let e = &shared.event;
        e.wait().call("clWaitForEvents")?;
        let start = e
            .profiling_command_start()
            .call("clGetEventProfilingInfo")?;
        let end = e.profiling_command_end().call("clGetEventProfilingInfo")?;
        Ok(Some((start, end)))
    }
}

/// Prune completed read events once the list holds this many; after a prune
/// the limit becomes twice what is still pending, so pushing stays O(1)
/// amortised even when the device lags far behind the host.
const PRUNE_AT: usize = 16;

#[derive(Debug)]
struct Lists {
    reads: Vec<ClEvent>,
    writes: Vec<ClEvent>,
    prune_at: usize,
}

impl Default for Lists {
    fn default() -> Self {
        Lists {
            reads: Vec::new(),
            writes: Vec::new(),
            prune_at: PRUNE_AT,
        }
    }
}

/// How a command uses a buffer: which of its pending events it waits for,
/// and which list its own event joins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Only reads it: waits for its pending writes.
    Read,
    /// Only writes it: waits for its pending reads and writes.
    Write,
    /// Reads and writes it.
    ReadWrite,
}

/// The pending read and write events of one buffer.
///
/// ```
/// let events = clfuse_core::EventLists::default();
/// assert_eq!(events.pending(), (0, 0));
/// ```
#[derive(Default, Debug)]
pub struct EventLists {
    lists: Mutex<Lists>,
    /// Commands that wrote the buffer so far (see [`write_count`](Self::write_count)).
    writes: AtomicU64,
}

impl EventLists {
    fn lock(&self) -> std::sync::MutexGuard<'_, Lists> {
        // A poisoned lock only means another thread panicked mid-push; the
        // lists are still valid.
        self.lists.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Appends what a command reading this buffer must wait for: its
    /// pending writes. Writes found complete leave the list (a finished
    /// command orders nothing; each event a command waits for costs the
    /// driver work at every launch).
    pub fn wait_list_for_read(&self, out: &mut Vec<ClEvent>) {
        let mut lists = self.lock();
        lists.writes.retain(|e| !e.is_complete());
        out.extend(lists.writes.iter().cloned());
    }

    /// Appends what a command writing this buffer must wait for: its
    /// pending reads and writes (complete ones leave the lists).
    pub fn wait_list_for_write(&self, out: &mut Vec<ClEvent>) {
        let mut lists = self.lock();
        lists.reads.retain(|e| !e.is_complete());
        lists.writes.retain(|e| !e.is_complete());
        out.extend(lists.reads.iter().chain(lists.writes.iter()).cloned());
    }

    /// Records a command that reads this buffer.
    pub fn add_read(&self, event: ClEvent) {
        let mut lists = self.lock();
        if lists.reads.len() >= lists.prune_at {
            lists.reads.retain(|e| !e.is_complete());
            lists.prune_at = (2 * lists.reads.len()).max(PRUNE_AT);
        }
        lists.reads.push(event);
    }

    /// Records a command that writes this buffer. It waited for every pending
    /// read and write, so it alone now stands for all of them.
    pub fn add_write(&self, event: ClEvent) {
        self.note_write();
        self.set_write(event);
    }

    /// [`add_write`](Self::add_write) for a write already counted (a
    /// launch that waited in a sweep was counted when it joined).
    pub(crate) fn set_write(&self, event: ClEvent) {
        let mut lists = self.lock();
        lists.reads.clear();
        lists.writes.clear();
        lists.writes.push(event);
    }

    /// Counts a command that writes this buffer ([`add_write`](Self::add_write)
    /// does; a launch on an in-order queue, which records no event, calls
    /// this alone).
    pub fn note_write(&self) {
        self.writes.fetch_add(1, Ordering::Relaxed);
    }

    /// How many commands have written this buffer since it was created
    /// (or since the pool last handed it out): a reader that keeps a handle
    /// for later compares two counts to learn whether the contents changed.
    ///
    /// ```
    /// let m = clfuse_core::MatrixCl::from_slice(2, 1, &[1.0f32, 2.0])?;
    /// let before = m.events().write_count();
    /// m.fill(0.0)?;
    /// assert_ne!(m.events().write_count(), before);
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn write_count(&self) -> u64 {
        self.writes.load(Ordering::Relaxed)
    }

    /// Blocks until every pending write has finished.
    pub fn wait_for_writes(&self) -> Result<()> {
        let writes: Vec<ClEvent> = self.lock().writes.to_vec();
        writes.iter().try_for_each(ClEvent::wait)
    }

    /// Blocks until every pending read and write has finished.
    pub fn wait_for_all(&self) -> Result<()> {
        let mut all = Vec::new();
        self.wait_list_for_write(&mut all);
        all.iter().try_for_each(ClEvent::wait)
    }

    /// Number of pending (read, write) events held.
    pub fn pending(&self) -> (usize, usize) {
        let lists = self.lock();
        (lists.reads.len(), lists.writes.len())
    }
}

/// Raw handles of `events`, each once, for an enqueue call's wait list
/// (a kernel reading two buffers that one command wrote waits for it once).
pub fn raw_handles(events: &[ClEvent]) -> Vec<cl_event> {
    let mut handles: Vec<cl_event> = events
        .iter()
        .map(ClEvent::raw)
        .filter(|h| !h.is_null())
        .collect();
    handles.sort_unstable();
    handles.dedup();
    handles
}

/// What owns a buffer argument: its event lists, and a way to keep the
/// buffer alive past the borrow (a launch that waits in a sweep holds it).
pub trait BufferOwner: Send + Sync {
    /// The buffer's pending read and write events.
    fn events(&self) -> &EventLists;
    /// A handle that keeps the buffer (and its event lists) alive.
    fn retain(&self) -> std::sync::Arc<dyn BufferOwner>;
}

impl std::fmt::Debug for dyn BufferOwner + '_ {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BufferOwner")
    }
}
