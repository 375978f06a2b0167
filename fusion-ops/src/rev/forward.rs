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
//! - `Reduce`: a `1 x 1` variable (a broadcast scalar): the work-group sums
//!   its contributions in local memory, then one atomic add per group.
//! - `Scatter`: anything else (transposes, blocks, broadcasts, indexing with
//!   repeated indices, one variable read at two positions): contributions
//!   at the flat index the forward kernel stored, summed in the work item
//!   while consecutive ones share a target, then added atomically.
//! - `ScatterLocal`: a `Scatter` whose variable is small (group
//!   intercepts read through `indexing`, a broadcast block): each
//!   work-group first sums into a local-memory copy of the adjoint, then
//!   adds that copy once; the reverse pass picks it at launch.

use crate::binder::{Binder, Identity};
use crate::driver::run_direct;
use crate::generator::{Generator, Index};
use crate::launch_shape::LaunchShape;
use crate::operation::{Operation, Shape};
use crate::outputs::{Assignment, ColwiseAssignment, OutputList, Schedule};
use crate::reductions::SumOp;
use crate::rev::dual::Dual;
use crate::rev::reverse::ElementwiseStep;
use crate::rev::var::{Differentiable, Var};
use crate::rev::{Constant, Depends, tape};
use clfuse_core::{Access, ClType, Error, MatrixCl, Result, View};
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
}

impl Mode {
    pub(crate) fn code(self) -> u32 {
        match self {
            Mode::Identity => 0,
            Mode::Reduce => 1,
            Mode::Scatter => 2,
            Mode::ScatterLocal => 3,
        }
    }
}

/// One partial: its variable, how it is applied, which tangents of the
/// expression's [`Dual`] it sums, and its buffers.
pub(crate) struct PartialSpec<T: ClType> {
    pub(crate) var: Rc<dyn Differentiable>,
    pub(crate) mode: Mode,
    tangents: Vec<usize>,
    pub(crate) partial: Partial<T>,
    pub(crate) index: Option<MatrixCl<i32>>,
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
}

/// Decides the partials of `dual` on a `grid`; `vars` are the expression's
/// variables in binding order.
fn plan(
    dual: &Dual,
    grid: (usize, usize),
    vars: &[Rc<dyn Differentiable>],
) -> Result<Vec<PlannedPartial>> {
    let mut by_var: Vec<(usize, Vec<usize>)> = Vec::new();
    for (k, (occurrence, _)) in dual.tangents.iter().enumerate() {
        let id = occurrence.var.value_id();
        let var = vars
            .iter()
            .position(|v| v.value_id() == id)
            .ok_or_else(|| internal_plan("a variable read was not bound"))?;
        match by_var.iter_mut().find(|(v, _)| *v == var) {
            Some((_, list)) => list.push(k),
            None => by_var.push((var, vec![k])),
        }
    }
    let mut planned = Vec::new();
    let constant = |list: &[usize]| -> Option<f64> {
        list.iter()
            .map(|&k| crate::rev::dual::number(&dual.tangents[k].1))
            .sum()
    };
    for (var, list) in by_var {
        let shape = vars[var].shape();
        let at_own_element = list
            .iter()
            .all(|&k| dual.tangents[k].0.at == Index::work_item());
        if shape == (1, 1) {
            planned.push(PlannedPartial {
                var,
                mode: Mode::Reduce,
                constant: constant(&list),
                tangents: list,
                same_as: None,
            });
        } else if at_own_element && shape == grid {
            planned.push(PlannedPartial {
                var,
                mode: Mode::Identity,
                constant: constant(&list),
                tangents: list,
                same_as: None,
            });
        } else {
            for k in list {
                planned.push(PlannedPartial {
                    var,
                    mode: Mode::Scatter,
                    tangents: vec![k],
                    constant: None,
                    same_as: None,
                });
            }
        }
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
    Ok(planned)
}

fn internal_plan(reason: &str) -> Error {
    Error::InvalidArgument {
        function: "eval",
        argument: "expr",
        reason: format!("internal: {reason}"),
    }
}

/// What decides a plan: the expression's type, its alias pattern, and how
/// each variable's shape relates to the grid (`1 x 1`, the grid's, other).
type PlanKey = (TypeId, Vec<u32>, Vec<u8>);

thread_local! {
    /// Plans by structure, so that a cache hit generates no source.
    static PLANS: RefCell<HashMap<PlanKey, Rc<Vec<PlannedPartial>>>> = RefCell::new(HashMap::new());
}

/// The plan of `op` on `grid`: looked up, or found once by generating the
/// tangents into a scratch kernel.
fn cached_plan<O: Operation>(
    op: &O,
    grid: (usize, usize),
    vars: &[Rc<dyn Differentiable>],
    pattern: Vec<u32>,
) -> Result<Rc<Vec<PlannedPartial>>> {
    let shapes = vars
        .iter()
        .map(|v| match v.shape() {
            (1, 1) => 1,
            s if s == grid => 2,
            _ => 0,
        })
        .collect();
    let key = (TypeId::of::<O::Key>(), pattern, shapes);
    if let Some(found) = PLANS.with(|p| p.borrow().get(&key).cloned()) {
        return Ok(found);
    }
    let mut probe = Generator::new();
    let dual = op.generate_tangents(&mut probe, &Index::work_item())?;
    let planned = Rc::new(plan(&dual, grid, vars)?);
    PLANS.with(|p| p.borrow_mut().insert(key, planned.clone()));
    Ok(planned)
}

/// Allocates the buffers of a plan.
fn allocate<T: ClType>(
    planned: &[PlannedPartial],
    grid: (usize, usize),
    vars: &[Rc<dyn Differentiable>],
) -> Result<Vec<PartialSpec<T>>> {
    planned
        .iter()
        .map(|p| {
            let index = match p.mode {
                Mode::Scatter | Mode::ScatterLocal => {
                    Some(MatrixCl::<i32>::uninitialized(grid.0, grid.1)?)
                }
                _ => None,
            };
            Ok(PartialSpec {
                var: vars[p.var].clone(),
                mode: p.mode,
                tangents: p.tangents.clone(),
                partial: match (p.constant, p.same_as) {
                    (Some(c), _) => Partial::Constant(c),
                    (None, Some(j)) => Partial::SameAs(j),
                    (None, None) => Partial::Stored(MatrixCl::<T>::uninitialized(grid.0, grid.1)?),
                },
                index,
            })
        })
        .collect()
}

/// Evaluates `op` on variables into a new [`Var`] with one kernel and
/// records its reverse step.
pub(crate) fn record<O: Operation>(op: O, root: Root) -> Result<Var<O::Scalar>> {
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
    // below then sees their results as variables.
    op.evaluate_leaves()?;
    let mut binder = Binder::new();
    op.bind(&mut binder);
    let vars = binder.variables().to_vec();
    for var in &vars {
        var.usable("eval")?;
    }
    let planned = cached_plan(&op, grid, &vars, binder.pattern().to_vec())?;
    drop(binder);
    let specs = allocate::<O::Scalar>(&planned, grid, &vars)?;
    let stash = RefCell::new(None);
    let tangents = Tangents {
        expr: &op,
        stash: &stash,
    };
    let stores = PartialStores {
        grid,
        stash: &stash,
        specs: &specs,
    };
    let value = match root {
        Root::Elementwise => {
            let out = MatrixCl::<O::Scalar>::uninitialized(grid.0, grid.1)?;
            run_direct(&(Assignment::new(&out, tangents), stores))?;
            out
        }
        Root::ColwiseSum => {
            let out = MatrixCl::<O::Scalar>::uninitialized(1, grid.1)?;
            run_direct(&(
                ColwiseAssignment::<O::Scalar, SumOp, _>::new(&out, tangents),
                stores,
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
}

/// Marks the cache key of a step's forward kernel apart from a plain one.
struct WithTangents<K>(K);

impl<E: Depends> Depends for Tangents<'_, E> {
    type Dependence = Constant;
}

impl<E: Operation> Operation for Tangents<'_, E> {
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

    fn evaluate_leaves(&self) -> Result<()> {
        self.expr.evaluate_leaves()
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

    fn evaluate_leaves(&self) -> Result<()> {
        Ok(())
    }

    fn prepare(&self, _launch: &LaunchShape) -> Result<()> {
        Ok(())
    }

    fn bind_exprs<'a>(&'a self, _b: &mut Binder<'a>) {}

    fn bind_outputs<'a>(&'a self, b: &mut Binder<'a>) {
        for spec in self.specs {
            // Which tangents each partial sums decides the code.
            b.structure(spec.mode.code() | (spec.tangents.len() as u32) << 2);
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
        for spec in self.specs {
            if let Partial::Stored(partial) = &spec.partial {
                ids.push(partial.buffer_id());
            }
            if let Some(index) = &spec.index {
                ids.push(index.buffer_id());
            }
        }
    }
}
