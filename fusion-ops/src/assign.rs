//! Assigning expressions: one generated kernel per distinct expression
//! structure, compiled once, cached, and launched with the values bound.
//!
//! `target.assign(expr)` → shapes checked → arguments bound (one tree walk,
//! which also yields the alias pattern) → cache lookup by (type, alias
//! pattern) → on a miss only: source generated and compiled → enqueue.

use crate::binder::{Binder, Identity};
use crate::generator::Generator;
use crate::operation::Operation;
use crate::templates::convert;
use dashmap::DashMap;
use fusion_core::{
    compile_kernel, enqueue, Access, ClType, CompiledKernel, Error, IntoOperand, MatrixCl,
    NdRange, Result, Runtime,
};
use once_cell::sync::Lazy;
use std::any::TypeId;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// A compiled fused kernel and its source.
#[derive(Debug)]
pub struct FusedKernel {
    compiled: CompiledKernel,
    source: String,
}

impl FusedKernel {
    /// The generated OpenCL C.
    pub fn source(&self) -> &str {
        &self.source
    }
}

type CacheKey = (TypeId, Vec<u32>);
type FxBuild = std::hash::BuildHasherDefault<rustc_hash::FxHasher>;
static CACHE: Lazy<DashMap<CacheKey, Arc<FusedKernel>, FxBuild>> =
    Lazy::new(|| DashMap::with_hasher(FxBuild::default()));

/// One target and the expression assigned to it.
#[derive(Debug)]
pub struct Assignment<'t, T: ClType, E> {
    target: &'t MatrixCl<T>,
    expr: E,
}

/// A list of assignments computed together by one kernel (a tuple of
/// [`Assignment`]s, or one). Expressions are all evaluated before any target
/// is written, so an output may be read by another output's expression.
pub trait OutputList {
    /// Cache key type (lifetimes erased).
    type Key: 'static;
    /// Checks every expression against its target; returns the common shape.
    fn shape(&self, common: &mut Option<(usize, usize)>) -> Result<()>;
    /// Binds the expressions' arguments.
    fn bind_exprs<'a>(&'a self, b: &mut Binder<'a>);
    /// Binds the targets' arguments.
    fn bind_targets<'a>(&'a self, b: &mut Binder<'a>);
    /// Generates every expression, pushing the variables holding the values.
    fn generate_exprs(&self, g: &mut Generator, values: &mut Vec<String>);
    /// Generates the stores, consuming `values` in order.
    fn generate_stores(&self, g: &mut Generator, values: &mut std::slice::Iter<'_, String>);
    /// Updates each target's view after the launch.
    fn finish(&self);
    /// Pushes each target's buffer id.
    fn target_ids(&self, ids: &mut Vec<u64>);
}

impl<T: ClType, E: Operation> OutputList for Assignment<'_, T, E> {
    type Key = (T, E::Key);

    fn shape(&self, common: &mut Option<(usize, usize)>) -> Result<()> {
        let target = (self.target.rows(), self.target.cols());
        if let Some(shape) = self.expr.shape()? {
            if shape != target {
                return Err(Error::DimensionMismatch {
                    operation: "assign".into(),
                    lhs: target,
                    rhs: shape,
                });
            }
        }
        match common {
            Some(c) if *c != target => Err(Error::DimensionMismatch {
                operation: "assign (all outputs of one kernel must have one shape)".into(),
                lhs: *c,
                rhs: target,
            }),
            _ => {
                *common = Some(target);
                Ok(())
            }
        }
    }

    fn bind_exprs<'a>(&'a self, b: &mut Binder<'a>) {
        self.expr.bind(b);
    }

    fn bind_targets<'a>(&'a self, b: &mut Binder<'a>) {
        b.matrix(self.target, Access::Write, false);
    }

    fn generate_exprs(&self, g: &mut Generator, values: &mut Vec<String>) {
        let value = self.expr.generate(g);
        values.push(convert::<E::Scalar, T>(&value));
    }

    fn generate_stores(&self, g: &mut Generator, values: &mut std::slice::Iter<'_, String>) {
        let value = values.next().cloned().unwrap_or_default();
        store::<T>(g, Identity::Buffer(self.target.buffer_id()), &value);
    }

    fn finish(&self) {
        self.target.set_view(self.expr.view());
    }

    fn target_ids(&self, ids: &mut Vec<u64>) {
        ids.push(self.target.buffer_id());
    }
}

/// Emits `<target>_global[i + <target>_rows * j] = value;`.
fn store<T: ClType>(g: &mut Generator, identity: Identity, value: &str) {
    let base = match g.known(identity) {
        Some(base) => base,
        None => {
            let base = g.fresh();
            g.buffer_param(identity, &base, T::CL_NAME, false);
            base
        }
    };
    g.mark_written(&base);
    g.statement(&format!("{base}_global[i + {base}_rows * j] = {value};"));
}

macro_rules! output_tuple {
    ($($name:ident $index:tt),+) => {
        impl<$($name: OutputList),+> OutputList for ($($name,)+) {
            type Key = ($($name::Key,)+);

            fn shape(&self, common: &mut Option<(usize, usize)>) -> Result<()> {
                $(self.$index.shape(common)?;)+
                Ok(())
            }

            fn bind_exprs<'a>(&'a self, b: &mut Binder<'a>) {
                $(self.$index.bind_exprs(b);)+
            }

            fn bind_targets<'a>(&'a self, b: &mut Binder<'a>) {
                $(self.$index.bind_targets(b);)+
            }

            fn generate_exprs(&self, g: &mut Generator, values: &mut Vec<String>) {
                $(self.$index.generate_exprs(g, values);)+
            }

            fn generate_stores(&self, g: &mut Generator, values: &mut std::slice::Iter<'_, String>) {
                $(self.$index.generate_stores(g, values);)+
            }

            fn finish(&self) {
                $(self.$index.finish();)+
            }

            fn target_ids(&self, ids: &mut Vec<u64>) {
                $(self.$index.target_ids(ids);)+
            }
        }
    };
}

output_tuple!(A 0);
output_tuple!(A 0, B 1);
output_tuple!(A 0, B 1, C 2);
output_tuple!(A 0, B 1, C 2, D 3);
output_tuple!(A 0, B 1, C 2, D 3, E 4);
output_tuple!(A 0, B 1, C 2, D 3, E 4, F 5);
output_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
output_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
output_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
output_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
output_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
output_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);

/// The source of the kernel computing `list`.
fn generate<L: OutputList>(list: &L) -> Generator {
    let mut g = Generator::new();
    let mut values = Vec::new();
    list.generate_exprs(&mut g, &mut values);
    list.generate_stores(&mut g, &mut values.iter());
    g
}

/// Work-group shape for a `rows x cols` element-wise kernel: up to 256 work
/// items, filling rows first (coalesced column-major access).
fn nd_range(rows: usize, cols: usize, max_group: usize) -> NdRange {
    let group = max_group.clamp(1, 256);
    let l0 = rows.next_power_of_two().min(group);
    let l1 = cols.next_power_of_two().min(group / l0).max(1);
    NdRange::d2([rows.div_ceil(l0) * l0, cols.div_ceil(l1) * l1]).with_local(&[l0, l1])
}

fn dump_name(key: &CacheKey) -> String {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut h);
    format!("fused_{:016x}", h.finish())
}

/// Runs the assignments in `list` as one kernel.
pub fn run<L: OutputList>(list: &L) -> Result<()> {
    let mut shape = None;
    list.shape(&mut shape)?;
    let (rows, cols) = shape.unwrap_or((0, 0));
    let mut ids = Vec::new();
    list.target_ids(&mut ids);
    for (k, id) in ids.iter().enumerate().skip(1) {
        if ids[..k].contains(id) {
            return Err(Error::InvalidArgument {
                function: "results(..).assign",
                argument: "targets",
                reason: format!("target {k} is the same matrix as an earlier target"),
            });
        }
    }
    let rt = Runtime::get()?;
    let mut binder = Binder::new();
    list.bind_exprs(&mut binder);
    list.bind_targets(&mut binder);
    binder.int(rows as i32);
    binder.int(cols as i32);
    let (args, pattern) = binder.finish();
    let key: CacheKey = (TypeId::of::<L::Key>(), pattern);
    let kernel = match CACHE.get(&key) {
        Some(k) => k.clone(),
        None => {
            let g = generate(list);
            if g.uses_fp64() {
                rt.require::<f64>("assign")?;
            }
            let source = g.kernel_source();
            let compiled = compile_kernel("calculate", &source, "", &dump_name(&key))?;
            let kernel = Arc::new(FusedKernel { compiled, source });
            CACHE.entry(key).or_insert(kernel).clone()
        }
    };
    if rows > 0 && cols > 0 {
        let range = nd_range(rows, cols, rt.device_info().max_work_group_size);
        enqueue(&kernel.compiled, &args, range)?;
    }
    list.finish();
    Ok(())
}

/// The source `run(list)` compiles (generated afresh, not looked up).
pub fn source_of<L: OutputList>(list: &L) -> String {
    generate(list).kernel_source()
}

/// Number of distinct fused kernels compiled in this process.
pub fn cached_kernels() -> usize {
    CACHE.len()
}

/// `target.assign(expr)`: evaluates `expr` into an existing matrix of the same shape.
///
/// ```
/// use fusion_ops::prelude::*;
/// let a = MatrixCl::from_slice(2, 1, &[1.0f64, 2.0])?;
/// let b = MatrixCl::from_slice(2, 1, &[10.0f64, 20.0])?;
/// let d = MatrixCl::<f64>::zeros(2, 1)?;
/// d.assign(3.0 * (&a + &b))?;
/// assert_eq!(d.to_vec()?, vec![33.0, 66.0]);
/// # Ok::<(), fusion_ops::Error>(())
/// ```
pub trait AssignExt<T: ClType> {
    /// Computes `expr` into `self` with one fused kernel; `self` takes the expression's view.
    fn assign<E>(&self, expr: E) -> Result<()>
    where
        E: IntoOperand,
        E::Operand: Operation;
}

impl<T: ClType> AssignExt<T> for MatrixCl<T> {
    fn assign<E>(&self, expr: E) -> Result<()>
    where
        E: IntoOperand,
        E::Operand: Operation,
    {
        run(&Assignment {
            target: self,
            expr: expr.into_operand(),
        })
    }
}

/// Evaluates an operation into a new matrix.
pub fn eval_operation<O: Operation>(op: O) -> Result<MatrixCl<O::Scalar>> {
    let Some((rows, cols)) = op.shape()? else {
        return Err(Error::InvalidArgument {
            function: "eval",
            argument: "expr",
            reason: "a scalar-only expression has no shape; use constant(v, rows, cols)".into(),
        });
    };
    let out = MatrixCl::<O::Scalar>::uninitialized(rows, cols)?;
    run(&Assignment { target: &out, expr: op })?;
    Ok(out)
}

/// The kernel source that evaluating `op` into a fresh matrix uses.
pub fn operation_source<O: Operation>(op: &O) -> Result<String> {
    // A target that no expression can alias: buffer ids start at 1.
    let mut g = Generator::new();
    let value = op.generate(&mut g);
    store::<O::Scalar>(&mut g, Identity::Buffer(0), &value);
    Ok(g.kernel_source())
}

/// Several targets computed by one kernel: `results((&d, &e)).assign((x, y))`.
#[derive(Debug, Clone, Copy)]
pub struct Results<R>(R);

/// Groups targets for a multi-output assignment.
///
/// ```
/// use fusion_ops::prelude::*;
/// let a = MatrixCl::from_slice(1, 2, &[1.0f64, 2.0])?;
/// let b = MatrixCl::from_slice(1, 2, &[3.0f64, 5.0])?;
/// let (d, e) = (MatrixCl::<f64>::zeros(1, 2)?, MatrixCl::<f64>::zeros(1, 2)?);
/// results((&d, &e)).assign((&a + &b, &a - &b))?; // one kernel, a and b read once
/// assert_eq!(d.to_vec()?, vec![4.0, 7.0]);
/// assert_eq!(e.to_vec()?, vec![-2.0, -3.0]);
/// # Ok::<(), fusion_ops::Error>(())
/// ```
pub fn results<R>(targets: R) -> Results<R> {
    Results(targets)
}

macro_rules! results_assign {
    ($($t:ident $e:ident $index:tt),+) => {
        impl<'t, $($t: ClType),+> Results<($(&'t MatrixCl<$t>,)+)> {
            /// Computes each expression into its target in one kernel.
            pub fn assign<$($e),+>(self, exprs: ($($e,)+)) -> Result<()>
            where
                $($e: IntoOperand, $e::Operand: Operation,)+
            {
                run(&($(Assignment { target: self.0.$index, expr: exprs.$index.into_operand() },)+))
            }

            /// The source of the kernel that [`assign`](Self::assign) would compile.
            pub fn kernel_source<$($e),+>(self, exprs: ($($e,)+)) -> String
            where
                $($e: IntoOperand, $e::Operand: Operation,)+
            {
                source_of(&($(Assignment { target: self.0.$index, expr: exprs.$index.into_operand() },)+))
            }
        }
    };
}

results_assign!(T0 E0 0);
results_assign!(T0 E0 0, T1 E1 1);
results_assign!(T0 E0 0, T1 E1 1, T2 E2 2);
results_assign!(T0 E0 0, T1 E1 1, T2 E2 2, T3 E3 3);
results_assign!(T0 E0 0, T1 E1 1, T2 E2 2, T3 E3 3, T4 E4 4);
results_assign!(T0 E0 0, T1 E1 1, T2 E2 2, T3 E3 3, T4 E4 4, T5 E5 5);
results_assign!(T0 E0 0, T1 E1 1, T2 E2 2, T3 E3 3, T4 E4 4, T5 E5 5, T6 E6 6);
results_assign!(T0 E0 0, T1 E1 1, T2 E2 2, T3 E3 3, T4 E4 4, T5 E5 5, T6 E6 6, T7 E7 7);
results_assign!(T0 E0 0, T1 E1 1, T2 E2 2, T3 E3 3, T4 E4 4, T5 E5 5, T6 E6 6, T7 E7 7, T8 E8 8);
results_assign!(T0 E0 0, T1 E1 1, T2 E2 2, T3 E3 3, T4 E4 4, T5 E5 5, T6 E6 6, T7 E7 7, T8 E8 8, T9 E9 9);
results_assign!(T0 E0 0, T1 E1 1, T2 E2 2, T3 E3 3, T4 E4 4, T5 E5 5, T6 E6 6, T7 E7 7, T8 E8 8, T9 E9 9, T10 E10 10);
results_assign!(T0 E0 0, T1 E1 1, T2 E2 2, T3 E3 3, T4 E4 4, T5 E5 5, T6 E6 6, T7 E7 7, T8 E8 8, T9 E9 9, T10 E10 10, T11 E11 11);
