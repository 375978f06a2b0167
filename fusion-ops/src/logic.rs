//! Comparisons, logical operators, `select` and `cast`.

use crate::binder::Binder;
use crate::functions::ViewRule;
use crate::generator::{Generator, Index};
use crate::operation::{Operation, Shape, combine_shapes};
use crate::templates::convert;
use fusion_core::{ClType, Expr, IntoOperand, Promote, Result, View};
use std::marker::PhantomData;

macro_rules! int_valued_binary {
    ($($name:ident $fun:ident $symbol:literal view: $rule:ident;)*) => {
        $(
            #[doc = concat!("`a ", $symbol, " b` as an `int` (1 or 0): the node built by [`", stringify!($fun), "()`].")]
            #[derive(Debug, Clone, Copy)]
            pub struct $name<A, B>(pub A, pub B);

            impl<A: Operation, B: Operation> Operation for $name<A, B> {
                type Scalar = i32;
                type Key = $name<A::Key, B::Key>;

                fn shape(&self) -> Result<Shape> {
                    combine_shapes(stringify!($fun), self.0.shape()?, self.1.shape()?)
                }

                fn view(&self) -> View {
                    ViewRule::$rule.apply(self.0.view(), self.1.view())
                }

                fn generate(&self, g: &mut Generator, at: &Index) -> String {
                    let x = self.0.generate(g, at);
                    let y = self.1.generate(g, at);
                    g.declare("int", &format!(concat!("{} ", $symbol, " {}"), x, y))
                }

                fn bind<'a>(&'a self, b: &mut Binder<'a>) {
                    self.0.bind(b);
                    self.1.bind(b);
                }
            }

            #[doc = concat!(
                "Element-wise `a ", $symbol, " b`, 1 where true and 0 where false.\n\n",
                "```\nuse fusion_ops::prelude::*;\n",
                "let a = MatrixCl::from_slice(1, 3, &[1, 2, 3])?;\n",
                "let r = ", stringify!($fun), "(&a, 2).eval()?;\n",
                "assert_eq!(r.to_vec()?.len(), 3);\n",
                "# Ok::<(), fusion_ops::Error>(())\n```"
            )]
            pub fn $fun<A: IntoOperand, B: IntoOperand>(a: A, b: B) -> Expr<$name<A::Operand, B::Operand>> {
                Expr($name(a.into_operand(), b.into_operand()))
            }
        )*

        /// Comparisons and logical operators as methods.
        pub trait LogicalMethods: IntoOperand + Sized {
            $(
                #[doc = concat!("Element-wise `", $symbol, "`; see [`", stringify!($fun), "()`].")]
                fn $fun<B: IntoOperand>(self, b: B) -> Expr<$name<Self::Operand, B::Operand>> {
                    Expr($name(self.into_operand(), b.into_operand()))
                }
            )*

            /// Logical negation; see [`not()`].
            fn not(self) -> Expr<Not<Self::Operand>> {
                Expr(Not(self.into_operand()))
            }

            /// Converts the element type; see [`cast()`].
            fn cast<T: ClType>(self) -> Expr<Cast<T, Self::Operand>> {
                Expr(Cast(self.into_operand(), PhantomData))
            }
        }
    };
}

int_valued_binary! {
    Less lt "<" view: Union;
    LessEq le "<=" view: Entire;
    Greater gt ">" view: Union;
    GreaterEq ge ">=" view: Entire;
    Equal eq "==" view: Entire;
    NotEqual ne "!=" view: Union;
    LogicalAnd and "&&" view: Intersection;
    LogicalOr or "||" view: Union;
}

/// Logical negation `!a`: the node built by [`not()`].
#[derive(Debug, Clone, Copy)]
pub struct Not<A>(pub A);

impl<A: Operation> Operation for Not<A> {
    type Scalar = i32;
    type Key = Not<A::Key>;

    fn shape(&self) -> Result<Shape> {
        self.0.shape()
    }

    fn view(&self) -> View {
        View::Entire
    }

    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        let x = self.0.generate(g, at);
        g.declare("int", &format!("!{x}"))
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        self.0.bind(b)
    }
}

/// Element-wise logical negation: 1 where `a` is 0, else 0.
///
/// ```
/// use fusion_ops::prelude::*;
/// let a = MatrixCl::from_slice(1, 2, &[0, 5])?;
/// assert_eq!(not(&a).eval()?.to_vec()?, vec![1, 0]);
/// # Ok::<(), fusion_ops::Error>(())
/// ```
pub fn not<A: IntoOperand>(a: A) -> Expr<Not<A::Operand>> {
    Expr(Not(a.into_operand()))
}

/// `condition ? then : otherwise`: the node built by [`select()`].
#[derive(Debug, Clone, Copy)]
pub struct Select<C, A, B>(pub C, pub A, pub B);

impl<C: Operation, A: Operation, B: Operation> Operation for Select<C, A, B>
where
    A::Scalar: Promote<B::Scalar>,
{
    type Scalar = <A::Scalar as Promote<B::Scalar>>::Output;
    type Key = Select<C::Key, A::Key, B::Key>;

    fn shape(&self) -> Result<Shape> {
        let values = combine_shapes("select", self.1.shape()?, self.2.shape()?)?;
        combine_shapes("select", self.0.shape()?, values)
    }

    fn view(&self) -> View {
        self.1.view().union(self.2.view())
    }

    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        let c = self.0.generate(g, at);
        let a = self.1.generate(g, at);
        let b = self.2.generate(g, at);
        let a = convert::<A::Scalar, Self::Scalar>(&a);
        let b = convert::<B::Scalar, Self::Scalar>(&b);
        g.declare(Self::Scalar::CL_NAME, &format!("{c} ? {a} : {b}"))
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        self.0.bind(b);
        self.1.bind(b);
        self.2.bind(b);
    }
}

/// Element-wise choice: `then` where `condition` is non-zero, else `otherwise`.
///
/// ```
/// use fusion_ops::prelude::*;
/// let a = MatrixCl::from_slice(1, 3, &[-1.0f64, 0.5, 2.0])?;
/// let clipped = select(gt(&a, 1.0), 1.0, &a).eval()?;
/// assert_eq!(clipped.to_vec()?, vec![-1.0, 0.5, 1.0]);
/// # Ok::<(), fusion_ops::Error>(())
/// ```
pub fn select<C: IntoOperand, A: IntoOperand, B: IntoOperand>(
    condition: C,
    then: A,
    otherwise: B,
) -> Expr<Select<C::Operand, A::Operand, B::Operand>> {
    Expr(Select(
        condition.into_operand(),
        then.into_operand(),
        otherwise.into_operand(),
    ))
}

/// Conversion to element type `T` (C cast semantics): the node built by [`cast()`].
#[derive(Debug)]
pub struct Cast<T, A>(pub A, pub PhantomData<T>);

impl<T: ClType, A: Operation> Operation for Cast<T, A> {
    type Scalar = T;
    type Key = Cast<T, A::Key>;

    fn shape(&self) -> Result<Shape> {
        self.0.shape()
    }

    fn view(&self) -> View {
        self.0.view()
    }

    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        let x = self.0.generate(g, at);
        g.declare(T::CL_NAME, &convert::<A::Scalar, T>(&x))
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        self.0.bind(b)
    }
}

/// Converts every element to `T` (truncating toward zero for `i32`).
///
/// ```
/// use fusion_ops::prelude::*;
/// let a = MatrixCl::from_slice(1, 2, &[1.7f64, -2.5])?;
/// assert_eq!(cast::<i32, _>(&a).eval()?.to_vec()?, vec![1, -2]);
/// # Ok::<(), fusion_ops::Error>(())
/// ```
pub fn cast<T: ClType, A: IntoOperand>(a: A) -> Expr<Cast<T, A::Operand>> {
    Expr(Cast(a.into_operand(), PhantomData))
}
