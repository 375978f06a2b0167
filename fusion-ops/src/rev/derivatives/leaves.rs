//! Leaves and wrappers: constants have no tangents; a shared
//! sub-expression's tangents are computed once per element, like its value.

use crate::binder::Identity;
use crate::generator::{Generator, Index};
use crate::leaves::{ColIndex, Constant, RowIndex, ScalarOrColumn};
use crate::logic::{Cast, Select};
use crate::random::{BetaDraw, Distribution, GammaDraw, RandomLeaf, RowCategorical};
use crate::rev::{Both, Constant as Const, Depends, Differentiable, Dual, ProductReads, Var};
use crate::templates::convert;
use clfuse_core::expr::{Load, Scalar, Shared};
use clfuse_core::{ClType, Promote, Result};

macro_rules! constant_leaves {
    ($([$($g:tt)*] $ty:ty),* $(,)?) => {$(
        impl<$($g)*> Depends for $ty {
            type Dependence = Const;
        }

        impl<$($g)*> Differentiable for $ty {}
    )*};
}

constant_leaves!(
    [T: ClType] Load<'_, T>,
    [T: ClType] Scalar<T>,
    [T: ClType] Constant<T>,
    [] RowIndex,
    [] ColIndex,
    [T: ClType] ScalarOrColumn<'_, T>,
    [D: Distribution] RandomLeaf<D>,
);

// A draw has no derivative in its parameters (a variable shape is an
// error naming the node when recorded); it is a constant otherwise.
impl<A: Depends> Depends for GammaDraw<A> {
    type Dependence = A::Dependence;
}
impl<A: Differentiable> Differentiable for GammaDraw<A> {}
impl<A: Depends, B: Depends> Depends for BetaDraw<A, B> {
    type Dependence = Both<A::Dependence, B::Dependence>;
}
impl<A: Differentiable, B: Differentiable> Differentiable for BetaDraw<A, B> {}
impl<A: Depends> Depends for RowCategorical<A> {
    type Dependence = A::Dependence;
}
impl<A: Differentiable> Differentiable for RowCategorical<A> {}

impl<O: Depends> Depends for Shared<'_, O> {
    type Dependence = O::Dependence;
}

impl<O: Differentiable> Differentiable for Shared<'_, O> {
    fn generate_tangents(&self, g: &mut Generator, at: &Index) -> Result<Dual> {
        let identity = Identity::Shared(self.0 as *const O as usize);
        if let Some(dual) = g.known_memo::<Dual>(identity, at) {
            return Ok(dual);
        }
        let mut outcome = Err(crate::rev::not_differentiable::<O>());
        let var = g.shared_subtree(identity, |g| {
            outcome = self.0.generate_tangents(g, at);
            outcome
                .as_ref()
                .map_or_else(|_| "0".to_string(), |d| d.value.clone())
        });
        let dual = outcome?;
        g.remember(identity, at, &var);
        g.remember_memo(identity, at, dual.clone());
        Ok(dual)
    }

    fn record_leaves(&self, reads: ProductReads) -> Result<()> {
        self.0.record_leaves(reads)
    }

    fn variable(&self) -> Option<&Var<O::Scalar>> {
        self.0.variable()
    }
}

impl<C: Depends, A: Depends, B: Depends> Depends for Select<C, A, B> {
    type Dependence = Both<A::Dependence, B::Dependence>;
}

impl<C: Differentiable, A: Differentiable, B: Differentiable> Differentiable for Select<C, A, B>
where
    A::Scalar: Promote<B::Scalar>,
{
    fn generate_tangents(&self, g: &mut Generator, at: &Index) -> Result<Dual> {
        let c = self.0.generate(g, at);
        let a = self.1.generate_tangents(g, at)?;
        let b = self.2.generate_tangents(g, at)?;
        let cl_type = Self::Scalar::CL_NAME;
        let (x, y) = (
            convert::<A::Scalar, Self::Scalar>(&a.value),
            convert::<B::Scalar, Self::Scalar>(&b.value),
        );
        let value = g.declare(cl_type, &format!("{c} ? {x} : {y}"));
        let tangents = Dual::select(g, cl_type, &c, &a, &b);
        Ok(Dual { value, tangents })
    }

    fn record_leaves(&self, reads: ProductReads) -> Result<()> {
        self.0.record_leaves(reads)?;
        self.1.record_leaves(reads)?;
        self.2.record_leaves(reads)
    }
}

impl<T, A: Depends> Depends for Cast<T, A> {
    type Dependence = A::Dependence;
}

impl<T: ClType, A: Differentiable> Differentiable for Cast<T, A> {
    fn generate_tangents(&self, g: &mut Generator, at: &Index) -> Result<Dual> {
        let x = self.0.generate_tangents(g, at)?;
        let value = g.declare(T::CL_NAME, &convert::<A::Scalar, T>(&x.value));
        let tangents = x
            .tangents
            .iter()
            .map(|(o, t)| {
                (
                    o.clone(),
                    g.declare(T::CL_NAME, &convert::<A::Scalar, T>(t)),
                )
            })
            .collect();
        Ok(Dual { value, tangents })
    }

    fn record_leaves(&self, reads: ProductReads) -> Result<()> {
        self.0.record_leaves(reads)
    }

    /// A cast to the variable's own type is that variable (a product step
    /// then reads it instead of recording a copy).
    fn variable(&self) -> Option<&Var<T>> {
        (self.0.variable()? as &dyn std::any::Any).downcast_ref()
    }
}
