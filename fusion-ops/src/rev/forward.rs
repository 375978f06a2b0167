//! Recording a step: one forward kernel that computes the value and stores
//! the step's local partials.
//!
//! The forward kernel evaluates the expression as any fused kernel does
//! and, at each element of its grid, the derivative of that element with
//! respect to every variable element it reads (tangents, see `dual.rs`).
//! Those partials are stored, one grid-sized buffer per variable (or per
//! scattered read, with the index read), so the reverse kernel needs
//! nothing but the partials and the adjoints: constants are not kept alive
//! and nothing is recomputed.
//!
//! How each variable's partial is applied (`Mode`) decides whether the
//! reverse kernel needs atomics:
//! - `Identity`: every read is at the work item's own element of a
//!   variable shaped like the grid: a plain `+=`, one work item per element.
//! - `Reduce`: a `1 x 1` variable (a broadcast scalar) of a step whose
//!   result is larger: the reverse kernel's work-groups sum its
//!   contributions in local memory, the last group adds them.
//! - `Scatter`: anything else (transposes, blocks, broadcasts, indexing with
//!   repeated indices, one variable read at two positions): contributions
//!   at the flat index the forward kernel stored, summed in the work item
//!   while consecutive ones share a target, then added atomically.
//! - `ScatterLocal`: a `Scatter` whose variable is small (group
//!   intercepts read through `indexing`, a broadcast block): each
//!   work-group first sums into a local-memory copy of the adjoint, then
//!   adds that copy once; the reverse pass picks it at launch.
//! - `Summed`: in a step whose result is `1 x 1` (a summed log density),
//!   the forward kernel itself sums the contributions: the sum for a
//!   `1 x 1` variable (all of them through one tree, `ScalarSums`), and
//!   `xᵀ·c` for `v` read through a product `x · v` read inline (see
//!   `rev::inline`). The reverse kernel only scales those sums by the
//!   seed: no atomics, nothing grid-sized stored or read back.
//!
//! In a step with a `1 x 1` result, an `Identity` partial is the whole
//! gradient of its variable at seed one. While that variable's adjoint is
//! zero (and the variable long, `LEND_MIN_ELEMENTS`), the forward kernel
//! stores the partial in the adjoint's own buffer
//! (`LentAdjoint` in `var.rs`): the reverse pass then has nothing to move
//! when the seed is one, and scales in place otherwise. A density with
//! vector parameters thus reads its arguments and writes their gradients
//! once, in one kernel.

use crate::binder::{Binder, Identity};
use crate::driver::run_direct;
use crate::generator::{Generator, Index};
use crate::launch_shape::LaunchShape;
use crate::operation::HeldProduct;
use crate::operation::{Operation, Shape};
use crate::outputs::{Assignment, ColwiseAssignment, OutputList, ScalarSums, Schedule};
use crate::reductions::SumOp;
use crate::rev::dual::Dual;
use crate::rev::handle::VarHandle;
use crate::rev::reverse::ElementwiseStep;
use crate::rev::var::{LentAdjoint, Var};
use crate::rev::{Differentiable, ProductReads, tape};
use crate::transpose_product::{TransposeProductAssignment, TransposeVectorMultiply};
use clfuse_core::expr::{Load, MatrixRef};
use clfuse_core::{Access, ClType, Error, MatrixCl, Result, Runtime, View};
use std::any::TypeId;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// What the step's result is made of its expression's elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Root {
    /// Element `(i, j)` of the result is element `(i, j)` of the expression.
    Elementwise,
    /// The result is `1 x cols`: the sums of the expression's columns.
    ColwiseSum,
}

impl Root {
    pub(crate) fn code(self) -> u32 {
        match self {
            Root::Elementwise => 0,
            Root::ColwiseSum => 1,
        }
    }
}

/// How one stored partial reaches its variable's adjoint (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Identity,
    Reduce,
    Scatter,
    ScatterLocal,
    Summed,
}

impl Mode {
    pub(crate) fn code(self) -> u32 {
        match self {
            Mode::Identity => 0,
            Mode::Reduce => 1,
            Mode::Scatter => 2,
            Mode::ScatterLocal => 3,
            Mode::Summed => 4,
        }
    }
}

/// One partial: its variable, how it is applied, which tangents of the
/// expression's [`Dual`] it sums, and its buffers.
pub(crate) struct PartialSpec<T: ClType> {
    pub(crate) var: Rc<dyn VarHandle>,
    pub(crate) mode: Mode,
    tangents: Vec<usize>,
    pub(crate) partial: Partial<T>,
    pub(crate) index: Option<MatrixCl<i32>>,
    /// For a `Summed` partial through a product: which of the step's
    /// inline products (binding order).
    through: Option<usize>,
    /// The variable's adjoint buffer, when the partial is stored there
    /// (`partial` then shares that buffer; see [`LentAdjoint`]).
    pub(crate) lent: Option<Rc<LentAdjoint<T>>>,
}

/// A partial's values: stored by the forward kernel, the same number at
/// every element (`x + y`, `a - b`: nothing to store or read), or the same
/// values as an earlier partial of the step (a broadcast scalar and the
/// vector it is added to), whose buffer it reads.
pub(crate) enum Partial<T: ClType> {
    Stored(MatrixCl<T>),
    Constant(f64),
    SameAs(usize),
}

impl<T: ClType> PartialSpec<T> {
    /// A gradient computed before the reverse pass (`Summed`): `gradient`
    /// has `var`'s shape.
    pub(crate) fn summed(var: Rc<dyn VarHandle>, gradient: MatrixCl<T>) -> Self {
        PartialSpec {
            var,
            mode: Mode::Summed,
            tangents: Vec::new(),
            partial: Partial::Stored(gradient),
            index: None,
            through: None,
            lent: None,
        }
    }
}

impl<T: ClType> Partial<T> {
    pub(crate) fn constant(&self) -> Option<f64> {
        match self {
            Partial::Constant(c) => Some(*c),
            _ => None,
        }
    }

    pub(crate) fn same_as(&self) -> Option<usize> {
        match self {
            Partial::SameAs(j) => Some(*j),
            _ => None,
        }
    }
}

/// One partial of a step's plan: which variable (an index into the
/// variables in binding order), how it is applied, which tangents it sums,
/// and their sum when they are all numbers (not scattered partials: they
/// store indices anyway).
#[derive(Debug)]
struct PlannedPartial {
    var: usize,
    mode: Mode,
    tangents: Vec<usize>,
    constant: Option<f64>,
    /// An earlier partial with the same tangents (its buffer is read).
    same_as: Option<usize>,
    /// A `Summed` partial through the product with this matrix (an index
    /// into the step's inline products, binding order).
    through: Option<usize>,
}

/// Decides the partials of `dual` on a `grid`; `vars` are the expression's
/// variables and `products` the buffer ids of its inline products, both in
/// binding order. `None` when the products cannot be read inline here: one
/// read away from the work item's own row, or a variable that the step
/// also scatters into (its summed and scattered contributions would race).
fn plan(
    dual: &Dual,
    grid: (usize, usize),
    vars: &[Rc<dyn VarHandle>],
    products: &[u64],
    scalar: bool,
) -> Result<Option<Vec<PlannedPartial>>> {
    let mut by_var: Vec<(usize, Option<u64>, Vec<usize>)> = Vec::new();
    for (k, (occurrence, _)) in dual.tangents.iter().enumerate() {
        if occurrence.through.is_some() && occurrence.at != Index::work_item() {
            return Ok(None);
        }
        let id = occurrence.var.value_id();
        let var = vars
            .iter()
            .position(|v| v.value_id() == id)
            .ok_or_else(|| internal_plan("a variable read was not bound"))?;
        match by_var
            .iter_mut()
            .find(|(v, through, _)| *v == var && *through == occurrence.through)
        {
            Some((_, _, list)) => list.push(k),
            None => by_var.push((var, occurrence.through, vec![k])),
        }
    }
    // A step whose result is 1 x 1 reduces in its forward kernel anyway: it
    // sums the 1 x 1 variables' contributions too (all through one tree),
    // instead of storing them per element for the reverse pass to read.
    let mut planned = Vec::new();
    let constant = |list: &[usize]| -> Option<f64> {
        list.iter()
            .map(|&k| crate::rev::dual::number(&dual.tangents[k].1))
            .sum()
    };
    let one = |var, mode, list: Vec<usize>, constant| PlannedPartial {
        var,
        mode,
        constant,
        tangents: list,
        same_as: None,
        through: None,
    };
    for (var, through, list) in by_var {
        let shape = vars[var].shape();
        let at_own_element = list
            .iter()
            .all(|&k| dual.tangents[k].0.at == Index::work_item());
        if let Some(id) = through {
            let product = products
                .iter()
                .position(|p| *p == id)
                .ok_or_else(|| internal_plan("a product read inline was not bound"))?;
            planned.push(PlannedPartial {
                through: Some(product),
                ..one(var, Mode::Summed, list, None)
            });
        } else if shape == (1, 1) && scalar {
            planned.push(one(var, Mode::Summed, list, None));
        } else if shape == (1, 1) {
            let c = constant(&list);
            planned.push(one(var, Mode::Reduce, list, c));
        } else if at_own_element && shape == grid {
            let c = constant(&list);
            planned.push(one(var, Mode::Identity, list, c));
        } else {
            for k in list {
                planned.push(one(var, Mode::Scatter, vec![k], None));
            }
        }
    }
    let summed_and_scattered = planned.iter().any(|p| {
        p.mode == Mode::Summed
            && planned
                .iter()
                .any(|q| q.var == p.var && q.mode == Mode::Scatter)
    });
    if summed_and_scattered {
        return Ok(None);
    }
    // Partials summing the same tangent variables hold the same values.
    let names = |p: &PlannedPartial| -> Vec<&str> {
        p.tangents
            .iter()
            .map(|&k| dual.tangents[k].1.as_str())
            .collect()
    };
    for k in 0..planned.len() {
        let stored = |p: &PlannedPartial| {
            p.constant.is_none() && matches!(p.mode, Mode::Identity | Mode::Reduce)
        };
        if !stored(&planned[k]) {
            continue;
        }
        planned[k].same_as = (0..k).find(|&j| {
            stored(&planned[j])
                && planned[j].same_as.is_none()
                && names(&planned[j]) == names(&planned[k])
        });
    }
    Ok(Some(planned))
}

fn internal_plan(reason: &str) -> Error {
    Error::InvalidArgument {
        function: "eval",
        argument: "expr",
        reason: format!("internal: {reason}"),
    }
}

/// What decides a plan: the expression's type, its alias pattern (which
/// also marks products read inline, only ever in steps with a `1 x 1`
/// result), and how each variable's shape relates to the grid (`1 x 1`,
/// the grid's, other).
type PlanKey = (TypeId, Vec<u32>, Vec<u8>, bool);

/// A plan, or `None` when the step cannot read its products inline.
type CachedPlan = Option<Rc<Vec<PlannedPartial>>>;

thread_local! {
    /// Plans by structure, so that a cache hit generates no source.
    static PLANS: RefCell<HashMap<PlanKey, CachedPlan>> = RefCell::new(HashMap::new());
}

/// The plan of `op` on `grid`: looked up, or found once by generating the
/// tangents into a scratch kernel. `products` are the buffer ids of the
/// products read inline, in binding order.
fn cached_plan<O: Differentiable>(
    op: &O,
    grid: (usize, usize),
    vars: &[Rc<dyn VarHandle>],
    products: &[u64],
    pattern: Vec<u32>,
    scalar: bool,
) -> Result<CachedPlan> {
    let shapes = vars
        .iter()
        .map(|v| match v.shape() {
            (1, 1) => 1,
            s if s == grid => 2,
            _ => 0,
        })
        .collect();
    let key = (TypeId::of::<O::Key>(), pattern, shapes, scalar);
    if let Some(found) = PLANS.with(|p| p.borrow().get(&key).cloned()) {
        return Ok(found);
    }
    let mut probe = Generator::new();
    let dual = op.generate_tangents(&mut probe, &Index::work_item())?;
    let planned = plan(&dual, grid, vars, products, scalar)?.map(Rc::new);
    PLANS.with(|p| p.borrow_mut().insert(key, planned.clone()));
    Ok(planned)
}

/// Whether a step over `grid` summed column-wise has a `1 x 1` result.
fn is_scalar(grid: (usize, usize)) -> bool {
    grid.1 == 1
}

/// Fewest elements of a variable whose adjoint's buffer a step borrows
/// for its partial ([`allocate`]). Below this the reverse kernel's traffic
/// it saves is under a microsecond, while another step adding to the same
/// adjoint first costs a copy command: a sampler's 24 coefficients, read by
/// a prior and a likelihood, took 80–150 µs longer per call on an H200.
pub(crate) const LEND_MIN_ELEMENTS: usize = 1 << 16;

/// Allocates the buffers of a plan. In a step with a `1 x 1` result
/// (`scalar`), a variable of at least [`LEND_MIN_ELEMENTS`] read only at
/// each element of the grid stores its partial in its own adjoint's buffer
/// while that adjoint is zero ([`LentAdjoint`]): the partial is then
/// already its gradient.
fn allocate<T: ClType>(
    planned: &[PlannedPartial],
    grid: (usize, usize),
    vars: &[Rc<dyn VarHandle>],
    scalar: bool,
) -> Result<Vec<PartialSpec<T>>> {
    let lending = Runtime::get()?.tuning().lend_adjoints != Some(false);
    let lendable = |k: usize, p: &PlannedPartial| {
        lending
            && scalar
            && grid.0 * grid.1 >= LEND_MIN_ELEMENTS
            && p.mode == Mode::Identity
            && p.constant.is_none()
            && p.same_as.is_none()
            && vars[p.var].cl_type() == T::CL_NAME
            && planned.iter().filter(|q| q.var == p.var).count() == 1
            && !planned.iter().any(|q| q.same_as == Some(k))
    };
    planned
        .iter()
        .enumerate()
        .map(|(k, p)| {
            if p.mode == Mode::Summed {
                // The forward kernel's sums: one per element of the variable.
                let (rows, cols) = vars[p.var].shape();
                let sums = MatrixCl::<T>::uninitialized(rows, cols)?;
                return Ok(PartialSpec {
                    tangents: p.tangents.clone(),
                    through: p.through,
                    ..PartialSpec::summed(vars[p.var].clone(), sums)
                });
            }
            let index = match p.mode {
                Mode::Scatter | Mode::ScatterLocal => {
                    Some(MatrixCl::<i32>::uninitialized(grid.0, grid.1)?)
                }
                _ => None,
            };
            let lent = if lendable(k, p) {
                vars[p.var]
                    .lend_adjoint()
                    .and_then(|lent| lent.downcast::<LentAdjoint<T>>().ok())
            } else {
                None
            };
            let partial = match (p.constant, p.same_as, &lent) {
                (Some(c), _, _) => Partial::Constant(c),
                (None, Some(j), _) => Partial::SameAs(j),
                (None, None, Some(lent)) => Partial::Stored(lent.buffer.share()),
                (None, None, None) => {
                    Partial::Stored(MatrixCl::<T>::uninitialized(grid.0, grid.1)?)
                }
            };
            Ok(PartialSpec {
                var: vars[p.var].clone(),
                mode: p.mode,
                tangents: p.tangents.clone(),
                partial,
                index,
                through: None,
                lent,
            })
        })
        .collect()
}

/// Evaluates `op` on variables into a new [`Var`] with one kernel and
/// records its reverse step.
pub(crate) fn record<O: Differentiable>(op: O, root: Root) -> Result<Var<O::Scalar>> {
    record_with(op, root, &())
}

/// [`record`], with `also` computed by the same forward kernel (the checks
/// of the operands); an `Err` from it is returned before the step is
/// recorded.
pub(crate) fn record_with<O: Differentiable, L: OutputList>(
    op: O,
    root: Root,
    also: &L,
) -> Result<Var<O::Scalar>> {
    if O::Scalar::RANK == 0 {
        return Err(Error::InvalidArgument {
            function: "eval",
            argument: "expr",
            reason:
                "an integer expression of variables has no derivative; cast it or compare instead"
                    .into(),
        });
    }
    let Some(grid) = op.shape()? else {
        return Err(Error::InvalidArgument {
            function: "eval",
            argument: "expr",
            reason: "a scalar-only expression has no shape".into(),
        });
    };
    // Nested steps (products, row-wise reductions) run first; the probe
    // below then sees their results as variables. A step with a 1 x 1
    // result reads its products inline where it can (see `rev::inline`).
    let scalar = root == Root::ColwiseSum && is_scalar(grid);
    let mut reads = if scalar {
        ProductReads::Inline
    } else {
        ProductReads::Apart
    };
    op.record_leaves(reads)?;
    let (vars, products, planned) = match bind_and_plan(&op, grid, scalar)? {
        (vars, products, Some(planned)) => (vars, products, planned),
        _ => {
            // A product cannot be read inline here: each becomes a step.
            reads = ProductReads::Apart;
            op.record_leaves(reads)?;
            match bind_and_plan(&op, grid, scalar)? {
                (vars, products, Some(planned)) => (vars, products, planned),
                _ => return Err(internal_plan("a product stayed inline")),
            }
        }
    };
    let specs = allocate::<O::Scalar>(&planned, grid, &vars, scalar)?;
    let stash = RefCell::new(None);
    let tangents = Tangents {
        expr: &op,
        stash: &stash,
        reads,
    };
    let stores = PartialStores {
        grid,
        stash: &stash,
        specs: &specs,
    };
    let value = match root {
        Root::Elementwise => {
            let out = MatrixCl::<O::Scalar>::uninitialized(grid.0, grid.1)?;
            run_direct(&(Assignment::new(&out, tangents), stores, also))?;
            out
        }
        Root::ColwiseSum if scalar => {
            // The value and the 1 x 1 variables' partials: one tree, no
            // second launch.
            let out = MatrixCl::<O::Scalar>::uninitialized(1, 1)?;
            let (sums, products) = summed_outputs(&specs, &products, grid, &stash)?;
            let sums = ScalarSums::new((&out, tangents), sums);
            run_direct(&(sums, stores, products, also))?;
            out
        }
        Root::ColwiseSum => {
            // Several columns: nothing is summed or read inline.
            let out = MatrixCl::<O::Scalar>::uninitialized(1, grid.1)?;
            run_direct(&(
                ColwiseAssignment::<O::Scalar, SumOp, _>::new(&out, tangents),
                stores,
                also,
            ))?;
            out
        }
    };
    if let Some(Err(e)) = stash.into_inner() {
        return Err(e);
    }
    let result = Var::computed(value, None);
    if specs.is_empty() {
        return Ok(result);
    }
    let step = ElementwiseStep {
        result: result.0.clone(),
        root,
        grid,
        specs,
    };
    result.0.step.set(Some(tape::push(Box::new(step))?));
    Ok(result)
}

type Stash = RefCell<Option<Result<Dual>>>;

/// The expression of a recorded step: generates its value with tangents and
/// leaves the tangents for [`PartialStores`].
struct Tangents<'s, E> {
    expr: &'s E,
    stash: &'s Stash,
    /// How the step reads its products (the driver records the leaves
    /// again before the launch: a no-op for nodes already recorded).
    reads: ProductReads,
}

/// Marks the cache key of a step's forward kernel apart from a plain one.
struct WithTangents<K>(K);

impl<E: Differentiable> Operation for Tangents<'_, E> {
    type Scalar = E::Scalar;
    type Key = WithTangents<E::Key>;

    fn shape(&self) -> Result<Shape> {
        self.expr.shape()
    }

    fn view(&self) -> View {
        self.expr.view()
    }

    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        let dual = self.expr.generate_tangents(g, at);
        let value = dual
            .as_ref()
            .map_or_else(|_| "0".to_string(), |d| d.value.clone());
        *self.stash.borrow_mut() = Some(dual);
        value
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        self.expr.bind(b)
    }

    fn evaluate_leaves(&self, _held: HeldProduct) -> Result<()> {
        self.expr.record_leaves(self.reads)
    }

    fn contains_reduction(&self) -> bool {
        self.expr.contains_reduction()
    }
}

/// The output storing a step's partials (and scattered indices).
struct PartialStores<'s, T: ClType> {
    grid: (usize, usize),
    stash: &'s Stash,
    specs: &'s [PartialSpec<T>],
}

struct PartialStoresKey<T>(T);

impl<T: ClType> OutputList for PartialStores<'_, T> {
    type Key = PartialStoresKey<T>;

    fn grid(&self, grid: &mut Option<(usize, usize)>) -> Result<()> {
        crate::outputs::common_grid(grid, self.grid)
    }

    fn schedule(&self) -> Schedule {
        Schedule::ELEMENTWISE
    }

    fn evaluate_leaves(&self, _held: HeldProduct) -> Result<()> {
        Ok(())
    }

    fn prepare(&self, _launch: &LaunchShape) -> Result<()> {
        Ok(())
    }

    fn bind_exprs<'a>(&'a self, _b: &mut Binder<'a>) {}

    fn bind_outputs<'a>(&'a self, b: &mut Binder<'a>) {
        for spec in self.specs {
            // Which tangents each partial sums decides the code.
            b.structure(spec.mode.code() | (spec.tangents.len() as u32) << 3);
            if spec.mode == Mode::Summed {
                continue; // summed by outputs of their own
            }
            let Partial::Stored(partial) = &spec.partial else {
                // Nothing stored: a number, or another partial's buffer.
                b.structure(u32::MAX - spec.partial.same_as().map_or(0, |j| j as u32 + 1));
                continue;
            };
            b.matrix(partial, Access::Write, false);
            if let Some(index) = &spec.index {
                b.matrix(index, Access::Write, false);
            }
        }
    }

    fn generate_exprs(&self, _g: &mut Generator, _values: &mut Vec<String>) {}

    fn generate_outputs(&self, g: &mut Generator, _values: &mut std::slice::Iter<'_, String>) {
        let stash = self.stash.borrow();
        let Some(Ok(dual)) = stash.as_ref() else {
            return; // the error is reported by `record`
        };
        let here = Index::work_item();
        for spec in self.specs {
            let Partial::Stored(partial) = &spec.partial else {
                continue;
            };
            if spec.mode == Mode::Summed {
                continue;
            }
            let sum: Vec<&str> = spec
                .tangents
                .iter()
                .filter_map(|&k| dual.tangents.get(k).map(|(_, t)| t.as_str()))
                .collect();
            g.store(
                Identity::Buffer(partial.buffer_id()),
                T::CL_NAME,
                &here,
                &sum.join(" + "),
            );
            if let (Some(index), Some(flat)) = (
                &spec.index,
                spec.tangents
                    .first()
                    .and_then(|&k| dual.tangents.get(k))
                    .map(|(o, _)| &o.flat),
            ) {
                g.store(Identity::Buffer(index.buffer_id()), "int", &here, flat);
            }
        }
    }

    fn finish(&self, _launch: &LaunchShape) -> Result<()> {
        Ok(())
    }

    fn target_ids(&self, ids: &mut Vec<u64>) {
        for spec in self.specs.iter().filter(|s| s.mode != Mode::Summed) {
            if let Partial::Stored(partial) = &spec.partial {
                ids.push(partial.buffer_id());
            }
            if let Some(index) = &spec.index {
                ids.push(index.buffer_id());
            }
        }
    }
}

/// The matrices of a step's inline products, in binding order.
type Products<'o, T> = Vec<&'o MatrixCl<T>>;

/// Binds `op` (after `record_leaves`) and finds its plan: its variables
/// (each checked usable), the matrices of its inline products, and the
/// plan, `None` when the products cannot be read inline (only a `scalar`
/// step, one with a `1 x 1` result, reads them inline).
#[allow(clippy::type_complexity)]
fn bind_and_plan<O: Differentiable>(
    op: &O,
    grid: (usize, usize),
    scalar: bool,
) -> Result<(Vec<Rc<dyn VarHandle>>, Products<'_, O::Scalar>, CachedPlan)> {
    let mut binder = Binder::new();
    op.bind(&mut binder);
    let vars: Vec<Rc<dyn VarHandle>> = binder
        .annotations()
        .iter()
        .filter_map(|a| a.downcast_ref::<Rc<dyn VarHandle>>().cloned())
        .collect();
    for var in &vars {
        var.usable("eval")?;
    }
    let ids: Vec<u64> = binder.inline_products().iter().map(|(id, _)| *id).collect();
    let products: Option<Products<'_, O::Scalar>> = binder
        .inline_products()
        .iter()
        .map(|(_, x)| x.downcast_ref::<MatrixCl<O::Scalar>>())
        .collect();
    let Some(products) = products.filter(|p| scalar || p.is_empty()) else {
        // A step with a larger result, or a product of another element
        // type than the step's: not inline.
        return Ok((vars, Vec::new(), None));
    };
    let planned = cached_plan(op, grid, &vars, &ids, binder.pattern().to_vec(), scalar)?;
    Ok((vars, products, planned))
}

/// The sum of some of a step's tangents, as an expression of its forward
/// kernel: read from the [`Stash`] that the step's expression, generated
/// first, filled.
struct StashedSum<'s, T> {
    stash: &'s Stash,
    tangents: &'s [usize],
    grid: (usize, usize),
    _element: std::marker::PhantomData<T>,
}

/// The cache key of a [`StashedSum`] (which tangents it sums is bound as
/// structure).
struct StashedSumKey<T>(std::marker::PhantomData<T>);

impl<T: ClType> Operation for StashedSum<'_, T> {
    type Scalar = T;
    type Key = StashedSumKey<T>;

    fn shape(&self) -> Result<Shape> {
        Ok(Some(self.grid))
    }

    fn view(&self) -> View {
        View::Entire
    }

    fn generate(&self, _g: &mut Generator, _at: &Index) -> String {
        let stash = self.stash.borrow();
        let Some(Ok(dual)) = stash.as_ref() else {
            return "0".into(); // the error is reported by `record`
        };
        let sum: Vec<&str> = self
            .tangents
            .iter()
            .filter_map(|&k| dual.tangents.get(k).map(|(_, t)| t.as_str()))
            .collect();
        if sum.is_empty() {
            "0".into()
        } else {
            sum.join(" + ")
        }
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        b.structure(self.tangents.len() as u32);
        for &k in self.tangents {
            b.structure(k as u32);
        }
    }
}

/// The outputs of a step's `Summed` partials: the sums of the `1 x 1`
/// variables' (all through one tree), `xᵀ·c` for each variable read through
/// a product (`x` staged and read once with the product itself).
#[allow(clippy::type_complexity)]
fn summed_outputs<'s, T: ClType>(
    specs: &'s [PartialSpec<T>],
    products: &[&'s MatrixCl<T>],
    grid: (usize, usize),
    stash: &'s Stash,
) -> Result<(
    Vec<(&'s MatrixCl<T>, StashedSum<'s, T>)>,
    Vec<TransposeProductAssignment<'s, T, Load<'s, T>, StashedSum<'s, T>>>,
)> {
    let (mut sums, mut through) = (Vec::new(), Vec::new());
    for spec in specs.iter().filter(|s| s.mode == Mode::Summed) {
        let Partial::Stored(target) = &spec.partial else {
            return Err(internal_plan("a summed partial without its buffer"));
        };
        let sum = StashedSum {
            stash,
            tangents: &spec.tangents,
            grid,
            _element: std::marker::PhantomData,
        };
        match spec.through {
            None => sums.push((target, sum)),
            Some(k) => {
                let x = products
                    .get(k)
                    .ok_or_else(|| internal_plan("a product read inline was not bound"))?;
                let product = TransposeVectorMultiply(Load(MatrixRef::Borrowed(*x)), sum);
                through.push(TransposeProductAssignment::new(target, product));
            }
        }
    }
    Ok((sums, through))
}
