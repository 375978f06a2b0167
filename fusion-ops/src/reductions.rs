//! Reductions fused with the expressions they reduce.
//!
//! Row-wise reductions are operations: each work item loops over its row
//! (the loop bounded by the operand's triangular view for sums), so they
//! compose with anything, e.g. `inv_logit(matrix_vector_multiply(&x, &b) + a)`.
//! Column-wise and full reductions are kernel outputs: every work item
//! computes one element, work-groups combine them in local memory, and a
//! tiny second step combines the work-groups' partial results.

use crate::binder::{Binder, Identity};
use crate::generator::{Generator, Index, Section, StagedMatrix};
use crate::operation::HeldProduct;
use crate::operation::{Operation, Shape};
use crate::precomputed::{Materialized, PrecomputedOperand};
use crate::structural::{Transpose, transpose};
use clfuse_core::{ClType, Error, Expr, IntoOperand, Promote, Result, View};
use std::marker::PhantomData;

/// How values are combined.
pub trait ReduceOp: 'static {
    /// Name used in error messages.
    const NAME: &'static str;
    /// The identity value in OpenCL C for `cl_type`.
    fn init(cl_type: &str) -> &'static str;
    /// The OpenCL C combining `a` and `b`.
    fn combine(cl_type: &str, a: &str, b: &str) -> String;
    /// The identity value on the host.
    fn host_init<T: ClType>() -> T;
    /// Combining on the host.
    fn host_combine(a: f64, b: f64) -> f64;
}

/// Sum.
#[derive(Debug, Clone, Copy)]
pub struct SumOp;
/// Product.
#[derive(Debug, Clone, Copy)]
pub struct ProdOp;
/// Maximum ([`MaxOp`]) or minimum ([`MinOp`]), written once.
#[derive(Debug, Clone, Copy)]
pub struct Extremum<const MAX: bool>;
/// Maximum.
pub type MaxOp = Extremum<true>;
/// Minimum.
pub type MinOp = Extremum<false>;

impl ReduceOp for SumOp {
    const NAME: &'static str = "sum";
    fn init(_: &str) -> &'static str {
        "0"
    }
    fn combine(_: &str, a: &str, b: &str) -> String {
        format!("{a} + {b}")
    }
    fn host_init<T: ClType>() -> T {
        T::default()
    }
    fn host_combine(a: f64, b: f64) -> f64 {
        a + b
    }
}

impl ReduceOp for ProdOp {
    const NAME: &'static str = "prod";
    fn init(_: &str) -> &'static str {
        "1"
    }
    fn combine(_: &str, a: &str, b: &str) -> String {
        format!("{a} * {b}")
    }
    fn host_init<T: ClType>() -> T {
        T::one()
    }
    fn host_combine(a: f64, b: f64) -> f64 {
        a * b
    }
}

impl<const MAX: bool> ReduceOp for Extremum<MAX> {
    const NAME: &'static str = if MAX { "max" } else { "min" };
    fn init(cl_type: &str) -> &'static str {
        match (MAX, cl_type == "int") {
            (true, true) => "INT_MIN",
            (true, false) => "-INFINITY",
            (false, true) => "INT_MAX",
            (false, false) => "INFINITY",
        }
    }
    fn combine(cl_type: &str, a: &str, b: &str) -> String {
        // `fmax`/`fmin` for reals (a NaN operand loses), `max`/`min` for ints.
        let real = if cl_type == "int" { "" } else { "f" };
        format!("{real}{}({a}, {b})", <Self as ReduceOp>::NAME)
    }
    fn host_init<T: ClType>() -> T {
        match (MAX, T::RANK == 0) {
            (true, true) => T::from_f64(i32::MIN as f64),
            (true, false) => T::from_f64(f64::NEG_INFINITY),
            (false, true) => T::from_f64(i32::MAX as f64),
            (false, false) => T::from_f64(f64::INFINITY),
        }
    }
    fn host_combine(a: f64, b: f64) -> f64 {
        if MAX { a.max(b) } else { a.min(b) }
    }
}

/// How a row-wise reduction walks a row in generated code: the combining
/// reductions ([`ReduceOp`]) keep one accumulator; [`LogSumExpOp`] keeps two.
pub trait RowReduce: 'static {
    /// Name used in error messages.
    const NAME: &'static str;
    /// Declares the accumulators before the row's loop; returns their names.
    fn begin(g: &mut Generator, cl_type: &'static str) -> Vec<String>;
    /// Takes in one element `x` of the row (inside the loop).
    fn step(g: &mut Generator, cl_type: &'static str, acc: &[String], x: &str);
    /// The row's result (after the loop).
    fn finish(g: &mut Generator, cl_type: &'static str, acc: &[String]) -> String;
}

impl<R: ReduceOp> RowReduce for R {
    const NAME: &'static str = R::NAME;
    fn begin(g: &mut Generator, cl_type: &'static str) -> Vec<String> {
        vec![g.declare(cl_type, R::init(cl_type))]
    }
    fn step(g: &mut Generator, cl_type: &'static str, acc: &[String], x: &str) {
        g.statement(&format!(
            "{} = {};",
            acc[0],
            R::combine(cl_type, &acc[0], x)
        ));
    }
    fn finish(_: &mut Generator, _: &'static str, acc: &[String]) -> String {
        acc[0].clone()
    }
}

/// `log(Σ exp(x))` in one pass: a running maximum `m` and the sum `s` of
/// `exp(x - m)`, rescaled whenever the maximum grows, so nothing overflows
/// and the row is read once. An empty row gives `-inf`; a `+inf` element
/// gives `+inf`; a NaN gives NaN.
#[derive(Debug, Clone, Copy)]
pub struct LogSumExpOp;

impl RowReduce for LogSumExpOp {
    const NAME: &'static str = "log_sum_exp";
    fn begin(g: &mut Generator, cl_type: &'static str) -> Vec<String> {
        vec![g.declare(cl_type, "-INFINITY"), g.declare(cl_type, "0")]
    }
    fn step(g: &mut Generator, cl_type: &'static str, acc: &[String], x: &str) {
        let (max, sum) = (&acc[0], &acc[1]);
        let x = g.declare(cl_type, x);
        g.statement(&format!("if ({x} > {max}) {{"));
        g.statement(&format!("{sum} = {sum} * exp({max} - {x}) + 1;"));
        g.statement(&format!("{max} = {x};"));
        // Equal infinities add nothing (their difference would be NaN).
        g.statement(&format!("}} else if (!({x} == {max} && isinf({max}))) {{"));
        g.statement(&format!("{sum} += exp({x} - {max});"));
        g.statement("}");
    }
    fn finish(g: &mut Generator, cl_type: &'static str, acc: &[String]) -> String {
        g.declare(cl_type, &format!("{} + log({})", acc[0], acc[1]))
    }
}

/// Reduces each row of an operand to one value: the node built by [`rowwise_sum()`] and friends.
///
/// Of an expression of variables, a row-wise sum is its own step (see
/// reverse mode): the third field holds its result.
#[derive(Debug, Clone)]
pub struct RowwiseReduction<R, E>(pub E, pub PhantomData<R>, pub Materialized);

impl<R: RowReduce, E: Operation> Operation for RowwiseReduction<R, E> {
    type Scalar = E::Scalar;
    type Key = RowwiseReduction<R, E::Key>;

    fn shape(&self) -> Result<Shape> {
        let (r, _) = self.0.shape()?.ok_or_else(|| Error::InvalidArgument {
            function: "rowwise reduction",
            argument: "expr",
            reason: "needs a matrix operand, not a scalar".into(),
        })?;
        Ok(Some((r, 1)))
    }

    fn view(&self) -> View {
        View::Entire
    }

    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        if let Some(value) = self.2.get() {
            return value.generate(g, at);
        }
        let t = E::Scalar::CL_NAME;
        let (view, cols) = (g.value_param("int"), g.value_param("int"));
        let acc = R::begin(g, t);
        let k = g.fresh();
        let i = &at.i;
        // Only a sum may skip the zeros outside the operand's view.
        if R::NAME == "sum" {
            g.statement(&format!(
                "for (int {k} = ({view} & 1) ? 0 : {i}; {k} < (({view} & 2) ? {cols} : min({i} + 1, {cols})); {k}++) {{"
            ));
        } else {
            g.statement(&format!("for (int {k} = 0; {k} < {cols}; {k}++) {{"));
        }
        g.open_scope();
        let x = self.0.generate(g, &Index::new(i.clone(), k));
        R::step(g, t, &acc, &x);
        g.close_scope();
        g.statement("}");
        R::finish(g, t, &acc)
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        if let Some(value) = self.2.get() {
            return value.bind(b);
        }
        let cols = self.0.shape().ok().flatten().map_or(0, |s| s.1);
        b.int(self.0.view().bits());
        b.int(cols as i32);
        self.0.bind(b);
    }

    fn contains_reduction(&self) -> bool {
        true
    }

    fn evaluate_leaves(&self, held: HeldProduct) -> Result<()> {
        self.0.evaluate_leaves(held)
    }
}

macro_rules! rowwise {
    ($($fun:ident $op:ident $doc:literal;)*) => {$(
        #[doc = concat!("Row-wise ", $doc, ": an `n x 1` column, computed inside the kernel that uses it.\n\n",
            "```\nuse clfuse_ops::prelude::*;\n",
            "let m = MatrixCl::from_slice(2, 2, &[1.0f64, 2.0, 3.0, 4.0])?;\n",
            "let r = ", stringify!($fun), "(&m).eval()?;\n",
            "assert_eq!(r.to_vec()?.len(), 2);\n",
            "# Ok::<(), clfuse_ops::Error>(())\n```")]
        pub fn $fun<A: IntoOperand>(a: A) -> Expr<RowwiseReduction<$op, A::Operand>> {
            Expr(RowwiseReduction(a.into_operand(), PhantomData, Materialized::default()))
        }
    )*};
}

rowwise! {
    rowwise_sum SumOp "sum";
    rowwise_prod ProdOp "product";
    rowwise_max MaxOp "maximum";
    rowwise_min MinOp "minimum";
    rowwise_log_sum_exp LogSumExpOp "`log(Σ exp(x))`, in one pass over the row (a running maximum keeps it from overflowing)";
}

/// Column-wise `log(Σ exp(x))`: a `1 x cols` row, computed inside the
/// kernel that uses it (each work item walks one column).
///
/// ```
/// use clfuse_ops::prelude::*;
/// let m = MatrixCl::from_slice(2, 2, &[0.0f64, 0.0, 1000.0, 1000.0])?;
/// let r = colwise_log_sum_exp(&m).eval()?.to_vec()?;
/// assert!((r[0] - 2f64.ln()).abs() < 1e-12 && (r[1] - 1000.0 - 2f64.ln()).abs() < 1e-9);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn colwise_log_sum_exp<A: IntoOperand>(
    a: A,
) -> Expr<Transpose<RowwiseReduction<LogSumExpOp, Transpose<A::Operand>>>> {
    transpose(rowwise_log_sum_exp(transpose(a)))
}

/// `x · v` for a matrix `x` and a column vector `v`, as a fusable row-wise
/// reduction: the node built by [`matrix_vector_multiply()`].
///
/// With a variable on either side it is its own step (see reverse mode):
/// the third field holds its result.
#[derive(Debug, Clone)]
pub struct MatrixVectorMultiply<X, V>(pub X, pub V, pub Materialized);

/// `x · v` (`x` is `n x p`, `v` is `p x 1`), fused with the expressions that
/// produce `x` and `v` and with those that use the product.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let x = MatrixCl::from_slice(2, 2, &[1.0f64, 2.0, 3.0, 4.0])?;
/// let b = MatrixCl::from_slice(2, 1, &[1.0f64, 1.0])?;
/// let p = inv_logit(matrix_vector_multiply(&x, &b) - 4.0).eval()?;
/// assert_eq!(p.to_vec()?, vec![0.5, 0.8807970779778823]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn matrix_vector_multiply<X: IntoOperand, V: IntoOperand>(
    x: X,
    v: V,
) -> Expr<MatrixVectorMultiply<X::Operand, V::Operand>> {
    Expr(MatrixVectorMultiply(
        x.into_operand(),
        v.into_operand(),
        Materialized::default(),
    ))
}

impl<X: Operation, V: Operation> Operation for MatrixVectorMultiply<X, V>
where
    X::Scalar: Promote<V::Scalar>,
{
    type Scalar = <X::Scalar as Promote<V::Scalar>>::Output;
    type Key = MatrixVectorMultiply<X::Key, V::Key>;

    fn shape(&self) -> Result<Shape> {
        let x = self.0.shape()?.ok_or_else(|| Error::InvalidArgument {
            function: "matrix_vector_multiply",
            argument: "x",
            reason: "needs a matrix".into(),
        })?;
        if let Some(v) = self.1.shape()?
            && v != (x.1, 1)
        {
            return Err(Error::DimensionMismatch {
                operation: "matrix_vector_multiply".into(),
                lhs: x,
                rhs: v,
            });
        }
        Ok(Some((x.0, 1)))
    }

    fn view(&self) -> View {
        View::Entire
    }

    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        if let Some(value) = self.2.get() {
            return value.generate(g, at);
        }
        match self.2.inline_operand() {
            Some(v) => self.generate_product(&PrecomputedOperand::<X::Scalar>::new(v), g, at),
            None => self.generate_product(&self.1, g, at),
        }
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        if let Some(value) = self.2.get() {
            return value.bind(b);
        }
        let cols = self.0.shape().ok().flatten().map_or(0, |s| s.1);
        match (self.2.inline_operand(), self.0.matrix()) {
            (Some(v), Some(x)) => {
                // Read inline by a scalar step: its own kernel variant.
                b.structure(INLINE_PRODUCT);
                b.int(cols as i32);
                self.0.bind(b);
                v.bind(b);
                b.inline_product(x);
            }
            _ => {
                b.int(cols as i32);
                self.0.bind(b);
                self.1.bind(b);
            }
        }
    }

    fn contains_reduction(&self) -> bool {
        true
    }

    fn evaluate_leaves(&self, held: HeldProduct) -> Result<()> {
        self.0.evaluate_leaves(held)?;
        self.1.evaluate_leaves(held)
    }
}

/// The binding marker of a product read inline by a scalar step.
const INLINE_PRODUCT: u32 = 0x1A1E_0001;

impl<X: Operation, V: Operation> MatrixVectorMultiply<X, V>
where
    X::Scalar: Promote<V::Scalar>,
{
    /// `x · w` at `at`: from `x`'s staged elements when the kernel holds
    /// them, else a loop over the row. `w` is the vector operand (`v`, or
    /// the variable it became).
    pub(crate) fn generate_product<W: Operation>(
        &self,
        w: &W,
        g: &mut Generator,
        at: &Index,
    ) -> String {
        let t = <Self as Operation>::Scalar::CL_NAME;
        let cols = g.value_param("int");
        let staged = self
            .0
            .matrix()
            .and_then(|m| g.staged(Identity::Buffer(m.buffer_id())));
        if let Some(staged) = staged
            && at.i == "i"
        {
            return self.generate_from_staged(w, g, &staged);
        }
        let acc = g.declare(t, "0");
        let k = g.fresh();
        g.statement(&format!("for (int {k} = 0; {k} < {cols}; {k}++) {{"));
        g.open_scope();
        let x = self.0.generate(g, &Index::new(at.i.clone(), k.clone()));
        let v = w.generate(g, &Index::new(k, "0"));
        g.statement(&format!("{acc} += {x} * {v};"));
        g.close_scope();
        g.statement("}");
        acc
    }

    /// `x` is staged in registers across the work-group (a row-block
    /// kernel, see [`StagedMatrix`]): each work item multiplies the elements
    /// it holds by the vector's matching entries (fetched once, before the
    /// first block). When one work item holds a whole row that is the row's
    /// product; when several share it, their partial sums meet in local
    /// memory (one half per block parity, see `Generator::kernel_source`)
    /// and each of them adds up the row's.
    fn generate_from_staged<W: Operation>(
        &self,
        w: &W,
        g: &mut Generator,
        staged: &StagedMatrix,
    ) -> String {
        let t = <Self as Operation>::Scalar::CL_NAME;
        let section = g.section();
        // Without shared rows, the product is the body's own; with them, each
        // work item leaves its part in local memory for the body to add up.
        let (partial_section, parts) = if staged.layout.shares_rows() {
            (Section::Prepare, Some(g.fresh()))
        } else {
            (section, None)
        };
        let sum = self.staged_partial_sum(w, g, staged, partial_section);
        let Some(parts) = parts else {
            return sum;
        };
        g.set_section(Section::Before);
        // Work-groups of row-block kernels have at most 256 work items; two
        // halves, alternating by block.
        g.statement(&format!("__local {t} {parts}[512];"));
        g.set_section(Section::Prepare);
        g.statement(&format!("{parts}[lid + 256 * parity] = {sum};"));
        g.set_section(section);
        let total = g.declare(t, "0");
        let slice = g.fresh();
        g.statement(&format!(
            "for (int {slice} = 0; {slice} < tile_col_step; {slice}++) {{"
        ));
        g.statement(&format!(
            "{total} += {parts}[tile_row + block_rows * {slice} + 256 * parity];"
        ));
        g.statement("}");
        total
    }

    /// Declares, in `section`, this work item's part of its row's product:
    /// its elements times the vector's matching entries (fetched once,
    /// before the first block).
    fn staged_partial_sum<W: Operation>(
        &self,
        w: &W,
        g: &mut Generator,
        staged: &StagedMatrix,
        section: Section,
    ) -> String {
        let t = <Self as Operation>::Scalar::CL_NAME;
        let per_item = staged.layout.per_item;
        let (weights, col) = (g.fresh(), g.fresh());
        g.set_section(Section::Before);
        g.statement(&format!("{t} {weights}[{per_item}];"));
        g.open_unrolled_loop(per_item);
        g.statement(&format!("const int {col} = tile_col + tile_col_step * k;"));
        g.statement(&format!("{weights}[k] = 0;"));
        g.statement(&format!("if ({col} < {}) {{", staged.cols));
        g.open_scope();
        let v = w.generate(g, &Index::new(col, "0"));
        g.statement(&format!("{weights}[k] = {v};"));
        g.close_scope();
        g.statement("}");
        g.statement("}");
        g.set_section(section);
        let acc = g.declare(t, "0");
        g.open_unrolled_loop(per_item);
        g.statement(&format!("{acc} += {} * {weights}[k];", staged.element("k")));
        g.statement("}");
        acc
    }
}

/// Reduces each column to one value; a kernel output, not an operand: the
/// node built by [`colwise_sum()`] and friends.
#[derive(Debug, Clone, Copy)]
pub struct ColwiseReduction<R, E>(pub E, pub PhantomData<R>);

macro_rules! colwise {
    ($($fun:ident $op:ident $doc:literal;)*) => {$(
        #[doc = concat!("Column-wise ", $doc, ": a `1 x n` row. Assign it (alone or with other outputs) or `.eval()` it.\n\n",
            "```\nuse clfuse_ops::prelude::*;\n",
            "let m = MatrixCl::from_slice(2, 2, &[1.0f64, 2.0, 3.0, 4.0])?;\n",
            "let r = ", stringify!($fun), "(&m).eval()?;\n",
            "assert_eq!(r.to_vec()?.len(), 2);\n",
            "# Ok::<(), clfuse_ops::Error>(())\n```")]
        pub fn $fun<A: IntoOperand>(a: A) -> Expr<ColwiseReduction<$op, A::Operand>> {
            Expr(ColwiseReduction(a.into_operand(), PhantomData))
        }
    )*};
}

colwise! {
    colwise_sum SumOp "sum";
    colwise_prod ProdOp "product";
    colwise_max MaxOp "maximum";
    colwise_min MinOp "minimum";
}
