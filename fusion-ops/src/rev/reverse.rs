//! A step's reverse kernel: one launch that adds `seed * partial` into every
//! operand's adjoint, where the seed is the result's adjoint at the element
//! the work item's grid element went into. Sums the forward kernel already
//! made (`Mode::Summed`) are scaled by the `1 x 1` result's seed.

use crate::generator::Generator;
use crate::rev::forward::{Mode, Partial, PartialSpec, Root};
use crate::rev::sweep::{self, ReversePlan};
use crate::rev::tape;
use crate::rev::tape::{Planned, Step};
use crate::rev::var::{LentPartial, VarData};
use clfuse_core::{Access, ClType, Error, KernelArg, MatrixCl, Result, Runtime};
use std::any::TypeId;
use std::rc::Rc;

/// The reverse step of an element-wise (or column-summed) expression.
pub(crate) struct ElementwiseStep<T: ClType> {
    pub(crate) result: Rc<VarData<T>>,
    pub(crate) root: Root,
    pub(crate) grid: (usize, usize),
    pub(crate) specs: Vec<PartialSpec<T>>,
}

/// How the reverse kernels add floating-point values atomically.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Atomics {
    /// A compare-and-swap loop (any OpenCL device; `double` needs 64-bit
    /// atomics).
    CompareAndSwap,
    /// NVIDIA's native `red.add` reductions through inline PTX (`f32`
    /// everywhere, `f64` from compute capability 6.0): one instruction
    /// instead of a loop that retries under contention. A scatter into 100
    /// group intercepts from 1e6 rows took 2.1 ms with the loop on an H200.
    NvidiaReduce,
}

impl Atomics {
    /// The kind `rt`'s device supports for `cl_type`, unless
    /// [`Tuning::native_atomics`](clfuse_core::Tuning::native_atomics) asks
    /// for the loop.
    pub(crate) fn for_device(rt: &Runtime, cl_type: &str) -> Atomics {
        if rt.tuning().native_atomics == Some(false) {
            return Atomics::CompareAndSwap;
        }
        match rt.device_info().nv_compute_capability {
            Some((major, _)) if cl_type == "float" || major >= 6 => Atomics::NvidiaReduce,
            _ => Atomics::CompareAndSwap,
        }
    }

    fn code(self) -> u32 {
        match self {
            Atomics::CompareAndSwap => 0,
            Atomics::NvidiaReduce => 1,
        }
    }
}

/// Atomic addition for `cl_type` in address space `space` (`global` or
/// `local`), named `atomic_add_{cl_type}` and `local_atomic_add_{cl_type}`.
fn atomic_add_helper(cl_type: &str, space: &str, atomics: Atomics) -> String {
    let name = if space == "local" {
        format!("local_atomic_add_{cl_type}")
    } else {
        format!("atomic_add_{cl_type}")
    };
    if atomics == Atomics::NvidiaReduce {
        let (ptx_type, constraint) = if cl_type == "double" {
            ("f64", "d")
        } else {
            ("f32", "f")
        };
        // A __local pointer's integer value is its shared-memory address.
        let (state_space, address) = if space == "local" {
            ("shared", "\"r\"((uint)(ulong)address)")
        } else {
            ("global", "\"l\"(address)")
        };
        return format!(
            "// Adds `value` to `*address`; other work items may add to it at the same time.
inline void {name}(volatile __{space} {cl_type}* address, {cl_type} value) {{
  asm volatile(\"red.{state_space}.add.{ptx_type} [%0], %1;\" :: {address}, \"{constraint}\"(value) : \"memory\");
}}"
        );
    }
    let (bits, cas) = if cl_type == "double" {
        ("ulong", "atom_cmpxchg")
    } else {
        ("uint", "atomic_cmpxchg")
    };
    format!(
        "// Adds `value` to `*address`; other work items may add to it at the same time.
inline void {name}(volatile __{space} {cl_type}* address, {cl_type} value) {{
  union {{
    {bits} bits;
    {cl_type} value;
  }} expected, desired;
  do {{
    expected.value = *address;
    desired.value = expected.value + value;
  }} while ({cas}((volatile __{space} {bits}*)address, expected.bits, desired.bits) != expected.bits);
}}"
    )
}

/// Whether a partial has work at each element of the grid.
fn walks_grid(partial: &KernelPartial) -> bool {
    partial.mode != Mode::Summed && partial.in_place != InPlace::Done
}

/// Whether a mode stores an index per contribution.
fn scattered(mode: Mode) -> bool {
    matches!(mode, Mode::Scatter | Mode::ScatterLocal)
}

/// `seed` times the `k`-th partial at `element`: read from its buffer (or
/// the earlier partial's it shares), or the number it is everywhere.
fn scaled_partial(cl_type: &str, k: usize, partial: &KernelPartial) -> String {
    match partial.constant {
        None => format!("seed * partial{}[element]", partial.same_as.unwrap_or(k)),
        Some(1.0) => "seed".into(),
        Some(c) => {
            let literal = format!("{c:?}");
            let suffix = if cl_type == "float" { "f" } else { "" };
            format!("seed * ({literal}{suffix})")
        }
    }
}

/// What the reverse kernel's code depends on for one partial.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct KernelPartial {
    pub(crate) mode: Mode,
    /// The number the partial is at every element (it then has no buffer).
    pub(crate) constant: Option<f64>,
    /// The variable's adjoint is still zero and this kernel covers it
    /// whole: it writes (`=`) instead of adding.
    pub(crate) overwrite: bool,
    /// An earlier partial whose buffer holds this one's values.
    pub(crate) same_as: Option<usize>,
    /// The partial lies in its variable's adjoint already (a lent buffer).
    pub(crate) in_place: InPlace,
}

/// What is left to do for a partial that its forward kernel stored in its
/// variable's adjoint (`LentAdjoint`), which therefore holds `partial`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InPlace {
    /// Not such a partial.
    No,
    /// Scale the adjoint by the seed, unless the seed is one.
    Scale,
    /// Nothing: the seed is one.
    Done,
}

impl InPlace {
    fn code(self) -> u32 {
        match self {
            InPlace::No => 0,
            InPlace::Scale => 1,
            InPlace::Done => 2,
        }
    }
}

impl KernelPartial {
    /// Its part of the kernel cache key.
    fn key(&self, pattern: &mut Vec<u32>) {
        pattern.push(self.mode.code() | u32::from(self.overwrite) << 4 | self.in_place.code() << 5);
        if let Some(j) = self.same_as {
            pattern.extend([u32::MAX - 1, j as u32]);
        }
        if let Some(c) = self.constant {
            let bits = c.to_bits();
            pattern.extend([u32::MAX, (bits >> 32) as u32, bits as u32]);
        }
    }

    /// `=` or `+=`.
    fn add(&self) -> &'static str {
        if self.overwrite { "=" } else { "+=" }
    }
}

/// The reverse kernel's name.
const KERNEL: &str = "adjoint";

/// The OpenCL C of the reverse kernel for a root and its partials: the
/// kernel [`KERNEL`], built by a [`Generator`] of its own.
pub(crate) fn reverse_source(
    cl_type: &'static str,
    root: Root,
    partials: &[KernelPartial],
    atomics: Atomics,
) -> String {
    let modes: Vec<Mode> = partials.iter().map(|p| p.mode).collect();
    let reduces = modes.contains(&Mode::Reduce);
    let scatters = modes.contains(&Mode::Scatter);
    let locals = modes.contains(&Mode::ScatterLocal);
    let mut g = Generator::named(KERNEL);
    if modes.iter().any(|m| scattered(*m)) {
        if cl_type == "double" && atomics == Atomics::CompareAndSwap {
            g.enable_extension("cl_khr_int64_base_atomics");
        }
        g.helper(atomic_add_helper(cl_type, "global", atomics));
    }
    if locals {
        g.helper(atomic_add_helper(cl_type, "local", atomics));
    }
    declare_params(&mut g, cl_type, partials);
    if reduces || scatters || locals {
        g.use_local_ids();
    }
    if locals {
        g.statement("// The work-group's copies of the small scattered adjoints start at zero.");
        for k in (0..modes.len()).filter(|&k| modes[k] == Mode::ScatterLocal) {
            g.statements(&format!(
                "for (int e = lid; e < length{k}; e += lsize) {{
                   local_adjoint{k}[e] = 0;
                 }}"
            ));
        }
        g.statement("barrier(CLK_LOCAL_MEM_FENCE);");
    }
    // A grid-stride loop over a bounded number of work-groups: partials of
    // 1 x 1 variables are summed per work item, then per group, so the
    // number of atomic adds per variable is the number of groups. A
    // scattered variable's contributions to one target are added up in the
    // work item while its walk stays on that target (a broadcast 1 x 1
    // block, a run of equal indices), and only then added atomically, to
    // the work-group's local copy when the variable is small.
    for (k, mode) in modes.iter().enumerate() {
        match mode {
            Mode::Reduce => g.statement(&format!("{cl_type} sum{k} = 0;")),
            Mode::Scatter | Mode::ScatterLocal => g.statements(&format!(
                "int pending_target{k} = -1;
                 {cl_type} pending{k} = 0;"
            )),
            Mode::Identity | Mode::Summed => {}
        }
    }
    if partials.iter().any(walks_grid) {
        grid_loop(&mut g, cl_type, root, partials);
    }
    summed_adds(&mut g, cl_type, partials);
    for (k, mode) in modes.iter().enumerate() {
        match mode {
            Mode::Scatter => shared_target_adds(&mut g, cl_type, k),
            Mode::ScatterLocal => local_copy_adds(&mut g, cl_type, k),
            Mode::Reduce | Mode::Identity | Mode::Summed => {}
        }
    }
    let reduced: Vec<usize> = (0..modes.len())
        .filter(|&k| modes[k] == Mode::Reduce)
        .collect();
    if reduces {
        group_totals(&mut g, &reduced);
        // A launch of one work-group (a sweep's member, a small step) has
        // its totals already: no counter, fences or second tree, which cost
        // a sweep step a few dependent global round trips.
        g.statements(
            "if (get_num_groups(0) == 1) {
               // One work-group: its sums are the totals.",
        );
        totals_added(&mut g, partials, &reduced, "");
        g.statement("} else {");
        kept_group_sums(&mut g, &reduced);
        last_group_adds(&mut g, cl_type, partials, &reduced);
        g.statement("}");
    }
    g.kernel_source()
}

/// The reverse kernel's parameters, in the order `ElementwiseStep::reverse`
/// binds them: the result's adjoint; per partial its values (unless a
/// number or an earlier partial's), its variable's adjoint, its indices
/// and its variable's length; the grid; then the buffers and local memory
/// of the group sums and scatters.
fn declare_params(g: &mut Generator, cl_type: &'static str, partials: &[KernelPartial]) {
    let has = |mode| partials.iter().any(|p| p.mode == mode);
    g.global_param("result_adjoint", cl_type, Access::Read);
    for (k, partial) in partials.iter().enumerate() {
        if partial.constant.is_none()
            && partial.same_as.is_none()
            && partial.in_place == InPlace::No
        {
            g.global_param(&format!("partial{k}"), cl_type, Access::Read);
        }
        g.global_param(&format!("adjoint{k}"), cl_type, Access::Write);
        if scattered(partial.mode) {
            g.global_param(&format!("index{k}"), "int", Access::Read);
        }
        if matches!(partial.mode, Mode::ScatterLocal | Mode::Summed) {
            g.scalar_param(&format!("length{k}"), "int");
        }
    }
    g.grid_params();
    if has(Mode::Reduce) {
        g.global_param("group_sums", cl_type, Access::Write);
        g.global_param("groups_done", "uint", Access::ReadWrite);
    }
    if has(Mode::Reduce) || has(Mode::Scatter) {
        g.local_array_param("scratch", cl_type);
    }
    if has(Mode::Scatter) {
        g.local_array_param("targets", "int");
    }
    for (k, partial) in partials.iter().enumerate() {
        if partial.mode == Mode::ScatterLocal {
            g.local_array_param(&format!("local_adjoint{k}"), cl_type);
        }
    }
}

/// The loop over the grid's elements: each partial times the seed, added
/// to its adjoint, its pending scattered sum or its 1 x 1 sum.
fn grid_loop(g: &mut Generator, cl_type: &str, root: Root, partials: &[KernelPartial]) {
    let seed_at = match root {
        Root::Elementwise => "element",
        Root::ColwiseSum => "element / rows",
    };
    g.statements(&format!(
        "for (int element = get_global_id(0); element < rows * cols; element += get_global_size(0)) {{
           const {cl_type} seed = result_adjoint[{seed_at}];"
    ));
    for (k, partial) in partials.iter().enumerate() {
        let scaled = scaled_partial(cl_type, k, partial);
        match (partial.mode, partial.in_place) {
            (Mode::Identity, InPlace::No) => {
                g.statement(&format!("adjoint{k}[element] {} {scaled};", partial.add()))
            }
            (Mode::Identity, InPlace::Scale) => g.statements(&format!(
                "// The forward kernel stored this partial in the adjoint itself.
                 if (seed != 1) {{
                   adjoint{k}[element] *= seed;
                 }}"
            )),
            (_, InPlace::Done) => {}
            (Mode::Scatter | Mode::ScatterLocal, _) => g.statements(&format!(
                "const int target{k} = index{k}[element];
                 if (target{k} >= 0) {{
                   if (target{k} != pending_target{k}) {{
                     if (pending_target{k} >= 0) {{
                       {add}
                     }}
                     pending_target{k} = target{k};
                     pending{k} = 0;
                   }}
                   pending{k} += {scaled};
                 }}",
                add = add_pending(cl_type, k, partial.mode),
            )),
            (Mode::Reduce, _) => g.statement(&format!("sum{k} += {scaled};")),
            (Mode::Summed, _) => {}
        }
    }
    g.statement("}");
}

/// Adds the `k`-th partial's pending sum to its target: in the work-group's
/// local copy of a small variable, else in the adjoint.
fn add_pending(cl_type: &str, k: usize, mode: Mode) -> String {
    match mode {
        Mode::ScatterLocal => {
            format!("local_atomic_add_{cl_type}(&local_adjoint{k}[pending_target{k}], pending{k});")
        }
        _ => format!("atomic_add_{cl_type}(&adjoint{k}[pending_target{k}], pending{k});"),
    }
}

/// After the loop, a scattered variable's pending sums: those for work item
/// 0's target are added up in local memory and added once per group.
fn shared_target_adds(g: &mut Generator, cl_type: &str, k: usize) {
    g.statements(&format!(
        "// Work items whose pending target is work item 0's add through
         // local memory, once per group; the others add their own.
         targets[lid] = pending_target{k};
         barrier(CLK_LOCAL_MEM_FENCE);
         const int shared_target{k} = targets[0];
         const bool shares{k} = pending_target{k} == shared_target{k};
         scratch[lid] = shares{k} ? pending{k} : 0;
         if (!shares{k} && pending_target{k} >= 0) {{
           atomic_add_{cl_type}(&adjoint{k}[pending_target{k}], pending{k});
         }}
         barrier(CLK_LOCAL_MEM_FENCE);"
    ));
    group_tree(g);
    g.statements(&format!(
        "if (lid == 0 && shared_target{k} >= 0) {{
           atomic_add_{cl_type}(&adjoint{k}[shared_target{k}], scratch[0]);
         }}
         barrier(CLK_LOCAL_MEM_FENCE);"
    ));
}

/// After the loop, a small scattered variable: the last pending sum goes
/// into the work-group's copy, which is then added to the adjoint.
fn local_copy_adds(g: &mut Generator, cl_type: &str, k: usize) {
    g.statements(&format!(
        "// The work-group adds its copy of the small adjoint once.
         if (pending_target{k} >= 0) {{
           {add}
         }}
         barrier(CLK_LOCAL_MEM_FENCE);
         for (int e = lid; e < length{k}; e += lsize) {{
           if (local_adjoint{k}[e] != 0) {{
             atomic_add_{cl_type}(&adjoint{k}[e], local_adjoint{k}[e]);
           }}
         }}",
        add = add_pending(cl_type, k, Mode::ScatterLocal),
    ));
}

/// The `Summed` partials' adds: each element of such a variable gets the
/// forward kernel's sum for it times the `1 x 1` result's seed. Each element
/// has one writer, the same work item for every partial of one variable.
fn summed_adds(g: &mut Generator, cl_type: &str, partials: &[KernelPartial]) {
    let mut seeded = false;
    for (k, partial) in partials.iter().enumerate() {
        if partial.mode != Mode::Summed {
            continue;
        }
        if !seeded {
            g.statements(&format!(
                "// The forward kernel summed these over the grid: scale by the seed.
                 const {cl_type} result_seed = result_adjoint[0];"
            ));
            seeded = true;
        }
        g.statements(&format!(
            "for (int e = get_global_id(0); e < length{k}; e += get_global_size(0)) {{
               adjoint{k}[e] {add} result_seed * partial{k}[e];
             }}",
            add = partial.add(),
        ));
    }
}

/// Where slot `slot` of the work-group's `1 x 1` sums keeps the work item's
/// value in `scratch` (one row of `lsize` per variable).
fn scratch_slot(slot: usize) -> String {
    match slot {
        0 => "lid".to_string(),
        1 => "lsize + lid".to_string(),
        _ => format!("{slot} * lsize + lid"),
    }
}

/// After the loop, the work-group's totals of its `1 x 1` variables (the
/// partials `reduced`), each in `scratch` at the head of its slot. All of
/// them go through one tree, whose barriers do not multiply with the
/// variables (a tree each made PoCL's compile time grow steeply with their
/// number: minutes for four).
fn group_totals(g: &mut Generator, reduced: &[usize]) {
    g.statement("// The work-group's sums of its 1 x 1 variables.");
    for (slot, k) in reduced.iter().enumerate() {
        g.statement(&format!("scratch[{}] = sum{k};", scratch_slot(slot)));
    }
    g.statement("barrier(CLK_LOCAL_MEM_FENCE);");
    group_trees(g, reduced.len());
}

/// Keeps the work-group's totals (see [`group_totals`]) in the group sums,
/// each in its slot, for the last group to finish.
fn kept_group_sums(g: &mut Generator, reduced: &[usize]) {
    g.statement("// Kept for the last group to finish.");
    if reduced.len() == 1 {
        g.statements(
            "if (lid == 0) {
               group_sums[get_group_id(0)] = scratch[0];
             }",
        );
    } else {
        g.statements(&format!(
            "for (int slot = lid; slot < {count}; slot += lsize) {{
               group_sums[slot * get_num_groups(0) + get_group_id(0)] = scratch[slot * lsize];
             }}",
            count = reduced.len()
        ));
    }
    g.statement("barrier(CLK_LOCAL_MEM_FENCE);");
}

/// Sums `scratch[0..lsize]` into `scratch[0]` (a power-of-two group).
fn group_tree(g: &mut Generator) {
    group_trees(g, 1);
}

/// Sums each of the `count` rows of `lsize` values in `scratch` into its
/// first element, all rows in one tree (a power-of-two group).
fn group_trees(g: &mut Generator, count: usize) {
    let add = if count == 1 {
        "scratch[lid] += scratch[lid + step];".to_string()
    } else {
        format!(
            "for (int slot = 0; slot < {count}; slot++) {{
               scratch[slot * lsize + lid] += scratch[slot * lsize + lid + step];
             }}"
        )
    };
    g.statements(&format!(
        "for (int step = lsize / 2; step > 0; step /= 2) {{
           if (lid < step) {{
             {add}
           }}
           barrier(CLK_LOCAL_MEM_FENCE);
         }}"
    ));
}

/// The end of a kernel with `1 x 1` variables: the last work-group to
/// finish (a global counter, which it sets back to zero for the next
/// launch) adds every group's sums into their adjoints.
/// One atomic increment per group instead of one contended floating-point
/// compare-and-swap per group per variable, which serialised a thousand
/// groups on one address (0.49 ms of a 1e6-element step on an H200).
fn last_group_adds(
    g: &mut Generator,
    cl_type: &str,
    partials: &[KernelPartial],
    reduced: &[usize],
) {
    g.statements(&format!(
        "// The last group to finish adds every group's sums: their writes are
         // made visible before each group counts itself done.
         if (lid == 0) {{
           mem_fence(CLK_GLOBAL_MEM_FENCE);
           scratch[0] = atomic_inc(groups_done) == get_num_groups(0) - 1;
         }}
         barrier(CLK_LOCAL_MEM_FENCE);
         const bool last_group = scratch[0] != 0;
         barrier(CLK_LOCAL_MEM_FENCE);
         if (last_group) {{
           // Read past any cache that may hold stale sums.
           mem_fence(CLK_GLOBAL_MEM_FENCE);
           volatile __global const {cl_type}* sums = group_sums;"
    ));
    if reduced.len() == 1 {
        g.statements(&format!(
            "{cl_type} total = 0;
             for (int g = lid; g < get_num_groups(0); g += lsize) {{
               total += sums[g];
             }}
             scratch[lid] = total;"
        ));
    } else {
        g.statements(&format!(
            "for (int slot = 0; slot < {count}; slot++) {{
               {cl_type} total = 0;
               for (int g = lid; g < get_num_groups(0); g += lsize) {{
                 total += sums[slot * get_num_groups(0) + g];
               }}
               scratch[slot * lsize + lid] = total;
             }}",
            count = reduced.len()
        ));
    }
    g.statement("barrier(CLK_LOCAL_MEM_FENCE);");
    group_trees(g, reduced.len());
    totals_added(g, partials, reduced, "*groups_done = 0;");
    g.statement("}");
}

/// Work item 0 adds the totals in `scratch` (see [`group_totals`]) to the
/// adjoints of the `reduced` partials, then runs `also`.
fn totals_added(g: &mut Generator, partials: &[KernelPartial], reduced: &[usize], also: &str) {
    g.statement("if (lid == 0) {");
    for (slot, &k) in reduced.iter().enumerate() {
        g.statement(&format!(
            "adjoint{k}[0] {} scratch[{}];",
            partials[k].add(),
            if slot == 0 {
                "0".to_string()
            } else {
                format!("{slot} * lsize")
            }
        ));
    }
    if !also.is_empty() {
        g.statement(also);
    }
    g.statement("}");
}

/// Largest scattered variable (elements) that is summed per work-group in
/// local memory first: 8 KiB of doubles.
const LOCAL_SCATTER_MAX: usize = 1024;

/// Marks the reverse kernels' entries in the kernel cache.
struct ReverseKernel<T>(T);

impl<T: ClType> Step for ElementwiseStep<T> {
    fn reverse(&self) -> Result<()> {
        match self.plan()? {
            Planned::Kernel(plan) => sweep::launch_one(plan),
            Planned::Nothing | Planned::Own => Ok(()),
        }
    }

    /// The reverse kernel, its arguments up to the grid's size, and what
    /// the rest (group sums, local memory) need: launched alone by
    /// [`reverse`](Step::reverse), or by the tape with its neighbours'.
    fn plan(&self) -> Result<Planned<'_>> {
        let (rows, cols) = self.grid;
        let elements = rows * cols;
        if !self.result.maybe_nonzero() {
            return Ok(Planned::Nothing); // nothing reached the result: nothing to pass on
        }
        if elements == 0 {
            return Ok(Planned::Nothing);
        }
        let rt = Runtime::get()?;
        let info = rt.device_info();
        // Small scattered variables collect in local memory first, while
        // their copies fit in a quarter of it.
        let mut local_bytes = 0;
        let modes: Vec<Mode> = self
            .specs
            .iter()
            .map(|spec| {
                let (r, c) = spec.var.shape();
                let bytes = r * c * std::mem::size_of::<T>();
                let fits = local_bytes + bytes <= info.local_mem_bytes as usize / 4;
                if spec.mode == Mode::Scatter && (1..=LOCAL_SCATTER_MAX).contains(&(r * c)) && fits
                {
                    local_bytes += bytes;
                    Mode::ScatterLocal
                } else {
                    spec.mode
                }
            })
            .collect();
        // The most elements of a variable summed by the forward kernel.
        let summed = self
            .specs
            .iter()
            .filter(|s| s.mode == Mode::Summed)
            .map(|s| s.var.shape().0 * s.var.shape().1)
            .max()
            .unwrap_or(0);
        // A partial its forward kernel stored in its variable's adjoint is
        // that adjoint at seed one (`LentAdjoint`): taken as it is, scaled
        // by the seed unless that is known to be one. A pass that may run
        // again keeps a copy of the partial first.
        let last_pass = tape::final_pass();
        let unit_seed = self.result.is_unit();
        let mut in_place = vec![InPlace::No; self.specs.len()];
        let mut values: Vec<Option<&MatrixCl<T>>> = Vec::with_capacity(self.specs.len());
        for (k, spec) in self.specs.iter().enumerate() {
            values.push(match (&spec.partial, &spec.lent) {
                (_, Some(lent)) => match lent.state() {
                    LentPartial::InAdjoint => {
                        in_place[k] = if unit_seed {
                            InPlace::Done
                        } else {
                            InPlace::Scale
                        };
                        None
                    }
                    LentPartial::Moved(moved) => Some(moved),
                    LentPartial::Consumed => {
                        return Err(Error::InvalidArgument {
                            function: "Var::grad",
                            argument: "self",
                            reason:
                                "internal: a step's partial was used up by a final reverse pass"
                                    .into(),
                        });
                    }
                },
                (Partial::Stored(partial), None) => Some(partial),
                _ => None,
            });
        }
        // The grid's elements, or only the summed variables' when nothing
        // else is left to do; decided before any adjoint is marked written.
        let walks =
            (0..self.specs.len()).any(|k| modes[k] != Mode::Summed && in_place[k] != InPlace::Done);
        let work = if walks { elements.max(summed) } else { summed };
        if work == 0 && !in_place.contains(&InPlace::Done) {
            return Ok(Planned::Nothing);
        }
        // Identity and 1 x 1 partials reach every element of their
        // variable: a zero adjoint is written, not read and added to.
        // Settled in the order the kernel writes them (the summed adds come
        // after the grid loop), so that a variable's first write is the `=`.
        let mut settled = Vec::with_capacity(self.specs.len());
        let kernel_order = (0..self.specs.len())
            .filter(|&k| modes[k] != Mode::Summed)
            .chain((0..self.specs.len()).filter(|&k| modes[k] == Mode::Summed));
        for k in kernel_order {
            let var = &self.specs[k].var;
            let arg = if in_place[k] == InPlace::No {
                let covers_all = matches!(modes[k], Mode::Identity | Mode::Reduce | Mode::Summed);
                var.adjoint_arg(covers_all)?
            } else {
                (var.adopt_lent_partial(!last_pass)?, false)
            };
            settled.push((k, arg));
        }
        settled.sort_by_key(|(k, _)| *k);
        let mut adjoints = Vec::with_capacity(self.specs.len());
        let mut partials = Vec::with_capacity(self.specs.len());
        for (((spec, mode), (_, (arg, overwrite))), in_place) in
            self.specs.iter().zip(&modes).zip(settled).zip(in_place)
        {
            adjoints.push(arg);
            partials.push(KernelPartial {
                mode: *mode,
                constant: spec.partial.constant(),
                overwrite,
                same_as: spec.partial.same_as(),
                in_place,
            });
        }
        if work == 0 {
            return Ok(Planned::Nothing); // every partial is its adjoint already
        }
        let Some(result_adjoint) = self.result.nonzero_adjoint()? else {
            return Ok(Planned::Nothing);
        };
        let atomics = Atomics::for_device(rt, T::CL_NAME);
        let mut pattern = vec![self.root.code(), atomics.code()];
        for partial in &partials {
            partial.key(&mut pattern);
        }
        let mut args = vec![KernelArg::buffer(result_adjoint, Access::Read)];
        let mut local_scatters = Vec::new();
        for (((spec, mode), adjoint), value) in
            self.specs.iter().zip(&modes).zip(adjoints).zip(values)
        {
            if let Some(partial) = value {
                args.push(KernelArg::buffer(partial, Access::Read));
            }
            args.push(adjoint);
            if let Some(index) = &spec.index {
                args.push(KernelArg::buffer(index, Access::Read));
            }
            let (r, c) = spec.var.shape();
            if matches!(mode, Mode::ScatterLocal | Mode::Summed) {
                args.push(KernelArg::Int((r * c) as i32));
            }
            if *mode == Mode::ScatterLocal {
                local_scatters.push(r * c * std::mem::size_of::<T>());
            }
        }
        args.push(KernelArg::Int(rows as i32));
        args.push(KernelArg::Int(cols as i32));
        // One row of `scratch` per 1 x 1 variable: groups small enough that
        // the rows fit in half the local memory.
        let reduces = self.specs.iter().filter(|s| s.mode == Mode::Reduce).count();
        let scratch_budget = info.local_mem_bytes as usize / 2;
        let mut group = clfuse_core::sweep_group(rt);
        while group > 1 && reduces.max(1) * group * std::mem::size_of::<T>() > scratch_budget {
            group /= 2;
        }
        let root = self.root;
        Ok(Planned::Kernel(ReversePlan {
            structure: TypeId::of::<ReverseKernel<T>>(),
            pattern,
            element_bytes: std::mem::size_of::<T>(),
            // Made only when the cache has not built the kernel yet.
            kernel: Box::new(move || {
                let name = format!(
                    "adjoint_{}_{}",
                    T::CL_NAME,
                    partials
                        .iter()
                        .map(|p| {
                            let written = match (p.overwrite, p.in_place) {
                                (true, _) => "w",
                                (false, InPlace::Scale) => "s",
                                (false, InPlace::Done) => "d",
                                (false, InPlace::No) => "",
                            };
                            format!("{}{written}", p.mode.code())
                        })
                        .collect::<String>()
                );
                (name, reverse_source(T::CL_NAME, root, &partials, atomics))
            }),
            args,
            reduces,
            scatters: modes.contains(&Mode::Scatter),
            local_scatters,
            group,
            work,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn partial(mode: Mode, constant: Option<f64>) -> KernelPartial {
        KernelPartial {
            mode,
            constant,
            overwrite: false,
            same_as: None,
            in_place: InPlace::No,
        }
    }

    #[test]
    fn a_partial_with_an_earlier_ones_values_reads_its_buffer() {
        let shared = KernelPartial {
            same_as: Some(0),
            ..partial(Mode::Reduce, None)
        };
        let source = reverse_source(
            "double",
            Root::ColwiseSum,
            &[partial(Mode::Identity, None), shared],
            Atomics::CompareAndSwap,
        );
        assert!(
            source.contains("sum1 += seed * partial0[element];"),
            "{source}"
        );
        assert!(!source.contains("partial1"), "{source}");
    }

    #[test]
    fn a_partial_in_its_adjoint_is_scaled_there_unless_the_seed_is_one() {
        let in_place = |in_place| KernelPartial {
            in_place,
            ..partial(Mode::Identity, None)
        };
        let scaled = reverse_source(
            "double",
            Root::ColwiseSum,
            &[in_place(InPlace::Scale), partial(Mode::Identity, None)],
            Atomics::CompareAndSwap,
        );
        assert!(scaled.contains("adjoint0[element] *= seed;"), "{scaled}");
        assert!(scaled.contains("if (seed != 1)"), "{scaled}");
        assert!(!scaled.contains("partial0"), "{scaled}");
        assert!(scaled.contains("seed * partial1[element]"), "{scaled}");
        // Done: nothing for it, and no loop over the grid for the summed one.
        let done = reverse_source(
            "double",
            Root::ColwiseSum,
            &[in_place(InPlace::Done), partial(Mode::Summed, None)],
            Atomics::CompareAndSwap,
        );
        assert!(!done.contains("adjoint0[element]"), "{done}");
        assert!(!done.contains("element < rows * cols"), "{done}");
    }

    #[test]
    fn a_zero_adjoint_covered_whole_is_written_not_added_to() {
        let overwrite = |mode| KernelPartial {
            overwrite: true,
            ..partial(mode, None)
        };
        let source = reverse_source(
            "double",
            Root::Elementwise,
            &[overwrite(Mode::Identity), overwrite(Mode::Reduce)],
            Atomics::CompareAndSwap,
        );
        assert!(
            source.contains("adjoint0[element] = seed * partial0[element];"),
            "{source}"
        );
        assert!(source.contains("adjoint1[0] = scratch[0];"), "{source}");
        assert!(!source.contains("adjoint0[element] +="), "{source}");
        assert!(!source.contains("adjoint1[0] +="), "{source}");
    }

    /// The generated source is `tests/golden/{name}.cl`; regenerate on
    /// purpose with `FUSION_BLESS=1 cargo test -p clfuse-ops --lib golden`.
    fn check_golden(name: &str, source: &str) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/golden")
            .join(format!("{name}.cl"));
        if std::env::var_os("FUSION_BLESS").is_some() {
            std::fs::write(&path, source).expect("write golden file");
            return;
        }
        let golden = std::fs::read_to_string(&path)
            .unwrap_or_else(|_| panic!("missing golden file {}", path.display()));
        assert_eq!(source, golden, "generated source for {name} changed");
    }

    /// Every mode in two kernels: written and added adjoints, numbers and
    /// shared buffers for partials, both kinds of atomics.
    #[test]
    fn golden_reverse_kernels() {
        let written = |mode, constant| KernelPartial {
            overwrite: true,
            ..partial(mode, constant)
        };
        check_golden(
            "adjoint_identity_reduce_scatter",
            &reverse_source(
                "double",
                Root::ColwiseSum,
                &[
                    written(Mode::Identity, None),
                    written(Mode::Reduce, None),
                    partial(Mode::Scatter, None),
                ],
                Atomics::CompareAndSwap,
            ),
        );
        check_golden(
            "adjoint_local_summed_float",
            &reverse_source(
                "float",
                Root::Elementwise,
                &[
                    written(Mode::Identity, Some(1.0)),
                    partial(Mode::ScatterLocal, Some(-2.0)),
                    partial(Mode::Summed, None),
                    KernelPartial {
                        same_as: Some(2),
                        ..partial(Mode::Reduce, None)
                    },
                ],
                Atomics::NvidiaReduce,
            ),
        );
    }

    #[test]
    fn one_by_one_variables_are_summed_by_the_last_group_without_float_atomics() {
        let source = reverse_source(
            "double",
            Root::Elementwise,
            &[partial(Mode::Identity, None), partial(Mode::Reduce, None)],
            Atomics::CompareAndSwap,
        );
        assert!(!source.contains("atom_cmpxchg"), "{source}");
        assert!(source.contains("atomic_inc(groups_done)"), "{source}");
        // Added once by a lone work-group, once by the last of several.
        assert_eq!(
            source.matches("adjoint1[0] += scratch[0];").count(),
            2,
            "{source}"
        );
        let one_group = source.find("if (get_num_groups(0) == 1) {").unwrap();
        assert!(one_group < source.find("atomic_inc(groups_done)").unwrap());
        assert!(
            source.contains("group_sums[get_group_id(0)] = scratch[0];"),
            "{source}"
        );
    }

    /// The reverse kernel of a step with `count` `1 x 1` variables beside
    /// an element-wise one.
    fn with_scalars(count: usize) -> String {
        let mut partials = vec![partial(Mode::Identity, None)];
        partials.extend((0..count).map(|_| partial(Mode::Reduce, None)));
        reverse_source("double", Root::ColwiseSum, &partials, Atomics::NvidiaReduce)
    }

    /// However many `1 x 1` variables a step reads, their adjoints go
    /// through one tree in each work-group and one in the last group: the
    /// barriers (what PoCL's compile time grew with) do not multiply, and
    /// the source grows by a few lines per variable.
    #[test]
    fn one_by_one_variables_share_one_reduction() {
        let barriers = |source: &str| source.matches("barrier(").count();
        let (one, four, twelve) = (with_scalars(1), with_scalars(4), with_scalars(12));
        assert_eq!(barriers(&one), barriers(&twelve), "{twelve}");
        for k in 1..=12 {
            assert!(
                twelve.contains(&format!("adjoint{k}[0] += scratch[")),
                "{twelve}"
            );
        }
        assert!(
            twelve.contains("scratch[11 * lsize + lid] = sum12;"),
            "{twelve}"
        );
        let per_variable = (twelve.len() - four.len()) / 8;
        assert!(per_variable < 300, "{per_variable} bytes per variable");
        eprintln!(
            "reverse kernel source: {} / {} / {} bytes for 1 / 4 / 12 variables",
            one.len(),
            four.len(),
            twelve.len()
        );
    }

    #[test]
    fn constant_partials_are_numbers_not_buffers() {
        let source = reverse_source(
            "float",
            Root::Elementwise,
            &[
                partial(Mode::Identity, Some(1.0)),
                partial(Mode::Reduce, Some(-2.0)),
                partial(Mode::Identity, None),
            ],
            Atomics::CompareAndSwap,
        );
        assert!(source.contains("adjoint0[element] += seed;"), "{source}");
        assert!(source.contains("sum1 += seed * (-2.0f);"), "{source}");
        assert!(source.contains("adjoint2[element] += seed * partial2[element];"));
        assert!(!source.contains("partial0") && !source.contains("partial1"));
    }

    #[test]
    fn native_atomics_are_one_ptx_reduction_without_64_bit_atomics() {
        let source = reverse_source(
            "double",
            Root::ColwiseSum,
            &[
                partial(Mode::Scatter, None),
                partial(Mode::ScatterLocal, None),
            ],
            Atomics::NvidiaReduce,
        );
        assert!(source.contains("red.global.add.f64 [%0], %1;"), "{source}");
        assert!(source.contains("red.shared.add.f64 [%0], %1;"), "{source}");
        assert!(source.contains("\"r\"((uint)(ulong)address)"), "{source}");
        assert!(!source.contains("atom_cmpxchg"), "{source}");
        assert!(!source.contains("cl_khr_int64_base_atomics"), "{source}");
    }

    #[test]
    fn identity_partials_need_no_atomics() {
        let source = reverse_source(
            "double",
            Root::Elementwise,
            &[partial(Mode::Identity, None)],
            Atomics::CompareAndSwap,
        );
        assert!(!source.contains("atom"));
        let source = reverse_source(
            "double",
            Root::ColwiseSum,
            &[partial(Mode::Identity, None), partial(Mode::Scatter, None)],
            Atomics::CompareAndSwap,
        );
        assert!(source.contains("cl_khr_int64_base_atomics"));
        assert!(source.contains("result_adjoint[element / rows]"));
    }
}
