//! Lanes: queues of one device beside its main queue, one per thread that
//! asks for one, so that independent work (a sampler's chains) runs side by
//! side instead of in one line.
//!
//! On a single in-order queue, every thread's commands run one after the
//! other: four chains of a small model, each a few short kernels and a
//! read-back per gradient, take four times as long as one. A thread that
//! enters a lane ([`Runtime::enter_lane`](crate::Runtime::enter_lane))
//! queues its commands on a queue of its own, which the device runs beside
//! the others.
//!
//! Commands on different queues are ordered only by events, so once the
//! first lane opens, every command of the device records its event on the
//! buffers it uses ([`EventLists`](crate::EventLists)), as on an
//! out-of-order queue: a kernel on one lane that reads a matrix another
//! lane wrote waits for that write. A new lane first waits for everything
//! queued before it opened (commands that recorded no events), and every
//! command is flushed as soon as it is queued, since OpenCL lets a queue
//! wait for another queue's events only once they were flushed.

use crate::events::ClEvent;
use opencl3::command_queue::CommandQueue;
use std::cell::Cell;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Queues per device, the main queue (lane 0) included. Threads beyond
/// `MAX_LANES - 1` share the least used lanes.
pub const MAX_LANES: usize = 8;

thread_local! {
    /// The calling thread's lane: (runtime slot, lane index); lane 0 is
    /// the main queue of every runtime.
    static CURRENT: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
}

/// The calling thread's lane on the runtime in `slot` (0: the main queue).
pub(crate) fn current(slot: usize) -> usize {
    let (lane_slot, lane) = CURRENT.with(Cell::get);
    if lane_slot == slot { lane } else { 0 }
}

/// One runtime's lanes: their queues, made on first use, and how many
/// threads are in each.
#[derive(Debug)]
pub(crate) struct Lanes {
    /// Whether threads get lanes of their own (`FUSION_LANES`).
    enabled: bool,
    /// Index 0 stays empty: lane 0 is the runtime's main queue.
    queues: [OnceLock<CommandQueue>; MAX_LANES],
    users: [AtomicUsize; MAX_LANES],
    /// Set once the first lane opened: from then on commands track events.
    open: AtomicBool,
    /// Behind every command queued before the first lane opened (on the
    /// main queue, without events): what each new lane waits for first.
    opened_after: OnceLock<ClEvent>,
}

impl Lanes {
    pub(crate) fn new(enabled: bool) -> Self {
        Lanes {
            enabled,
            queues: std::array::from_fn(|_| OnceLock::new()),
            users: std::array::from_fn(|_| AtomicUsize::new(0)),
            open: AtomicBool::new(false),
            opened_after: OnceLock::new(),
        }
    }

    pub(crate) fn enabled(&self) -> bool {
        self.enabled
    }

    /// Whether a lane was ever opened (commands track events from then on).
    pub(crate) fn open(&self) -> bool {
        self.open.load(Ordering::Acquire)
    }

    /// Lane `index`'s queue, if it was made.
    pub(crate) fn queue(&self, index: usize) -> Option<&CommandQueue> {
        self.queues.get(index).and_then(OnceLock::get)
    }

    /// The queues made so far (the main queue not among them).
    pub(crate) fn made(&self) -> impl Iterator<Item = &CommandQueue> {
        self.queues.iter().filter_map(OnceLock::get)
    }

    /// The lane with the fewest threads in it, lane 0 excepted.
    pub(crate) fn least_used(&self) -> usize {
        (1..MAX_LANES)
            .min_by_key(|&k| self.users[k].load(Ordering::Relaxed))
            .unwrap_or(1)
    }

    /// The event every new lane waits for first, made by `mark` (a marker
    /// behind the main queue's commands) when the first lane opens; the
    /// caller holds the device's ordering lock.
    pub(crate) fn opened_after(
        &self,
        mark: impl FnOnce() -> crate::Result<ClEvent>,
    ) -> crate::Result<ClEvent> {
        if let Some(event) = self.opened_after.get() {
            return Ok(event.clone());
        }
        let event = mark()?;
        Ok(self.opened_after.get_or_init(|| event).clone())
    }

    /// Keeps `queue` as lane `index`'s and marks the lanes open; the
    /// caller holds the device's ordering lock.
    pub(crate) fn install(&self, index: usize, queue: CommandQueue) {
        let _ = self.queues[index].set(queue);
        self.open.store(true, Ordering::Release);
    }

    /// Puts the calling thread in lane `index` of the runtime in `slot`
    /// until the returned guard drops.
    pub(crate) fn enter(&'static self, slot: usize, index: usize) -> Lane {
        self.users[index].fetch_add(1, Ordering::Relaxed);
        let previous = CURRENT.with(|c| c.replace((slot, index)));
        Lane {
            index,
            previous,
            users: &self.users[index],
            _thread: std::marker::PhantomData,
        }
    }

    /// A guard for lane 0 (lanes are off): nothing changes.
    pub(crate) fn main(&'static self, slot: usize) -> Lane {
        self.enter(slot, 0)
    }
}

/// The calling thread's place in a lane of one device, until dropped (see
/// the module's documentation and [`Runtime::enter_lane`](crate::Runtime::enter_lane)).
/// It belongs to the thread that entered it.
#[derive(Debug)]
pub struct Lane {
    index: usize,
    previous: (usize, usize),
    users: &'static AtomicUsize,
    /// The guard restores the thread's previous lane: it may not move to
    /// another thread.
    _thread: std::marker::PhantomData<*const ()>,
}

impl Lane {
    /// The lane's index: 0 is the device's main queue (lanes are off, as
    /// on CPUs by default), 1 to 7 the queues of lanes.
    ///
    /// ```
    /// let rt = clfuse_core::Runtime::get()?;
    /// let lane = rt.enter_lane()?;
    /// assert_eq!(lane.index() == 0, !rt.lanes_enabled());
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn index(&self) -> usize {
        self.index
    }
}

impl Drop for Lane {
    fn drop(&mut self) {
        self.users.fetch_sub(1, Ordering::Relaxed);
        CURRENT.with(|c| c.set(self.previous));
    }
}
