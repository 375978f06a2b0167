//! Kernel timeline of a profiling queue (`FUSION_PROFILING=1`): which kernels
//! ran, how long each took on the device, and how long the device sat idle
//! between them (launch latency, host work, transfers).
//!
//! While profiling is on, every launch's event is kept until
//! [`take_profile`] collects them, so a long-running program should take
//! the profile of each region it wants to look at.

use crate::error::Result;
use crate::events::ClEvent;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Mutex;

/// Every profiled command: its name, its event, and whether it is a kernel
/// (the kernel table counts only those; the timeline shows all).
static LAUNCHES: Mutex<Vec<(String, ClEvent, bool)>> = Mutex::new(Vec::new());

thread_local! {
    static SCOPE: std::cell::Cell<Option<&'static str>> = const { std::cell::Cell::new(None) };
}

/// Keeps a launch's event for the profile (called by `enqueue` on a profiling queue).
pub(crate) fn record(kernel: &str, event: &ClEvent) {
    push(kernel, event, true);
}

/// Keeps a transfer's event (a read, write, fill or copy) for the timeline.
pub(crate) fn record_transfer(what: &str, event: &ClEvent) {
    if crate::Runtime::get().is_ok_and(|rt| rt.profiling()) {
        push(what, event, false);
    }
}

fn push(what: &str, event: &ClEvent, kernel: bool) {
    let name = match SCOPE.with(std::cell::Cell::get) {
        Some(scope) => format!("{scope}: {what}"),
        None => what.to_string(),
    };
    let mut launches = LAUNCHES.lock().unwrap_or_else(|p| p.into_inner());
    launches.push((name, event.clone(), kernel));
}

/// On a profiling queue, queues a one-element fill named `label` whose
/// timeline entry says when the host reached this point (its "queued"
/// time); a no-op otherwise. Benchmarks mark where a call starts and returns.
///
/// ```
/// clfuse_core::profile_mark("call starts")?;
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn profile_mark(label: &str) -> Result<()> {
    let rt = crate::Runtime::get()?;
    if !rt.profiling() {
        return Ok(());
    }
    // A one-element fill: markers carry no timestamps on some drivers (NVIDIA).
    rt.placeholder()?.fill_labelled(0, label)
}

/// One command of a [`Profile`]'s timeline, in nanoseconds from the first
/// command's queueing (the device's clock).
///
/// ```
/// let profile = clfuse_core::take_profile()?;
/// for c in &profile.timeline {
///     assert!(c.start_ns <= c.end_ns, "{}", c.name);
/// }
/// # Ok::<(), clfuse_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct TimelineEntry {
    /// The kernel's or transfer's name, with its profile scope.
    pub name: String,
    /// When the host queued it.
    pub queued_ns: u64,
    /// When the device started it.
    pub start_ns: u64,
    /// When the device finished it.
    pub end_ns: u64,
}

/// While the returned guard lives, this thread's launches are profiled as
/// `"{label}: {kernel}"`, so that a profile tells apart the same kernel
/// used for different steps of an algorithm. Costs nothing when the queue
/// is not a profiling queue; guards nest (the innermost label wins).
///
/// ```
/// let _scope = clfuse_core::profile_scope("trailing update");
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn profile_scope(label: &'static str) -> ProfileScope {
    ProfileScope {
        previous: SCOPE.with(|s| s.replace(Some(label))),
    }
}

/// Restores the previous label when dropped (see [`profile_scope`]).
#[derive(Debug)]
#[must_use = "the label applies while the guard lives"]
pub struct ProfileScope {
    previous: Option<&'static str>,
}

impl Drop for ProfileScope {
    fn drop(&mut self) {
        SCOPE.with(|s| s.set(self.previous));
    }
}

/// Device time of one kernel name in a [`Profile`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KernelTime {
    /// How many times it ran.
    pub launches: usize,
    /// Summed device execution time, in nanoseconds.
    pub total_ns: u64,
}

/// What ran on the device since the last [`take_profile`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Profile {
    /// Per kernel name, sorted by name.
    pub kernels: BTreeMap<String, KernelTime>,
    /// From the first kernel's start to the last kernel's end, in nanoseconds.
    pub span_ns: u64,
    /// Time at least one kernel was running within the span, in nanoseconds.
    pub busy_ns: u64,
    /// Every command (kernels, transfers, marks) in the order queued.
    pub timeline: Vec<TimelineEntry>,
}

impl Profile {
    /// Launches of all kernels.
    pub fn launches(&self) -> usize {
        self.kernels.values().map(|k| k.launches).sum()
    }

    /// Time within the span when no kernel ran (launch gaps, transfers, host work).
    pub fn idle_ns(&self) -> u64 {
        self.span_ns.saturating_sub(self.busy_ns)
    }

    /// Time the device had nothing queued: every command before one had
    /// ended before the host queued it (the host was slower than the
    /// device there), in nanoseconds.
    ///
    /// ```
    /// use clfuse_core::{Profile, TimelineEntry};
    /// let command = |queued_ns, start_ns, end_ns| TimelineEntry { name: "k".into(), queued_ns, start_ns, end_ns };
    /// let profile = Profile { timeline: vec![command(0, 5, 10), command(30, 32, 40)], ..Profile::default() };
    /// assert_eq!(profile.waiting_for_host_ns(), 20);
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn waiting_for_host_ns(&self) -> u64 {
        let mut ended = None::<u64>;
        let mut waiting = 0;
        for command in &self.timeline {
            if let Some(ended) = ended {
                waiting += command.queued_ns.saturating_sub(ended);
            }
            ended = Some(ended.map_or(command.end_ns, |e| e.max(command.end_ns)));
        }
        waiting
    }
}

/// Waits for the recorded launches and summarises them, clearing the record.
/// Empty when the queue is not a profiling queue.
///
/// ```
/// let profile = clfuse_core::take_profile()?;
/// assert!(profile.busy_ns <= profile.span_ns);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn take_profile() -> Result<Profile> {
    let launches = std::mem::take(&mut *LAUNCHES.lock().unwrap_or_else(|p| p.into_inner()));
    let mut profile = Profile::default();
    let mut intervals = Vec::with_capacity(launches.len());
    let mut origin = None;
    for (name, event, kernel) in &launches {
        // A command without timestamps (some drivers' markers) is left out.
        let Ok(Some([queued, start, end])) = event.profiling_times() else {
            continue;
        };
        let origin = *origin.get_or_insert(queued);
        profile.timeline.push(TimelineEntry {
            name: name.clone(),
            queued_ns: queued.saturating_sub(origin),
            start_ns: start.saturating_sub(origin),
            end_ns: end.saturating_sub(origin),
        });
        if !kernel {
            continue;
        }
        let entry = profile.kernels.entry(name.clone()).or_default();
        entry.launches += 1;
        entry.total_ns += end.saturating_sub(start);
        intervals.push((start, end));
    }
    intervals.sort_unstable();
    if let (Some(first), Some(last)) = (
        intervals.first(),
        intervals.iter().map(|(_, end)| *end).max(),
    ) {
        profile.span_ns = last.saturating_sub(first.0);
    }
    // Union of the intervals: overlapping kernels (out-of-order queue) count once.
    let mut covered_to = 0u64;
    for (start, end) in intervals {
        let from = start.max(covered_to);
        if end > from {
            profile.busy_ns += end - from;
        }
        covered_to = covered_to.max(end);
    }
    Ok(profile)
}

impl fmt::Display for Profile {
    /// A table of kernels by total device time, then the span and idle time.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rows: Vec<_> = self.kernels.iter().collect();
        rows.sort_by_key(|(_, time)| std::cmp::Reverse(time.total_ns));
        writeln!(f, "| kernel | launches | total | mean |")?;
        writeln!(f, "|---|---|---|---|")?;
        for (name, time) in rows {
            writeln!(
                f,
                "| {name} | {} | {:.3} ms | {:.1} µs |",
                time.launches,
                time.total_ns as f64 * 1e-6,
                time.total_ns as f64 * 1e-3 / time.launches.max(1) as f64
            )?;
        }
        writeln!(
            f,
            "\n{} launches; span {:.3} ms, kernels running {:.3} ms, device idle {:.3} ms",
            self.launches(),
            self.span_ns as f64 * 1e-6,
            self.busy_ns as f64 * 1e-6,
            self.idle_ns() as f64 * 1e-6
        )?;
        if !self.timeline.is_empty() {
            writeln!(
                f,
                "the device had nothing queued (waited for the host) for {:.3} ms",
                self.waiting_for_host_ns() as f64 * 1e-6
            )?;
        }
        if self.timeline.is_empty() || self.timeline.len() > 64 {
            return Ok(());
        }
        writeln!(f, "\n| command | queued | start | end |")?;
        writeln!(f, "|---|---|---|---|")?;
        let us = |ns: u64| ns as f64 * 1e-3;
        for c in &self.timeline {
            writeln!(
                f,
                "| {} | {:.1} µs | {:.1} µs | {:.1} µs |",
                c.name,
                us(c.queued_ns),
                us(c.start_ns),
                us(c.end_ns)
            )?;
        }
        Ok(())
    }
}
