//! `+`, `-`, element-wise `*` and `/`, and unary `-`.
//!
//! The node types come from `fusion_core::expr` (Rust operators build them);
//! here they learn their type, view and code.

use crate::binder::Binder;
use crate::functions::ViewRule;
use crate::generator::{Generator, Index};
use crate::operation::{Operation, Shape, combine_shapes};
use fusion_core::expr::{Add, ElewiseDiv, ElewiseMul, Neg, Sub};
use fusion_core::{ClType, Expr, IntoOperand, Promote, Result, View};

macro_rules! infix {
    ($($node:ident $name:literal $symbol:literal view: $rule:ident;)*) => {$(
        impl<A: Operation, B: Operation> Operation for $node<A, B>
        where
            A::Scalar: Promote<B::Scalar>,
        {
            type Scalar = <A::Scalar as Promote<B::Scalar>>::Output;
            type Key = $node<A::Key, B::Key>;

            fn shape(&self) -> Result<Shape> {
                combine_shapes($name, self.0.shape()?, self.1.shape()?)
            }

            fn view(&self) -> View {
                ViewRule::$rule.apply(self.0.view(), self.1.view())
            }

            fn generate(&self, g: &mut Generator, at: &Index) -> String {
                let x = self.0.generate(g, at);
                let y = self.1.generate(g, at);
                g.declare(<Self::Scalar as ClType>::CL_NAME, &format!(concat!("{} ", $symbol, " {}"), x, y))
            }

            fn bind<'a>(&'a self, b: &mut Binder<'a>) {
                self.0.bind(b);
                self.1.bind(b);
            }
        }
    )*};
}

infix! {
    Add "add" "+" view: Union;
    Sub "subtract" "-" view: Union;
    ElewiseMul "elt_multiply" "*" view: Intersection;
    ElewiseDiv "elt_divide" "/" view: Entire;
}

impl<A: Operation> Operation for Neg<A> {
    type Scalar = A::Scalar;
    type Key = Neg<A::Key>;

    fn shape(&self) -> Result<Shape> {
        self.0.shape()
    }

    fn view(&self) -> View {
        self.0.view()
    }

    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        let x = self.0.generate(g, at);
        g.declare(A::Scalar::CL_NAME, &format!("-{x}"))
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        self.0.bind(b)
    }
}

/// Element-wise product of two operands (`*` between matrices is the matrix product).
///
/// ```
/// use fusion_ops::prelude::*;
/// let a = MatrixCl::from_slice(1, 2, &[2.0f64, 3.0])?;
/// assert_eq!(elt_multiply(&a, &a).eval()?.to_vec()?, vec![4.0, 9.0]);
/// # Ok::<(), fusion_ops::Error>(())
/// ```
pub fn elt_multiply<A: IntoOperand, B: IntoOperand>(
    a: A,
    b: B,
) -> Expr<ElewiseMul<A::Operand, B::Operand>> {
    Expr(ElewiseMul(a.into_operand(), b.into_operand()))
}

/// Element-wise quotient of two operands.
///
/// ```
/// use fusion_ops::prelude::*;
/// let a = MatrixCl::from_slice(1, 2, &[2.0f64, 3.0])?;
/// assert_eq!(elt_divide(&a, &a).eval()?.to_vec()?, vec![1.0, 1.0]);
/// # Ok::<(), fusion_ops::Error>(())
/// ```
pub fn elt_divide<A: IntoOperand, B: IntoOperand>(
    a: A,
    b: B,
) -> Expr<ElewiseDiv<A::Operand, B::Operand>> {
    Expr(ElewiseDiv(a.into_operand(), b.into_operand()))
}
