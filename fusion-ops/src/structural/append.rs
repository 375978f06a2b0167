//! Concatenation: `a` on top of `b`, or left of it, one branch per element.

use super::{concatenated, shape_or_err};
use crate::binder::Binder;
use crate::generator::{Generator, Index};
use crate::operation::HeldProduct;
use crate::operation::{Operation, Shape};
use clfuse_core::{ClType, Error, Expr, IntoOperand, Promote, Result, View};

/// `a` on top of `b`: the node built by [`append_row()`].
#[derive(Debug, Clone, Copy)]
pub struct AppendRow<A, B>(pub A, pub B);

/// `a` on top of `b` (same number of columns).
///
/// ```
/// use clfuse_ops::prelude::*;
/// let a = MatrixCl::from_slice(1, 2, &[1, 2])?;
/// let b = MatrixCl::from_slice(1, 2, &[3, 4])?;
/// assert_eq!(append_row(&a, &b).eval()?.to_vec()?, vec![1, 3, 2, 4]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn append_row<A: IntoOperand, B: IntoOperand>(
    a: A,
    b: B,
) -> Expr<AppendRow<A::Operand, B::Operand>> {
    Expr(AppendRow(a.into_operand(), b.into_operand()))
}

/// `a` left of `b`: the node built by [`append_col()`].
#[derive(Debug, Clone, Copy)]
pub struct AppendCol<A, B>(pub A, pub B);

/// `a` left of `b` (same number of rows).
///
/// ```
/// use clfuse_ops::prelude::*;
/// let a = MatrixCl::from_slice(2, 1, &[1, 2])?;
/// let b = MatrixCl::from_slice(2, 1, &[3, 4])?;
/// assert_eq!(append_col(&a, &b).eval()?.to_vec()?, vec![1, 2, 3, 4]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn append_col<A: IntoOperand, B: IntoOperand>(
    a: A,
    b: B,
) -> Expr<AppendCol<A::Operand, B::Operand>> {
    Expr(AppendCol(a.into_operand(), b.into_operand()))
}

/// Emits `result = first ? a(at_a) : b(at_b)` with each branch in its own scope.
fn branch<A: Operation, B: Operation, T: ClType>(
    g: &mut Generator,
    condition: &str,
    a: (&A, Index),
    b: (&B, Index),
) -> String {
    let var = g.declare(T::CL_NAME, "0");
    g.statement(&format!("if ({condition}) {{"));
    g.open_scope();
    let x = a.0.generate(g, &a.1);
    g.statement(&format!("{var} = {x};"));
    g.close_scope();
    g.statement("} else {");
    g.open_scope();
    let y = b.0.generate(g, &b.1);
    g.statement(&format!("{var} = {y};"));
    g.close_scope();
    g.statement("}");
    var
}

impl<A: Operation, B: Operation> Operation for AppendRow<A, B>
where
    A::Scalar: Promote<B::Scalar>,
{
    type Scalar = <A::Scalar as Promote<B::Scalar>>::Output;
    type Key = AppendRow<A::Key, B::Key>;

    fn shape(&self) -> Result<Shape> {
        let a = shape_or_err("append_row", self.0.shape()?, "append_row")?;
        let b = shape_or_err("append_row", self.1.shape()?, "append_row")?;
        if a.1 != b.1 {
            return Err(Error::DimensionMismatch {
                operation: "append_row (columns)".into(),
                lhs: a,
                rhs: b,
            });
        }
        Ok(Some((concatenated("append_row", a.0, b.0)?, a.1)))
    }

    fn view(&self) -> View {
        View::Entire
    }

    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        let top_rows = g.value_param("int");
        let lower = Index::new(format!("({} - {top_rows})", at.i), at.j.clone());
        branch::<A, B, Self::Scalar>(
            g,
            &format!("{} < {top_rows}", at.i),
            (&self.0, at.clone()),
            (&self.1, lower),
        )
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        let rows = self.0.shape().ok().flatten().map_or(0, |s| s.0);
        b.int(rows as i32);
        self.0.bind(b);
        self.1.bind(b);
    }

    fn evaluate_leaves(&self, held: HeldProduct) -> Result<()> {
        self.0.evaluate_leaves(held)?;
        self.1.evaluate_leaves(held)?;
        Ok(())
    }

    fn contains_reduction(&self) -> bool {
        self.0.contains_reduction() || self.1.contains_reduction()
    }
}

impl<A: Operation, B: Operation> Operation for AppendCol<A, B>
where
    A::Scalar: Promote<B::Scalar>,
{
    type Scalar = <A::Scalar as Promote<B::Scalar>>::Output;
    type Key = AppendCol<A::Key, B::Key>;

    fn shape(&self) -> Result<Shape> {
        let a = shape_or_err("append_col", self.0.shape()?, "append_col")?;
        let b = shape_or_err("append_col", self.1.shape()?, "append_col")?;
        if a.0 != b.0 {
            return Err(Error::DimensionMismatch {
                operation: "append_col (rows)".into(),
                lhs: a,
                rhs: b,
            });
        }
        Ok(Some((a.0, concatenated("append_col", a.1, b.1)?)))
    }

    fn view(&self) -> View {
        View::Entire
    }

    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        let left_cols = g.value_param("int");
        let right = Index::new(at.i.clone(), format!("({} - {left_cols})", at.j));
        branch::<A, B, Self::Scalar>(
            g,
            &format!("{} < {left_cols}", at.j),
            (&self.0, at.clone()),
            (&self.1, right),
        )
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        let cols = self.0.shape().ok().flatten().map_or(0, |s| s.1);
        b.int(cols as i32);
        self.0.bind(b);
        self.1.bind(b);
    }

    fn evaluate_leaves(&self, held: HeldProduct) -> Result<()> {
        self.0.evaluate_leaves(held)?;
        self.1.evaluate_leaves(held)?;
        Ok(())
    }

    fn contains_reduction(&self) -> bool {
        self.0.contains_reduction() || self.1.contains_reduction()
    }
}
