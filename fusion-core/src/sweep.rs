//! Sweeps: consecutive small launches run as one kernel.
//!
//! A model's gradient is mostly steps of a few elements (parameter
//! transforms, scalar priors, `1 x 1` sums and their adjoints), and on a GPU
//! queuing a launch costs the host more than such a kernel costs the device.
//! A launch of exactly one work-group may therefore wait, as a member of the
//! calling thread's pending sweep on the device, instead of being queued
//! ([`enqueue_joined`]). The thread's next other command, another thread's
//! command on a buffer the sweep uses (one side writing), a wait for the
//! device, or a member that does not fit launches the sweep first: every
//! member becomes a function of one kernel, called in order with a barrier
//! between calls, so a later member sees what an earlier one wrote, as it
//! would have seen it across two launches. Commands that depend on one
//! another therefore run in the order they were issued. A member holds its
//! buffers until the sweep is queued.
//!
//! A sweep's kernel is built once per sequence of member kernels; one the
//! driver cannot build launches its members one by one from then on, as do
//! sequences past the first [`MAX_BUILT`] of a device.
//!
//! A replayed launch of one work-group may instead take the thread's
//! pending sweep as its prologue ([`take_prologue`]): a sampler writes its
//! position by a small kernel before each replayed call, and that write
//! then runs as the first step of the call's first kernel
//! ([`with_prologue`]) instead of as a kernel of its own.

use crate::compile::compile_kernel_for;
use crate::compile::count_launch;
use crate::error::{Error, Result};
use crate::events::Access;
use crate::kernel_cache::{CompiledKernel, FusedKernel};
use crate::launch::{
    HeldArg, KernelArg, LaunchNote, Launched, NdRange, SweepTag, check_buffers, enqueue_ordered,
    next_sweep, note_launch, note_writes,
};
use crate::recorder::Command;
use crate::runtime::{HeldLaunches, Runtime};
use std::any::Any;
use std::cell::Cell;
use std::collections::HashMap;
use std::sync::Arc;

/// When launches of one work-group wait to run together as one kernel.
///
/// ```
/// use clfuse_core::{LaunchSweeps, set_launch_sweeps};
/// let before = set_launch_sweeps(LaunchSweeps::Always);
/// // ... small launches from this thread now sweep on any device ...
/// set_launch_sweeps(before);
/// assert_eq!(LaunchSweeps::default(), LaunchSweeps::OnGpus);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LaunchSweeps {
    /// As the device's tuning says (`FUSION_SWEEPS`); by default on GPUs,
    /// where a launch costs the host more than a small kernel costs the
    /// device, and not on CPUs (PoCL), where launches are cheap and
    /// compiling a kernel of many functions is slow.
    #[default]
    OnGpus,
    /// On every device.
    Always,
    /// Never: every launch is queued at once.
    Never,
}

thread_local! {
    static SWEEPS: Cell<LaunchSweeps> = const { Cell::new(LaunchSweeps::OnGpus) };
}

/// Sets when this thread's small launches join sweeps, and returns the
/// previous setting (see [`LaunchSweeps`]).
///
/// ```
/// use clfuse_core::{LaunchSweeps, set_launch_sweeps};
/// let before = set_launch_sweeps(LaunchSweeps::Never);
/// assert_eq!(set_launch_sweeps(before), LaunchSweeps::Never);
/// ```
pub fn set_launch_sweeps(sweeps: LaunchSweeps) -> LaunchSweeps {
    SWEEPS.with(|s| s.replace(sweeps))
}

/// Whether this thread's launches of one work-group on `rt` join sweeps.
///
/// ```
/// let rt = clfuse_core::Runtime::get()?;
/// let on = clfuse_core::sweeps_on(rt);
/// assert_eq!(on, rt.on_gpus_unless_set(rt.tuning().sweeps));
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn sweeps_on(rt: &Runtime) -> bool {
    match SWEEPS.with(Cell::get) {
        LaunchSweeps::Always => true,
        LaunchSweeps::Never => false,
        LaunchSweeps::OnGpus => rt.on_gpus_unless_set(rt.tuning().sweeps),
    }
}

/// The work-group size of launches that join sweeps on `rt`: the largest
/// power of two within the device's limit, at most 256. Members share it,
/// so that each one's local memory is sized for the group it runs in.
///
/// ```
/// let rt = clfuse_core::Runtime::get()?;
/// assert!(clfuse_core::sweep_group(rt).is_power_of_two());
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn sweep_group(rt: &Runtime) -> usize {
    group_within(rt.device_info().max_work_group_size)
}

/// The largest power of two within `max`, at most 256.
fn group_within(max: usize) -> usize {
    let mut size = 256;
    while size > max.max(1) {
        size /= 2;
    }
    size
}

/// Most members of one sweep: its compile time grows with them.
const MAX_MEMBERS: usize = 16;

/// Most sweep kernels one device builds: a program whose launches come in
/// ever new sequences would otherwise compile without end.
const MAX_BUILT: usize = 256;

/// Queues `kernel` over `range`, or, when `range` is one work-group of
/// [`sweep_group`] work items and sweeps are on for this thread (or
/// `force`), adds it to the device's pending sweep (see the module's
/// documentation). Errors about the arguments come back here either way.
///
/// ```
/// use clfuse_core::*;
/// let source = "__kernel void inc(__global int* x, int n) {
///   if (get_global_id(0) < n) x[get_global_id(0)] += 1;
/// }";
/// let k = std::sync::Arc::new(FusedKernel::new(
///     compile_kernel("inc", source, "", "inc")?,
///     source.into(),
/// ));
/// let m = MatrixCl::from_slice(3, 1, &[1, 2, 3])?;
/// let group = sweep_group(Runtime::get()?);
/// let range = NdRange::d1(group).with_local(&[group]);
/// let before = set_launch_sweeps(LaunchSweeps::Always);
/// // Two launches, one kernel: the second sees the first's writes.
/// for _ in 0..2 {
///     let args = [KernelArg::buffer(&m, Access::ReadWrite), KernelArg::Int(3)];
///     enqueue_joined(&k, &args, range, false)?;
/// }
/// set_launch_sweeps(before);
/// assert_eq!(m.to_vec()?, vec![3, 4, 5]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn enqueue_joined(
    kernel: &Arc<FusedKernel>,
    args: &[KernelArg<'_>],
    range: NdRange,
    force: bool,
) -> Result<()> {
    join_or_enqueue(kernel, args, range, force, true)
}

/// [`enqueue_joined`]; `counted`: whether a member counts as a launch
/// asked for (a fill does not, as a fill command would not).
pub(crate) fn join_or_enqueue(
    kernel: &Arc<FusedKernel>,
    args: &[KernelArg<'_>],
    range: NdRange,
    force: bool,
    counted: bool,
) -> Result<()> {
    if range.is_empty() {
        return Ok(());
    }
    // While recording, the member learns how its sweep ran, so that a
    // replay can launch the sweep at once (see `replay`).
    let tag = crate::recorder::recording().then(|| Arc::new(SweepTag::default()));
    crate::recorder::command(
        false,
        |notes| {
            note_launch(notes, kernel.compiled().identity(), args, &range);
            notes.mix((force, counted));
            join_again(kernel, args, range, force, counted, tag.clone())
        },
        || join_now(kernel, args, range, force, counted, tag.clone()),
    )
}

/// The recorded command that joins `kernel` with `args` to this thread's
/// sweep again; `tag` says how the recorded one ran.
fn join_again(
    kernel: &Arc<FusedKernel>,
    args: &[KernelArg<'_>],
    range: NdRange,
    force: bool,
    counted: bool,
    tag: Option<Arc<SweepTag>>,
) -> Command {
    let held: Vec<HeldArg> = args.iter().map(HeldArg::hold).collect();
    let note = LaunchNote {
        kernel: kernel.compiled().clone(),
        args: held.clone(),
        range,
        asked: usize::from(counted),
        sweep: tag,
    };
    let kernel = Arc::clone(kernel);
    Command::launch(
        move || {
            let args: Vec<KernelArg<'_>> = held.iter().map(HeldArg::arg).collect();
            join_or_enqueue(&kernel, &args, range, force, counted)?;
            Ok(None)
        },
        note,
    )
}

/// [`join_or_enqueue`] of a non-empty range, not recorded; `tag`: the
/// member's, when recording.
fn join_now(
    kernel: &Arc<FusedKernel>,
    args: &[KernelArg<'_>],
    range: NdRange,
    force: bool,
    counted: bool,
    tag: Option<Arc<SweepTag>>,
) -> Result<()> {
    let rt = kernel.compiled().runtime();
    let joins = range.one_group() == Some(sweep_group(rt)) && (force || sweeps_on(rt));
    if !joins {
        crate::launch::enqueue(kernel.compiled(), args, range)?;
        if let Some(tag) = tag {
            tag.alone();
        }
        return Ok(());
    }
    check_buffers(kernel.compiled().name(), rt, args)?;
    let member = Member::hold(kernel, args, tag);
    let mut held = rt.ordering_only();
    let held: &mut dyn Any = &mut **held.get_or_insert_with(|| Box::new(Sweeps::default()));
    let sweeps = held
        .downcast_mut::<Sweeps>()
        .ok_or_else(|| Error::InvalidArgument {
            function: "enqueue_joined",
            argument: "runtime",
            reason: "the device's held launches are not sweeps".into(),
        })?;
    sweeps.join(member, rt)?;
    // Counted now: a reader comparing counts (a kept constant) must see
    // the write before the sweep is queued.
    note_writes(args);
    if counted {
        count_launch();
    }
    Ok(())
}

/// One launch waiting in a sweep.
struct Member {
    kernel: Arc<FusedKernel>,
    args: Vec<HeldArg>,
    /// Set when the member was recorded: told how it ran.
    tag: Option<Arc<SweepTag>>,
    /// Bytes its arguments take (8 for a pointer or a scalar, a vector's
    /// size with its alignment padding).
    bytes: usize,
    /// Bytes of local memory it takes.
    local: usize,
}

impl Member {
    fn hold(kernel: &Arc<FusedKernel>, args: &[KernelArg<'_>], tag: Option<Arc<SweepTag>>) -> Self {
        let local = args.iter().map(KernelArg::local_bytes).sum();
        Member {
            kernel: Arc::clone(kernel),
            args: args.iter().map(HeldArg::hold).collect(),
            tag,
            bytes: args.iter().map(KernelArg::parameter_bytes).sum(),
            local,
        }
    }

    fn args(&self) -> Vec<KernelArg<'_>> {
        self.args.iter().map(HeldArg::arg).collect()
    }

    /// The buffers it uses and how.
    fn touches(&self) -> Vec<(u64, Access)> {
        self.args
            .iter()
            .filter_map(|a| match a {
                HeldArg::Buffer { id, access, .. } => Some((*id, *access)),
                _ => None,
            })
            .collect()
    }
}

/// One thread's launches waiting to run as one sweep, and the buffers
/// they read and write.
struct Pending {
    thread: std::thread::ThreadId,
    members: Vec<Member>,
    bytes: usize,
    local: usize,
    reads: Vec<u64>,
    writes: Vec<u64>,
}

impl Pending {
    /// Whether a command using `touches` depends on these launches or they
    /// on it: a buffer both use, one of them writing it.
    fn conflicts(&self, touches: &[(u64, Access)]) -> bool {
        touches.iter().any(|(id, access)| {
            self.writes.contains(id) || (*access != Access::Read && self.reads.contains(id))
        })
    }

    /// Whether `member` may join: at most [`MAX_MEMBERS`], their arguments
    /// within the device's parameter bytes, their local memory within half
    /// the device's.
    fn admits(&self, member: &Member, rt: &Runtime) -> bool {
        let info = rt.device_info();
        self.members.len() < MAX_MEMBERS
            && self.bytes + member.bytes <= info.max_parameter_bytes
            && self.local + member.local <= info.local_mem_bytes as usize / 2
    }

    fn push(&mut self, member: Member) {
        for (id, access) in member.touches() {
            let list = if access == Access::Read {
                &mut self.reads
            } else {
                &mut self.writes
            };
            if !list.contains(&id) {
                list.push(id);
            }
        }
        self.bytes += member.bytes;
        self.local += member.local;
        self.members.push(member);
    }
}

/// A device's pending sweeps (one per thread with launches waiting) and
/// the sweep kernels it has built, kept under the device's ordering lock.
/// Each thread has its own so that threads driving one device (chains)
/// do not interleave their launches into ever new sequences to build.
#[derive(Default)]
struct Sweeps {
    pending: Vec<Pending>,
    /// Built sweep kernels by their members' kernel ids; `None`: the driver
    /// could not build that sequence.
    built: HashMap<Vec<u64>, Option<Arc<CompiledKernel>>>,
}

impl HeldLaunches for Sweeps {
    /// The calling thread's sweep, and others' that share a buffer with
    /// the command.
    fn launch_before(&mut self, touches: &[(u64, Access)]) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let thread = std::thread::current().id();
        self.launch_where(|p| p.thread == thread || p.conflicts(touches))
    }

    fn launch_all(&mut self) -> Result<()> {
        self.launch_where(|_| true)
    }
}

impl Sweeps {
    /// Adds `member` to the calling thread's sweep, launching first that
    /// sweep when `member` does not fit, and any other thread's that it
    /// depends on.
    fn join(&mut self, member: Member, rt: &Runtime) -> Result<()> {
        let thread = std::thread::current().id();
        let touches = member.touches();
        self.launch_where(|p| p.thread != thread && p.conflicts(&touches))?;
        // A recorded member does not join launches from before the
        // recording (a replay could not launch the sweep it saw), nor an
        // unrecorded member recorded ones.
        let full = self.pending.iter().any(|p| {
            p.thread == thread
                && (!p.admits(&member, rt)
                    || p.members
                        .iter()
                        .any(|m| m.tag.is_some() != member.tag.is_some()))
        });
        if full {
            self.launch_where(|p| p.thread == thread)?;
        }
        match self.pending.iter_mut().find(|p| p.thread == thread) {
            Some(pending) => pending.push(member),
            None => {
                let mut pending = Pending {
                    thread,
                    members: Vec::new(),
                    bytes: 0,
                    local: 0,
                    reads: Vec::new(),
                    writes: Vec::new(),
                };
                pending.push(member);
                self.pending.push(pending);
            }
        }
        Ok(())
    }

    fn launch_where(&mut self, due: impl Fn(&Pending) -> bool) -> Result<()> {
        let mut k = 0;
        while k < self.pending.len() {
            if due(&self.pending[k]) {
                let pending = self.pending.swap_remove(k);
                launch(pending.members, &mut self.built)?;
            } else {
                k += 1;
            }
        }
        Ok(())
    }
}

/// Launches one sweep: its kernel (built on first use), or its members one
/// by one when there is one member or the sweep's kernel does not build.
/// Called with the ordering lock held.
fn launch(
    members: Vec<Member>,
    built: &mut HashMap<Vec<u64>, Option<Arc<CompiledKernel>>>,
) -> Result<()> {
    let Some(first) = members.first() else {
        return Ok(());
    };
    let rt = first.kernel.compiled().runtime();
    let group = sweep_group(rt);
    let range = NdRange::d1(group).with_local(&[group]);
    let sweep = if members.len() > 1 {
        // Built per sequence of kernels and the barriers their buffers need.
        let barriers = barriers_on(rt, &members);
        let mut key: Vec<u64> = members.iter().map(|m| m.kernel.id()).collect();
        key.extend(barriers.iter().map(|&b| u64::from(b)));
        match built.get(&key) {
            Some(kernel) => kernel.clone(),
            None if built.len() >= MAX_BUILT => None,
            None => {
                let kernel = build(rt, &members, &barriers)?;
                built.insert(key, kernel.clone());
                kernel
            }
        }
    } else {
        None
    };
    match &sweep {
        Some(kernel) => {
            let args: Vec<KernelArg<'_>> = members.iter().flat_map(Member::args).collect();
            enqueue_ordered(kernel, &args, range, true)?;
        }
        None => {
            for member in &members {
                enqueue_ordered(member.kernel.compiled(), &member.args(), range, true)?;
            }
        }
    }
    let launch = next_sweep();
    for (position, member) in members.iter().enumerate() {
        if let Some(tag) = &member.tag {
            match &sweep {
                Some(kernel) => tag.set(Launched {
                    sweep: launch,
                    position,
                    members: members.len(),
                    kernel: Some(Arc::clone(kernel)),
                }),
                None => tag.alone(),
            }
        }
    }
    Ok(())
}

/// Builds the sweep kernel of `members`; `None` when the driver cannot.
fn build(
    rt: &'static Runtime,
    members: &[Member],
    barriers: &[bool],
) -> Result<Option<Arc<CompiledKernel>>> {
    let sources: Vec<&str> = members.iter().map(|m| m.kernel.source()).collect();
    let Ok(source) = compose(&sources, barriers) else {
        return Ok(None);
    };
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    std::hash::Hash::hash(&source, &mut hasher);
    let dump = format!("sweep_{:016x}", std::hash::Hasher::finish(&hasher));
    match compile_kernel_for(rt, SWEEP, &source, "", &dump) {
        Ok(kernel) => Ok(Some(Arc::new(kernel))),
        Err(Error::Build { .. } | Error::Unsupported { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The sweep kernel's name.
const SWEEP: &str = "sweep";

/// One kernel's source taken apart: its pragmas and helpers, its
/// parameters and its body.
struct KernelParts<'a> {
    preamble: &'a str,
    params: Vec<&'a str>,
    body: &'a str,
}

/// Splits a kernel's source (`__kernel void name(...) {` ... `}`, the
/// kernel last).
fn parts(source: &str) -> Result<KernelParts<'_>> {
    let malformed = || Error::Unsupported {
        what: "sweep: a kernel's source is not in the form a sweep composes".into(),
    };
    let header = "__kernel void ";
    let start = source.find(header).ok_or_else(malformed)?;
    let rest = &source[start + header.len()..];
    let open = rest.find('(').ok_or_else(malformed)?;
    let rest = &rest[open + 1..];
    let close = rest.find(") {").ok_or_else(malformed)?;
    let body = rest[close + 3..].trim_end();
    let body = body.strip_suffix('}').ok_or_else(malformed)?;
    if body.contains("__kernel") {
        return Err(malformed());
    }
    Ok(KernelParts {
        preamble: &source[..start],
        params: rest[..close]
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .collect(),
        body,
    })
}

/// A parameter's name: its last word.
fn param_name(param: &str) -> &str {
    param
        .rsplit(|c: char| c.is_whitespace() || c == '*')
        .next()
        .unwrap_or(param)
}

/// The sweep kernel: each kernel as a function `step_k` (pragmas and
/// helpers once), called in order by one kernel whose parameters are
/// theirs, renamed `_k`, with a barrier between calls `k` and `k + 1`
/// where `barriers[k]` (or is missing). `restrict` is dropped: a later step
/// reads what an earlier one wrote.
fn compose(sources: &[&str], barriers: &[bool]) -> Result<String> {
    let parts: Vec<KernelParts<'_>> = sources.iter().map(|s| parts(s)).collect::<Result<_>>()?;
    let mut helpers: Vec<&str> = Vec::new();
    for p in &parts {
        for block in helper_blocks(p.preamble) {
            if !helpers.contains(&block) {
                helpers.push(block);
            }
        }
    }
    let mut out = pragmas(&parts);
    for helper in &helpers {
        out.push_str(helper);
        out.push_str("\n\n");
    }
    let names: Vec<String> = (0..parts.len()).map(|k| format!("step_{k}")).collect();
    for (k, p) in parts.iter().enumerate() {
        out.push_str(&as_function(
            p,
            &names[k],
            &format!("Step {k} of the sweep."),
        ));
    }
    out.push_str(&calling_kernel(&parts, &names, barriers));
    Ok(out)
}

/// `kernel`'s source (a kernel of one work-group: a sweep's among them) with
/// `prologue`'s kernels run before it: each of those the function
/// `prologue_k`, the kernel itself the function `after_prologue`, called in
/// that order by one kernel, with a barrier between prologue steps `k` and
/// `k + 1` where `barriers[k]` (or is missing) and always one before the
/// kernel (see [`compose`]).
/// The kernel's helpers stay as they are; a prologue's helper that they
/// already hold is not repeated.
pub(crate) fn with_prologue(prologue: &[&str], kernel: &str, barriers: &[bool]) -> Result<String> {
    let taken = |s: &&str| s.contains("prologue_");
    if taken(&kernel) || prologue.iter().any(taken) {
        return Err(Error::Unsupported {
            what: "sweep: a source already names a prologue".into(),
        });
    }
    let mut all: Vec<KernelParts<'_>> = prologue.iter().map(|s| parts(s)).collect::<Result<_>>()?;
    all.push(parts(kernel)?);
    let own: Vec<&str> = all[all.len() - 1]
        .preamble
        .lines()
        .filter(|l| !l.starts_with("#pragma"))
        .collect();
    let own = own.join("\n");
    let mut out = pragmas(&all);
    let mut helpers: Vec<&str> = Vec::new();
    for p in &all[..all.len() - 1] {
        for block in helper_blocks(p.preamble) {
            if !own.contains(block) && !helpers.contains(&block) {
                helpers.push(block);
            }
        }
    }
    for helper in &helpers {
        out.push_str(helper);
        out.push_str("\n\n");
    }
    out.push_str(own.trim());
    out.push_str("\n\n");
    let mut names: Vec<String> = (0..prologue.len())
        .map(|k| format!("prologue_{k}"))
        .collect();
    names.push("after_prologue".into());
    for (k, p) in all.iter().enumerate() {
        let what = if k < prologue.len() {
            format!("Prologue step {k}: a launch queued before the replay.")
        } else {
            "The replayed kernel.".to_string()
        };
        out.push_str(&as_function(p, &names[k], &what));
    }
    // The kernel reads what the prologue wrote (a position): a barrier
    // always stands before it.
    let mut barriers = barriers[..barriers.len().min(prologue.len().saturating_sub(1))].to_vec();
    barriers.resize(prologue.len(), true);
    out.push_str(&calling_kernel(&all, &names, &barriers));
    Ok(out)
}

/// The `#pragma` lines of `parts`' preambles, each once, then a blank line.
fn pragmas(parts: &[KernelParts<'_>]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for p in parts {
        for line in p.preamble.lines().filter(|l| l.starts_with("#pragma")) {
            if !seen.contains(&line) {
                seen.push(line);
            }
        }
    }
    let mut out = String::new();
    for pragma in &seen {
        out.push_str(pragma);
        out.push('\n');
    }
    out.push('\n');
    out
}

/// A preamble's helpers (all but its pragmas) in blocks separated by blank
/// lines, each a slice of `preamble`.
fn helper_blocks(preamble: &str) -> Vec<&str> {
    let rest: Vec<&str> = preamble
        .lines()
        .filter(|l| !l.starts_with("#pragma"))
        .collect();
    let rest = rest.join("\n");
    rest.split("\n\n")
        .map(str::trim)
        .filter(|b| !b.is_empty())
        // A block borrowed from `rest` would not outlive it: keep the one
        // inside the preamble instead.
        .filter_map(|block| {
            preamble
                .find(block)
                .map(|at| &preamble[at..at + block.len()])
        })
        .collect()
}

/// `part`'s kernel as the function `name`, headed by the comment `what`
/// (`restrict` dropped).
fn as_function(part: &KernelParts<'_>, name: &str, what: &str) -> String {
    let params: Vec<String> = part
        .params
        .iter()
        .map(|q| q.replace(" restrict ", " "))
        .collect();
    format!(
        "// {what}\nvoid {name}(\n    {}) {{{}}}\n\n",
        params.join(",\n    "),
        part.body.replace(" restrict ", " ")
    )
}

/// The kernel [`SWEEP`] whose parameters are each part's, renamed `_k`,
/// calling `names[k]` with part `k`'s in order, a barrier between calls.
fn calling_kernel(parts: &[KernelParts<'_>], names: &[String], barriers: &[bool]) -> String {
    let mut params = Vec::new();
    let mut calls = String::new();
    for (k, p) in parts.iter().enumerate() {
        let renamed: Vec<String> = p
            .params
            .iter()
            .map(|q| format!("{}_{k}", param_name(q)))
            .collect();
        for (q, name) in p.params.iter().zip(&renamed) {
            let declared = q.replace(" restrict ", " ");
            let old = param_name(q);
            let cut = declared.len() - old.len();
            params.push(format!("{}{name}", &declared[..cut]));
        }
        if k > 0 {
            calls.push_str(if barriers.get(k - 1).copied().unwrap_or(true) {
                "\n  barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);\n"
            } else {
                "\n  // No barrier: no buffer written here or since the last one is shared.\n"
            });
        }
        calls.push_str(&format!("  {}({});", names[k], renamed.join(", ")));
    }
    format!(
        "__kernel void {SWEEP}(\n    {}) {{\n{calls}\n}}\n",
        params.join(",\n    "),
    )
}

/// The barriers of a sweep of `members` on `rt`'s device: on GPUs only
/// those [`barriers_between`] finds needed; on a CPU every one stays, since
/// PoCL built a reverse pass's sweep minutes slower with the regions
/// between them merged (a test that took ~65 s cold ran past 8 minutes).
fn barriers_on(rt: &Runtime, members: &[Member]) -> Vec<bool> {
    if rt.device_info().is_gpu {
        barriers_between(members)
    } else {
        vec![true; members.len().saturating_sub(1)]
    }
}

/// Where a sweep of `members` needs a barrier: entry `k` is whether one
/// stands between members `k` and `k + 1`. Member `k + 1` needs one when it
/// uses a buffer that a member since the last barrier uses, one of them
/// writing it; otherwise no work item can see the other's work, and the
/// barrier (with its global fence, a wait for the memory system on a GPU)
/// is left out: a sampler's fills and independent priors run back to back.
/// (GPUs only: see [`barriers_on`].)
fn barriers_between(members: &[Member]) -> Vec<bool> {
    let writes = |a: Access| a != Access::Read;
    let mut since: Vec<(u64, Access)> = Vec::new();
    let mut barriers = Vec::with_capacity(members.len().saturating_sub(1));
    for (k, member) in members.iter().enumerate() {
        let touches = member.touches();
        if k > 0 {
            let conflict = touches.iter().any(|&(id, access)| {
                since
                    .iter()
                    .any(|&(other, was)| other == id && (writes(access) || writes(was)))
            });
            barriers.push(conflict);
            if conflict {
                since.clear();
            }
        }
        since.extend(touches);
    }
    barriers
}

/// A thread's pending launches from outside any recording, taken out of
/// its sweep to run as the first steps of a replayed launch of one
/// work-group ([`take_prologue`], `BoundLaunch::issue`).
pub(crate) struct Prologue {
    members: Vec<Member>,
    /// The barriers between its members (as a sweep of them has).
    barriers: Vec<bool>,
}

impl Prologue {
    /// Its members' kernel ids in order and its barriers: what a kernel
    /// with it is built for.
    pub(crate) fn key(&self) -> Vec<u64> {
        let kernels = self.members.iter().map(|m| m.kernel.id());
        kernels
            .chain(self.barriers.iter().map(|&b| u64::from(b)))
            .collect()
    }

    /// Its members' sources in order.
    pub(crate) fn sources(&self) -> Vec<&str> {
        self.members.iter().map(|m| m.kernel.source()).collect()
    }

    /// Its members' arguments in order.
    pub(crate) fn args(&self) -> Vec<KernelArg<'_>> {
        self.members.iter().flat_map(Member::args).collect()
    }
}

/// Takes the calling thread's pending sweep out of the device's held
/// launches (`held`, under the ordering lock) as the prologue of the
/// thread's next launch, one work-group that uses `touches` and passes
/// `bytes` of arguments and `local` bytes of local memory: when none of
/// its members was recorded and they fit beside that launch. Otherwise
/// that sweep is launched now. Either way, other threads' sweeps that
/// share a buffer with the launch or the prologue, one side writing, are
/// launched first, as before any command.
pub(crate) fn take_prologue(
    held: &mut Option<Box<dyn HeldLaunches>>,
    touches: &[(u64, Access)],
    bytes: usize,
    local: usize,
    rt: &Runtime,
) -> Result<Option<Prologue>> {
    let Some(held) = held.as_mut() else {
        return Ok(None);
    };
    let any: &mut dyn Any = &mut **held;
    let Some(sweeps) = any.downcast_mut::<Sweeps>() else {
        held.launch_before(touches)?;
        return Ok(None);
    };
    let thread = std::thread::current().id();
    let info = rt.device_info();
    let mine = sweeps.pending.iter().position(|p| {
        p.thread == thread
            && p.members.iter().all(|m| m.tag.is_none())
            && p.bytes + bytes <= info.max_parameter_bytes
            && p.local + local <= info.local_mem_bytes as usize / 2
    });
    let taken = mine.map(|k| sweeps.pending.swap_remove(k));
    let mut uses = touches.to_vec();
    for member in taken.iter().flat_map(|p| &p.members) {
        uses.extend(member.touches());
    }
    sweeps.launch_where(|p| p.thread == thread || p.conflicts(&uses))?;
    Ok(taken.map(|p| Prologue {
        barriers: barriers_on(rt, &p.members),
        members: p.members,
    }))
}

/// Launches `prologue` as the sweep it was, when the launch that took it
/// could not run it (its kernel did not build). Under the ordering lock
/// (`held`).
pub(crate) fn launch_prologue(
    held: &mut Option<Box<dyn HeldLaunches>>,
    prologue: Prologue,
) -> Result<()> {
    let sweeps = held
        .as_mut()
        .and_then(|h| (&mut **h as &mut dyn Any).downcast_mut::<Sweeps>());
    match sweeps {
        Some(sweeps) => launch(prologue.members, &mut sweeps.built),
        None => launch(prologue.members, &mut HashMap::new()),
    }
}

/// Builds `kernel` with `prologue` before it ([`with_prologue`]); `None`
/// when the driver cannot (or the sources are not in a form this composes).
pub(crate) fn build_with_prologue(
    prologue: &Prologue,
    kernel: &CompiledKernel,
) -> Result<Option<CompiledKernel>> {
    let Ok(source) = with_prologue(&prologue.sources(), kernel.source(), &prologue.barriers) else {
        return Ok(None);
    };
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    std::hash::Hash::hash(&source, &mut hasher);
    let dump = format!("sweep_prologue_{:016x}", std::hash::Hasher::finish(&hasher));
    match compile_kernel_for(kernel.runtime(), SWEEP, &source, kernel.options(), &dump) {
        Ok(built) => Ok(Some(built)),
        Err(Error::Build { .. } | Error::Unsupported { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable

__kernel void adjoint(
    __global const double* restrict result_adjoint,
    __global double* adjoint0,
    int rows,
    int cols) {
  adjoint0[0] += result_adjoint[0];
}
";

    const B: &str = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable

// Adds `value` to `*address`.
inline void add(__global double* address, double value) {
  *address += value;
}

__kernel void calculate(
    __global const double* restrict result_adjoint,
    __global double* adjoint0,
    __local double* scratch) {
  add(adjoint0, result_adjoint[0]);
}
";

    #[test]
    fn kernels_become_functions_called_in_order_with_a_barrier_between() -> Result<()> {
        let source = compose(&[A, B, A], &[true, true])?;
        assert_eq!(
            source
                .matches("#pragma OPENCL EXTENSION cl_khr_fp64")
                .count(),
            1
        );
        assert_eq!(source.matches("inline void add(").count(), 1);
        assert!(!source.contains("restrict"));
        for k in 0..3 {
            assert!(source.contains(&format!("void step_{k}(")));
        }
        assert!(source.contains("__local double* scratch_1"));
        assert!(source.contains("  step_0(result_adjoint_0, adjoint0_0, rows_0, cols_0);"));
        assert_eq!(source.matches("barrier(").count(), 2);
        assert!(source.find("step_0(result").unwrap() < source.find("step_2(result").unwrap());
        assert!(source.contains("__kernel void sweep("));
        Ok(())
    }

    #[test]
    fn a_prologue_runs_before_the_kernel_whose_helpers_stay_once() -> Result<()> {
        let kernel = compose(&[A, B], &[true])?;
        let source = with_prologue(&[B, A], &kernel, &[true])?;
        // The kernel's helpers and steps as they were, B's helper once.
        assert_eq!(source.matches("inline void add(").count(), 1);
        assert_eq!(source.matches("void step_0(").count(), 1);
        assert_eq!(
            source
                .matches("#pragma OPENCL EXTENSION cl_khr_fp64")
                .count(),
            1
        );
        for name in ["prologue_0", "prologue_1", "after_prologue"] {
            assert!(source.contains(&format!("void {name}(")), "{source}");
        }
        assert!(!source.contains("restrict"));
        // The prologue first, in order, a barrier after each of its steps.
        let calls = &source[source.find("__kernel void sweep(").unwrap()..];
        let at = |call: &str| calls.find(call).unwrap();
        assert!(at("  prologue_0(result_adjoint_0") < at("  prologue_1(result_adjoint_1"));
        assert!(at("  prologue_1(") < at("  after_prologue(result_adjoint_0_2, adjoint0_0_2"));
        assert_eq!(calls.matches("barrier(").count(), 2);
        assert!(calls.contains("__local double* scratch_0"));
        // Only one kernel, named as a sweep.
        assert_eq!(source.matches("__kernel").count(), 1);
        // A source that already has a prologue is not composed again.
        assert!(with_prologue(&[A], &source, &[]).is_err());
        // Independent prologue steps run without a barrier between them,
        // but one always stands before the kernel.
        let source = with_prologue(&[B, A], &kernel, &[false])?;
        let calls = &source[source.find("__kernel void sweep(").unwrap()..];
        assert_eq!(calls.matches("barrier(").count(), 1);
        let at = |call: &str| calls.find(call).unwrap();
        assert!(at("  prologue_1(") < at("barrier(") && at("barrier(") < at("  after_prologue("));
        Ok(())
    }

    #[test]
    fn a_source_in_another_form_is_an_error_not_a_panic() {
        assert!(compose(&["void helper() {}"], &[]).is_err());
        assert!(compose(&["__kernel void a() {}\n__kernel void b() {}"], &[]).is_err());
    }

    #[test]
    fn a_barrier_stands_only_where_one_is_needed() -> Result<()> {
        let source = compose(&[A, B, A], &[false, true])?;
        let calls = &source[source.find("__kernel void sweep(").unwrap()..];
        assert_eq!(calls.matches("barrier(").count(), 1);
        let at = |text: &str| calls.find(text).unwrap();
        assert!(at("  step_1(") < at("barrier(") && at("barrier(") < at("  step_2("));
        assert!(at("// No barrier") < at("  step_1("));
        Ok(())
    }

    #[test]
    fn barriers_stand_only_where_a_step_shares_a_buffer_one_side_writes() -> Result<()> {
        let source = "__kernel void touch(__global double* x) { }\n";
        let kernel = Arc::new(FusedKernel::new(
            crate::compile_kernel("touch", source, "", "touch")?,
            source.into(),
        ));
        let (a, b, c) = (
            crate::MatrixCl::<f64>::zeros(1, 1)?,
            crate::MatrixCl::<f64>::zeros(1, 1)?,
            crate::MatrixCl::<f64>::zeros(1, 1)?,
        );
        let member = |m: &crate::MatrixCl<f64>, access| {
            Member::hold(&kernel, &[KernelArg::buffer(m, access)], None)
        };
        // a and b written, c read: independent. Then a read (after a's
        // write), c read, and c written (after c's reads).
        let members = [
            member(&a, Access::Write),
            member(&b, Access::Write),
            member(&c, Access::Read),
            member(&a, Access::Read),
            member(&c, Access::Read),
            member(&c, Access::Write),
        ];
        assert_eq!(
            barriers_between(&members),
            [false, false, true, false, true]
        );
        // Reads of one buffer never need one.
        let reads = [member(&a, Access::Read), member(&a, Access::Read)];
        assert_eq!(barriers_between(&reads), [false]);
        Ok(())
    }

    #[test]
    fn sweep_groups_are_powers_of_two_within_the_device_limit() {
        assert_eq!(group_within(1024), 256);
        assert_eq!(group_within(200), 128);
        assert_eq!(group_within(1), 1);
        assert_eq!(group_within(0), 1);
    }

    #[test]
    fn one_group_ranges_are_recognised() {
        assert_eq!(NdRange::d1(256).with_local(&[256]).one_group(), Some(256));
        assert_eq!(NdRange::d1(512).with_local(&[256]).one_group(), None);
        assert_eq!(NdRange::d1(256).one_group(), None);
        assert_eq!(NdRange::d2([64, 2]).with_local(&[64, 2]).one_group(), None);
        assert_eq!(
            NdRange::d2([64, 1]).with_local(&[64, 1]).one_group(),
            Some(64)
        );
    }
}
