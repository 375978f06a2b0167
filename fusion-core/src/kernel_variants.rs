//! Variants of a bound launch's kernel, rewritten from its source.
//!
//! A replay issues the same launches on the same buffers every time, so
//! how a kernel takes its parameters may change without changing what it
//! computes: its scalars can come from a `__constant` table (they never
//! change between replays, and on NVIDIA's driver every argument costs the
//! host time at each enqueue), a buffer it takes at several parameters can
//! be passed once, a buffer carved from a larger one (`arena`) can be
//! reached through that parent, passed once, at an offset from the table,
//! and several chains' launches can become one, each chain's buffers
//! passed once per chain (`chain_batch`). A compact launch ([`compact`])
//! is the variant of one chain.

use crate::arena::{ParentArg, parent_of};
use crate::bound_launch::BoundLaunch;
use crate::compile::compile_kernel_for;
use crate::events::Access;
use crate::kernel_cache::CompiledKernel;
use crate::launch::{HeldArg, KernelArg};
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

/// How a variant (batched or compact) takes one of the kernel's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Pass {
    /// Work-group memory: once.
    Local,
    /// A buffer every chain passes (data they all read): once.
    Shared,
    /// A buffer of each chain's own: once per chain (`name__c`).
    PerChain,
    /// The buffer the parameter at this index is, in every chain: not
    /// passed again (the kernel names it twice, the launch passes it once).
    Same(usize),
    /// A buffer carved from parent `parent` (the variant's `arena_<parent>`,
    /// passed once) in every chain, at the byte offset in the `int` table
    /// at `offset` (each chain's row its own).
    Within {
        parent: usize,
        offset: usize,
    },
    /// A scalar, read from the table of its type at this index (each
    /// chain's row of the table): scalars never change between replays,
    /// and each argument costs the host time at every launch.
    Int(usize),
    Float(usize),
    Double(usize),
}

/// How a variant of `launches[0]`'s kernel takes each of its parameters,
/// given every chain's launch and which parameters are the shared
/// finished-groups counter (`counters`: each chain gets its own).
pub(crate) fn passes_of(
    launches: &[&BoundLaunch],
    signature: &KernelSignature,
    counters: &[bool],
) -> Vec<Pass> {
    let id_at = |l: &BoundLaunch, index: usize| match &l.args()[index] {
        HeldArg::Buffer { id, .. } => Some(*id),
        _ => None,
    };
    let mut tables = [0usize; 3];
    let mut parents = Vec::new();
    let mut passes: Vec<Pass> = Vec::with_capacity(launches[0].args().len());
    for (index, arg) in launches[0].args().iter().enumerate() {
        let mut next = |t: usize| {
            tables[t] += 1;
            tables[t] - 1
        };
        let pass = match arg {
            HeldArg::Local(_) => Pass::Local,
            HeldArg::Buffer { .. } => {
                // The first parameter that is this buffer in every chain
                // (and may name it: the same address space).
                let earlier = (0..index).find(|&e| {
                    matches!(
                        passes[e],
                        Pass::Shared | Pass::PerChain | Pass::Within { .. }
                    ) && launches.iter().all(|l| id_at(l, e) == id_at(l, index))
                        && signature.address_space(e) == signature.address_space(index)
                });
                let shared = launches
                    .iter()
                    .all(|l| id_at(l, index) == id_at(launches[0], index));
                // A global buffer carved from one parent in every chain
                // (not a chain's own finished-groups counter).
                let parent = || {
                    (!counters[index] && signature.address_space(index) == "global")
                        .then(|| common_parent(launches, index))
                        .flatten()
                };
                match (earlier, earlier.is_none().then(parent).flatten()) {
                    (Some(e), _) => Pass::Same(e),
                    (None, Some(parent)) => {
                        let at = parents.iter().position(|&p| p == parent);
                        let parent = at.unwrap_or_else(|| {
                            parents.push(parent);
                            parents.len() - 1
                        });
                        Pass::Within {
                            parent,
                            offset: next(0),
                        }
                    }
                    (None, None) if shared && !counters[index] => Pass::Shared,
                    (None, None) => Pass::PerChain,
                }
            }
            HeldArg::Int(_) => Pass::Int(next(0)),
            HeldArg::Float(_) => Pass::Float(next(1)),
            HeldArg::Double(_) => Pass::Double(next(2)),
            // Never reached: `KernelSignature::matches` turns such launches away.
            HeldArg::Lanes(_) => Pass::PerChain,
        };
        passes.push(pass);
    }
    passes
}

/// The parent every launch's buffer at `index` was carved from, when it
/// is one for all of them (`arena`).
fn common_parent(launches: &[&BoundLaunch], index: usize) -> Option<usize> {
    let parent = |l: &BoundLaunch| match &l.args()[index] {
        HeldArg::Buffer { mem, .. } => {
            parent_of(*mem as opencl3::types::cl_mem).map(|(p, _)| p as usize)
        }
        _ => None,
    };
    let first = parent(launches[0])?;
    launches[1..]
        .iter()
        .all(|l| parent(l) == Some(first))
        .then_some(first)
}

/// The parents the variant's `Pass::Within` parameters name, in order
/// (`arena_0`, ...), each held for the launch as a buffer it only reads:
/// the launch is ordered by the buffers it reaches ([`reached`]).
pub(crate) fn parent_args(launch: &BoundLaunch, passes: &[Pass]) -> Option<Vec<HeldArg>> {
    let mut parents: Vec<HeldArg> = Vec::new();
    for (index, pass) in passes.iter().enumerate() {
        let Pass::Within { parent, .. } = *pass else {
            continue;
        };
        if parent < parents.len() {
            continue;
        }
        let HeldArg::Buffer { mem, home, .. } = &launch.args()[index] else {
            return None;
        };
        let (mem, _) = parent_of(*mem as opencl3::types::cl_mem)?;
        let owner = ParentArg::new(mem)?;
        parents.push(HeldArg::Buffer {
            mem: owner.mem() as usize,
            id: crate::matrix::next_buffer_id(),
            home: *home,
            owner: Arc::new(owner),
            access: Access::Read,
        });
    }
    Some(parents)
}

/// The buffers `launch` reaches through its parents (`Pass::Within`), as
/// its variant's launch is ordered by them and holds them.
pub(crate) fn reached(launch: &BoundLaunch, passes: &[Pass]) -> Vec<HeldArg> {
    (0..passes.len())
        .filter(|&index| matches!(passes[index], Pass::Within { .. }))
        .map(|index| held(launch, index, passes))
        .collect()
}

/// `launch`'s argument at `index`, as the variant passes it: a buffer the
/// kernel also names at later parameters (`Pass::Same`) with the access of
/// all of them, so that it is ordered as a writer when any of them writes.
pub(crate) fn held(launch: &BoundLaunch, index: usize, passes: &[Pass]) -> HeldArg {
    let mut arg = launch.args()[index].clone();
    if let HeldArg::Buffer { access, .. } = &mut arg {
        for (other, pass) in launch.args().iter().zip(passes) {
            if let (HeldArg::Buffer { access: also, .. }, Pass::Same(e)) = (other, pass)
                && *e == index
                && also != access
            {
                *access = Access::ReadWrite;
            }
        }
    }
    arg
}

/// The scalar tables of `launches` (ints, floats, doubles; each a row of
/// every launch's scalars of its type, and only the types they have), the
/// offsets of the buffers reached through a parent among the ints.
pub(crate) fn tables(launches: &[&BoundLaunch], passes: &[Pass]) -> Option<Vec<HeldArg>> {
    let (mut ints, mut floats, mut doubles) = (Vec::new(), Vec::new(), Vec::new());
    for launch in launches {
        for (arg, pass) in launch.args().iter().zip(passes) {
            match (arg, pass) {
                (HeldArg::Int(v), _) => ints.push(*v),
                (HeldArg::Float(v), _) => floats.push(*v),
                (HeldArg::Double(v), _) => doubles.push(*v),
                (HeldArg::Buffer { mem, .. }, Pass::Within { .. }) => {
                    let (_, offset) = parent_of(*mem as opencl3::types::cl_mem)?;
                    ints.push(i32::try_from(offset).ok()?);
                }
                (HeldArg::Buffer { .. } | HeldArg::Local(_) | HeldArg::Lanes(_), _) => {}
            }
        }
    }
    let mut out = Vec::new();
    if !ints.is_empty() {
        out.push(table(&ints)?);
    }
    if !floats.is_empty() {
        out.push(table(&floats)?);
    }
    if !doubles.is_empty() {
        out.push(table(&doubles)?);
    }
    Some(out)
}

/// Launches with fewer arguments than this are never compacted: the
/// driver's time per argument does not pay for building a variant.
const COMPACT_FROM: usize = 24;

/// `launch` as a compact variant of its kernel when that passes at most
/// three quarters of its arguments: its scalars from a table (they never
/// change between replays) and each buffer it passes at several
/// parameters once. Else, or when the variant cannot be made, `launch`.
/// (On NVIDIA's driver an enqueue costs the host about 0.1–0.3 µs per
/// argument: a replayed sweep of 139 arguments 25 µs, one of 8 6 µs.)
pub(crate) fn compact(launch: BoundLaunch) -> BoundLaunch {
    let on = launch.kernel().runtime().tuning().compact_launches != Some(false);
    if !on || launch.args().len() < COMPACT_FROM {
        return launch;
    }
    match compacted(&launch) {
        Some(variant) => variant.standing_for(launch),
        None => launch,
    }
}

/// The compact variant of `launch` (see [`compact`]), if it passes at most
/// three quarters of the arguments.
fn compacted(launch: &BoundLaunch) -> Option<BoundLaunch> {
    let kernel = launch.kernel();
    let signature = KernelSignature::find(kernel.source(), kernel.name())?;
    if !signature.matches(launch.args()) {
        return None;
    }
    let counters = vec![false; launch.args().len()];
    let passes = passes_of(&[launch], &signature, &counters);
    let passed = |p: &Pass| matches!(p, Pass::Local | Pass::Shared | Pass::PerChain);
    // Counted before any table is uploaded: one table per scalar type used.
    let table_kinds = [
        passes
            .iter()
            .any(|p| matches!(p, Pass::Int(_) | Pass::Within { .. })),
        passes.iter().any(|p| matches!(p, Pass::Float(_))),
        passes.iter().any(|p| matches!(p, Pass::Double(_))),
    ];
    let count = passes.iter().filter(|p| passed(p)).count()
        + parent_count(&passes)
        + table_kinds.iter().filter(|&&k| k).count();
    if 4 * count > 3 * launch.args().len() {
        return None;
    }
    let mut args: Vec<HeldArg> = (0..passes.len())
        .filter(|&index| passed(&passes[index]))
        .map(|index| held(launch, index, &passes))
        .collect();
    args.extend(parent_args(launch, &passes)?);
    args.extend(tables(&[launch], &passes)?);
    let variant = batched_kernel(kernel, &signature, &passes, 1, 0)?;
    let reached = reached(launch, &passes);
    BoundLaunch::reaching(&variant, args, reached, launch.range(), launch.asked()).ok()
}

/// How many parents `passes` reach buffers through.
pub(crate) fn parent_count(passes: &[Pass]) -> usize {
    passes
        .iter()
        .filter_map(|p| match p {
            Pass::Within { parent, .. } => Some(parent + 1),
            _ => None,
        })
        .max()
        .unwrap_or(0)
}

/// A table of scalars on the device, as a launch's argument (it keeps the
/// buffer alive).
fn table<T: crate::ClType>(values: &[T]) -> Option<HeldArg> {
    // Written, not filled: a plan launches nothing of its own.
    let matrix = crate::MatrixCl::uninitialized(values.len(), 1).ok()?;
    matrix.write(values).ok()?;
    Some(HeldArg::hold(&KernelArg::buffer(&matrix, Access::Read)))
}

/// Variants built so far (batched and compact), by the kernel they vary
/// (kept alive with them, so that its identity is not reused), how it takes
/// each parameter, its chains and their dimension.
type BatchedKey = (usize, Vec<Pass>, usize, usize);
type Built = HashMap<BatchedKey, (CompiledKernel, CompiledKernel)>;
static BATCHED: LazyLock<Mutex<Built>> = LazyLock::new(|| Mutex::new(HashMap::new()));

/// The variant of `kernel` for `chains` chains, one being a compact launch
/// (built once).
pub(crate) fn batched_kernel(
    kernel: &CompiledKernel,
    signature: &KernelSignature,
    passes: &[Pass],
    chains: usize,
    dim: usize,
) -> Option<CompiledKernel> {
    let key = (kernel.identity(), passes.to_vec(), chains, dim);
    let mut built = BATCHED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, batched)) = built.get(&key) {
        return Some(batched.clone());
    }
    let source = signature.batched(kernel.source(), passes, chains, dim);
    // Named by its source, so that dumps and overrides tell variants apart.
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    std::hash::Hash::hash(&source, &mut hasher);
    let form = if chains == 1 {
        "compact".to_string()
    } else {
        format!("chains{chains}")
    };
    let dump_name = format!(
        "{}_{form}_{:016x}",
        kernel.name(),
        std::hash::Hasher::finish(&hasher)
    );
    let batched = compile_kernel_for(
        kernel.runtime(),
        kernel.name(),
        &source,
        kernel.options(),
        &dump_name,
    )
    .ok()?;
    built.insert(key, (kernel.clone(), batched.clone()));
    Some(batched)
}

/// A parameter's type as a cast to it: without `restrict`, which only a
/// declaration may carry.
fn cast_type(ty: &str) -> String {
    let words: Vec<&str> = ty.split_whitespace().filter(|w| *w != "restrict").collect();
    words.join(" ")
}

/// Where a kernel's parameters are in its source.
pub(crate) struct KernelSignature {
    /// The byte range of the text between the parameters' parentheses.
    params: std::ops::Range<usize>,
    /// Where the body starts (just after its `{`).
    body: usize,
    /// Each parameter's text, without its name, and its name.
    split: Vec<(String, String)>,
    /// Whether each parameter is work-group memory (`__local`).
    locals: Vec<bool>,
}

impl KernelSignature {
    /// The signature of the kernel function `name` in `source`.
    pub(crate) fn find(source: &str, name: &str) -> Option<Self> {
        let bytes = source.as_bytes();
        let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
        let mut from = 0;
        let open = loop {
            let at = from + source[from..].find(name)?;
            from = at + name.len();
            let whole = (at == 0 || !is_ident(bytes[at - 1]))
                && bytes.get(from).is_none_or(|&b| !is_ident(b));
            let rest = source[from..].trim_start();
            let before = &source[..at];
            let statement = &before[before.rfind([';', '}']).map_or(0, |i| i + 1)..];
            if whole && rest.starts_with('(') && statement.contains("kernel") {
                break source.len() - rest.len();
            }
        };
        let mut depth = 0usize;
        let mut close = None;
        for (i, &b) in bytes.iter().enumerate().skip(open) {
            match b {
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let close = close?;
        let body = close + source[close..].find('{')? + 1;
        let text = &source[open + 1..close];
        let mut split = Vec::new();
        let mut locals = Vec::new();
        if !text.trim().is_empty() {
            for param in text.split(',') {
                let param = param.trim();
                let start = param
                    .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .map_or(0, |i| i + 1);
                let (ty, name) = param.split_at(start);
                if name.is_empty() || ty.contains('(') {
                    return None;
                }
                locals.push(ty.contains("__local") || ty.split_whitespace().any(|w| w == "local"));
                split.push((ty.to_string(), name.to_string()));
            }
        }
        Some(KernelSignature {
            params: open + 1..close,
            body,
            split,
            locals,
        })
    }

    /// Whether `args` are arguments of this kernel: one per parameter, work-group
    /// memory exactly where it takes work-group memory. Launches with
    /// vector values (a position's write) have no variants: their values
    /// change at every launch, so no table could hold them.
    pub(crate) fn matches(&self, args: &[HeldArg]) -> bool {
        self.locals.len() == args.len()
            && !args.iter().any(|a| matches!(a, HeldArg::Lanes(_)))
            && args
                .iter()
                .zip(&self.locals)
                .all(|(arg, &local)| matches!(arg, HeldArg::Local(_)) == local)
    }

    /// The address space parameter `index` points into (`"global"`,
    /// `"constant"`, or `""` for neither named).
    pub(crate) fn address_space(&self, index: usize) -> &'static str {
        let ty = &self.split[index].0;
        let named = |space: &str| {
            ty.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .any(|w| w == space || w.strip_prefix("__") == Some(space))
        };
        ["global", "constant"]
            .into_iter()
            .find(|space| named(space))
            .unwrap_or("")
    }

    /// `source` with this kernel taking its parameters as `passes` says
    /// for `chains` chains: buffers of each chain's own once per chain
    /// (`name__c`), a buffer passed at several parameters once, scalars from
    /// tables (`chain_ints`, `chain_floats`, `chain_doubles`: a row per
    /// chain), and each work item picking its chain's from its index along
    /// dimension `dim`. One chain's variant (a compact launch) has no such
    /// dimension, and its tables are `scalar_ints`, ... .
    pub(crate) fn batched(
        &self,
        source: &str,
        passes: &[Pass],
        chains: usize,
        dim: usize,
    ) -> String {
        let count = |kind: fn(&Pass) -> bool| passes.iter().filter(|p| kind(p)).count();
        let counts = [
            count(|p| matches!(p, Pass::Int(_) | Pass::Within { .. })),
            count(|p| matches!(p, Pass::Float(_))),
            count(|p| matches!(p, Pass::Double(_))),
        ];
        let one = chains == 1;
        let tables: [(&str, &str); 3] = if one {
            [
                ("int", "scalar_ints"),
                ("float", "scalar_floats"),
                ("double", "scalar_doubles"),
            ]
        } else {
            [
                ("int", "chain_ints"),
                ("float", "chain_floats"),
                ("double", "chain_doubles"),
            ]
        };
        let mut params = Vec::new();
        let mut picks = String::new();
        for ((ty, name), pass) in self.split.iter().zip(passes) {
            // Where this chain's row of table `t` starts.
            let row = |t: usize| {
                if one {
                    String::new()
                } else {
                    format!("chain * {} + ", counts[t])
                }
            };
            let from_table =
                |t: usize, k: usize| format!("  {ty}{name} = {}[{}{k}];\n", tables[t].1, row(t));
            match *pass {
                Pass::Local | Pass::Shared => params.push(format!("{ty}{name}")),
                Pass::PerChain if one => params.push(format!("{ty}{name}")),
                Pass::PerChain => {
                    let mut pick = format!("{name}__{}", chains - 1);
                    for c in (0..chains - 1).rev() {
                        pick = format!("chain == {c} ? {name}__{c} : {pick}");
                    }
                    picks.push_str(&format!("  {ty}{name} = {pick};\n"));
                    params.extend((0..chains).map(|c| format!("{ty}{name}__{c}")));
                }
                Pass::Same(e) => {
                    // Cast: one parameter may point to const, the other not.
                    let other = &self.split[e].1;
                    picks.push_str(&format!("  {ty}{name} = ({}){other};\n", cast_type(ty)));
                }
                Pass::Within { parent, offset } => picks.push_str(&format!(
                    "  {ty}{name} = ({})(arena_{parent} + {}[{}{offset}]);\n",
                    cast_type(ty),
                    tables[0].1,
                    row(0)
                )),
                Pass::Int(k) => picks.push_str(&from_table(0, k)),
                Pass::Float(k) => picks.push_str(&from_table(1, k)),
                Pass::Double(k) => picks.push_str(&from_table(2, k)),
            }
        }
        for parent in 0..parent_count(passes) {
            params.push(format!("__global uchar* arena_{parent}"));
        }
        for (t, (ty, table)) in tables.iter().enumerate() {
            if counts[t] > 0 {
                params.push(format!("__constant {ty}* restrict {table}"));
            }
        }
        let (header, chain) = if one {
            (
                "// Compacted: scalars from a table, and each buffer passed at several\n\
                 // parameters once.\n"
                    .to_string(),
                String::new(),
            )
        } else {
            (
                format!(
                    "// Batched for {chains} chains: buffers of each chain's own come once per\n\
                     // chain (name__c), scalars from a table row per chain, and work items\n\
                     // along dimension {dim} belong to chain get_global_id({dim}).\n"
                ),
                format!("  const int chain = get_global_id({dim});\n"),
            )
        };
        let header = if parent_count(passes) > 0 {
            format!(
                "{header}// Buffers carved from a larger one are reached through it (arena_k),\n\
                 // at byte offsets from the int table.\n"
            )
        } else {
            header
        };
        format!(
            "{header}{}\n    {}){}\n{chain}{picks}{}",
            &source[..self.params.start],
            params.join(",\n    "),
            &source[self.params.end + 1..self.body],
            &source[self.body..],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batched_kernel_takes_each_argument_once_per_chain() {
        let source = "#define T double\n__kernel void scale(__global T* restrict x, const int n, __global const T* y, T a, __local T* scratch) {\n  x[get_global_id(0)] *= n * a * y[0];\n}\n";
        let signature = KernelSignature::find(source, "scale").expect("found");
        assert_eq!(signature.locals, [false, false, false, false, true]);
        let passes = [
            Pass::PerChain,
            Pass::Int(0),
            Pass::Shared,
            Pass::Double(0),
            Pass::Local,
        ];
        let batched = signature.batched(source, &passes, 3, 1);
        assert!(batched.contains("__global T* restrict x__0,\n    __global T* restrict x__1,"));
        assert!(batched.contains("    __global const T* y,\n    __local T* scratch,\n"));
        assert!(batched.contains("    __constant int* restrict chain_ints,\n    __constant double* restrict chain_doubles) {"));
        assert!(batched.contains("const int chain = get_global_id(1);"));
        assert!(
            batched
                .contains("__global T* restrict x = chain == 0 ? x__0 : chain == 1 ? x__1 : x__2;")
        );
        assert!(batched.contains("const int n = chain_ints[chain * 1 + 0];"));
        assert!(batched.contains("T a = chain_doubles[chain * 1 + 0];"));
        assert!(batched.ends_with("  x[get_global_id(0)] *= n * a * y[0];\n}\n"));
        // A helper named like the kernel, and a call of it, are not its signature.
        let helper = "void scale_step(int a) {}\n__kernel void scale(int a) { scale_step(a); }";
        let found = KernelSignature::find(helper, "scale").expect("found");
        assert_eq!(found.split, [("int ".to_string(), "a".to_string())]);
    }
    #[test]
    fn a_compact_kernel_takes_scalars_from_a_table_and_each_buffer_once() {
        let source = "__kernel void step(__global double* restrict x, int n, __global const double* restrict y, __global const double* x_again, double a, __constant double* c, __global double* c_again) {\n  x[0] += n * a * y[0] * x_again[0] + c[0] + c_again[0];\n}\n";
        let signature = KernelSignature::find(source, "step").expect("found");
        assert_eq!(signature.address_space(0), "global");
        assert_eq!(signature.address_space(5), "constant");
        assert_eq!(signature.address_space(1), "");
        // `x` once per chain (or once), then its scalars and buffers.
        let passes = |x: Pass| {
            [
                x,
                Pass::Int(0),
                Pass::Shared,
                Pass::Same(0),
                Pass::Double(0),
                Pass::Shared,
                Pass::Shared,
            ]
        };
        let compact = signature.batched(source, &passes(Pass::Shared), 1, 0);
        assert!(compact.starts_with("// Compacted"));
        assert!(compact.contains("(\n    __global double* restrict x,\n    __global const double* restrict y,\n    __constant double* c,\n    __global double* c_again,\n    __constant int* restrict scalar_ints,\n    __constant double* restrict scalar_doubles) {\n"));
        assert!(
            compact.contains("  __global const double* x_again = (__global const double*)x;\n")
        );
        assert!(compact.contains("  int n = scalar_ints[0];\n"));
        assert!(compact.contains("  double a = scalar_doubles[0];\n"));
        assert!(!compact.contains("chain"));
        // Two chains: the repeated buffer is each chain's pick again.
        let batched = signature.batched(source, &passes(Pass::PerChain), 2, 1);
        assert!(batched.contains("  __global double* restrict x = chain == 0 ? x__0 : x__1;\n"));
        assert!(
            batched.contains("  __global const double* x_again = (__global const double*)x;\n")
        );
        assert!(batched.contains("  int n = chain_ints[chain * 1 + 0];\n"));
    }

    #[test]
    fn a_buffer_carved_from_a_parent_is_reached_through_it_at_an_offset() {
        let source = "__kernel void step(__global double* restrict x, int n, __global const double* restrict y, __global const double* x_again, __constant double* c) {\n  x[0] += n * y[0] * x_again[0] + c[0];\n}\n";
        let signature = KernelSignature::find(source, "step").expect("found");
        // `x` and `y` from parents 0 and 1, their offsets among the ints.
        let passes = [
            Pass::Within {
                parent: 0,
                offset: 0,
            },
            Pass::Int(1),
            Pass::Within {
                parent: 1,
                offset: 2,
            },
            Pass::Same(0),
            Pass::Shared,
        ];
        assert_eq!(parent_count(&passes), 2);
        let compact = signature.batched(source, &passes, 1, 0);
        assert!(compact.contains("(\n    __constant double* c,\n    __global uchar* arena_0,\n    __global uchar* arena_1,\n    __constant int* restrict scalar_ints) {\n"));
        assert!(compact.contains(
            "  __global double* restrict x = (__global double*)(arena_0 + scalar_ints[0]);\n"
        ));
        assert!(compact.contains("  int n = scalar_ints[1];\n"));
        assert!(compact.contains("  __global const double* restrict y = (__global const double*)(arena_1 + scalar_ints[2]);\n"));
        assert!(
            compact.contains("  __global const double* x_again = (__global const double*)x;\n")
        );
        // Two chains: one parent for both, each chain's row of offsets.
        let batched = signature.batched(source, &passes, 2, 1);
        assert!(batched.contains("    __global uchar* arena_0,\n"));
        assert!(!batched.contains("x__0"));
        assert!(batched.contains("(arena_0 + chain_ints[chain * 3 + 0]);\n"));
        assert!(batched.contains("  int n = chain_ints[chain * 3 + 1];\n"));
    }
}
