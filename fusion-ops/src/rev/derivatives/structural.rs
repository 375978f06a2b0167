//! Derivatives of the structural operations: each reads its operand's
//! tangents at the index its value reads (the same parameters, declared in
//! the same order as its `generate`).

use crate::gather_checks::{guarded_read_end, guarded_read_start};
use crate::generator::{Generator, Index};
use crate::operation::Operation;
use crate::rev::{Both, Depends, Differentiable, Dual, ProductReads, hoist};
use crate::structural::{
    AppendCol, AppendRow, Block, Broadcast, BroadcastAxis, Diagonal, Indexing, OptionalBroadcast,
    ScalarBroadcast, Transpose, only_element, uniform_name,
};
use clfuse_core::{ClType, Promote, Result};

impl<E: Depends> Depends for Block<E> {
    type Dependence = E::Dependence;
}

impl<E: Differentiable> Differentiable for Block<E> {
    fn generate_tangents(&self, g: &mut Generator, at: &Index) -> Result<Dual> {
        let r = g.value_param("int");
        let c = g.value_param("int");
        self.inner.generate_tangents(
            g,
            &Index::new(format!("({} + {r})", at.i), format!("({} + {c})", at.j)),
        )
    }

    fn record_leaves(&self, reads: ProductReads) -> Result<()> {
        self.inner.record_leaves(reads)
    }
}

impl<E: Depends> Depends for Transpose<E> {
    type Dependence = E::Dependence;
}

impl<E: Differentiable> Differentiable for Transpose<E> {
    fn generate_tangents(&self, g: &mut Generator, at: &Index) -> Result<Dual> {
        self.0
            .generate_tangents(g, &Index::new(at.j.clone(), at.i.clone()))
    }

    fn record_leaves(&self, reads: ProductReads) -> Result<()> {
        self.0.record_leaves(reads)
    }
}

impl<E: Depends> Depends for Diagonal<E> {
    type Dependence = E::Dependence;
}

impl<E: Differentiable> Differentiable for Diagonal<E> {
    fn generate_tangents(&self, g: &mut Generator, at: &Index) -> Result<Dual> {
        self.0
            .generate_tangents(g, &Index::new(at.i.clone(), at.i.clone()))
    }

    fn record_leaves(&self, reads: ProductReads) -> Result<()> {
        self.0.record_leaves(reads)
    }
}

impl<E: Depends, A> Depends for Broadcast<E, A> {
    type Dependence = E::Dependence;
}

impl<E: Differentiable, A: BroadcastAxis> Differentiable for Broadcast<E, A> {
    fn generate_tangents(&self, g: &mut Generator, at: &Index) -> Result<Dual> {
        self.inner.generate_tangents(g, &A::operand_index(at))
    }

    fn record_leaves(&self, reads: ProductReads) -> Result<()> {
        self.inner.record_leaves(reads)
    }
}

impl<E: Depends> Depends for ScalarBroadcast<E> {
    type Dependence = E::Dependence;
}

impl<E: Differentiable> Differentiable for ScalarBroadcast<E> {
    fn generate_tangents(&self, g: &mut Generator, _at: &Index) -> Result<Dual> {
        // The operand's element and its tangents, before the element loop:
        // every element of the result has the same derivative.
        let dual = g.before_elements(|g| self.inner.generate_tangents(g, &only_element()))?;
        Ok(Dual {
            value: uniform_name::<E::Scalar>(g, dual.value),
            tangents: dual.tangents,
        })
    }

    fn record_leaves(&self, reads: ProductReads) -> Result<()> {
        self.inner.record_leaves(reads)
    }
}

impl<E: Depends> Depends for OptionalBroadcast<E> {
    type Dependence = E::Dependence;
}

impl<E: Differentiable> Differentiable for OptionalBroadcast<E> {
    fn generate_tangents(&self, g: &mut Generator, at: &Index) -> Result<Dual> {
        let broadcast_rows = g.value_param("int");
        let broadcast_cols = g.value_param("int");
        self.inner.generate_tangents(
            g,
            &Index::new(
                format!("({broadcast_rows} ? 0 : {})", at.i),
                format!("({broadcast_cols} ? 0 : {})", at.j),
            ),
        )
    }

    fn record_leaves(&self, reads: ProductReads) -> Result<()> {
        self.inner.record_leaves(reads)
    }
}

/// The two-branch read of a concatenation with tangents: the tangents (and
/// scattered indices) computed inside either branch are hoisted into
/// variables declared before it.
fn branch_tangents<A: Differentiable, B: Differentiable, T: ClType>(
    g: &mut Generator,
    condition: &str,
    a: (&A, Index),
    b: (&B, Index),
) -> Result<Dual> {
    let var = g.declare(T::CL_NAME, "0");
    let mut point = g.insertion_point();
    let mut hoisted = Vec::new();
    g.statement(&format!("if ({condition}) {{"));
    g.open_scope();
    let x = a.0.generate_tangents(g, &a.1)?;
    g.statement(&format!("{var} = {};", x.value));
    hoist(g, &mut point, T::CL_NAME, &x, &mut hoisted);
    g.close_scope();
    g.statement("} else {");
    g.open_scope();
    let y = b.0.generate_tangents(g, &b.1)?;
    g.statement(&format!("{var} = {};", y.value));
    hoist(g, &mut point, T::CL_NAME, &y, &mut hoisted);
    g.close_scope();
    g.statement("}");
    Ok(Dual {
        value: var,
        tangents: hoisted,
    })
}

impl<A: Depends, B: Depends> Depends for AppendRow<A, B> {
    type Dependence = Both<A::Dependence, B::Dependence>;
}

impl<A: Differentiable, B: Differentiable> Differentiable for AppendRow<A, B>
where
    A::Scalar: Promote<B::Scalar>,
{
    fn generate_tangents(&self, g: &mut Generator, at: &Index) -> Result<Dual> {
        let top_rows = g.value_param("int");
        let lower = Index::new(format!("({} - {top_rows})", at.i), at.j.clone());
        branch_tangents::<A, B, Self::Scalar>(
            g,
            &format!("{} < {top_rows}", at.i),
            (&self.0, at.clone()),
            (&self.1, lower),
        )
    }

    fn record_leaves(&self, reads: ProductReads) -> Result<()> {
        self.0.record_leaves(reads)?;
        self.1.record_leaves(reads)
    }
}

impl<A: Depends, B: Depends> Depends for AppendCol<A, B> {
    type Dependence = Both<A::Dependence, B::Dependence>;
}

impl<A: Differentiable, B: Differentiable> Differentiable for AppendCol<A, B>
where
    A::Scalar: Promote<B::Scalar>,
{
    fn generate_tangents(&self, g: &mut Generator, at: &Index) -> Result<Dual> {
        let left_cols = g.value_param("int");
        let right = Index::new(at.i.clone(), format!("({} - {left_cols})", at.j));
        branch_tangents::<A, B, Self::Scalar>(
            g,
            &format!("{} < {left_cols}", at.j),
            (&self.0, at.clone()),
            (&self.1, right),
        )
    }

    fn record_leaves(&self, reads: ProductReads) -> Result<()> {
        self.0.record_leaves(reads)?;
        self.1.record_leaves(reads)
    }
}

impl<M: Depends, R: Depends, C: Depends> Depends for Indexing<M, R, C> {
    type Dependence = M::Dependence;
}

impl<M, R, C> Differentiable for Indexing<M, R, C>
where
    M: Differentiable,
    R: Differentiable + Operation<Scalar = i32>,
    C: Differentiable + Operation<Scalar = i32>,
{
    fn generate_tangents(&self, g: &mut Generator, at: &Index) -> Result<Dual> {
        // The value's read as `Operation::generate` makes it (its index
        // check included); the tangents are declared before the `if`.
        let r = self.row_index.generate(g, at);
        let c = self.col_index.generate(g, at);
        let read = guarded_read_start(g, self.node(), &r, &c, M::Scalar::CL_NAME);
        let mut point = g.insertion_point();
        read.open(g);
        let mut hoisted = Vec::new();
        g.open_scope();
        let x = self.matrix.generate_tangents(g, &Index::new(r, c))?;
        g.statement(&format!("{} = {};", read.var, x.value));
        hoist(g, &mut point, M::Scalar::CL_NAME, &x, &mut hoisted);
        g.close_scope();
        guarded_read_end(g, &read, at);
        Ok(Dual {
            value: read.var,
            tangents: hoisted,
        })
    }

    fn record_leaves(&self, reads: ProductReads) -> Result<()> {
        self.row_index.record_leaves(reads)?;
        self.col_index.record_leaves(reads)?;
        self.matrix.record_leaves(reads)
    }
}
