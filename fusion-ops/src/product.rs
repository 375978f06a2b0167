//! `a * b` between matrix expressions: the GEMM leaf inside a fused tree.
//!
//! A product is not fusable: in the driver's leaf step
//! ([`Operation::evaluate_leaves`]) its operands are evaluated (or used
//! directly when they are plain matrices) and multiplied by the hand-written
//! GEMM kernel; the fused kernel then reads the result like any matrix.

use crate::binder::Binder;
use crate::driver::eval_direct;
use crate::epilogue::EpilogueProduct;
use crate::generator::{Generator, Index};
use crate::operation::HeldProduct;
use crate::operation::{Operation, Shape};
use crate::precomputed::Precomputed;
use clfuse_core::expr::{Load, MatrixProduct, MatrixRef};
use clfuse_core::{ClFloat, Error, MatrixCl, Result, View};
use clfuse_kernels::EpilogueGemm;

/// `op` as a matrix: itself when it is one, else evaluated into a new one.
fn operand_matrix<O: Operation>(op: &O) -> Result<MatrixRef<'_, O::Scalar>> {
    match op.matrix() {
        Some(m) => Ok(MatrixRef::Borrowed(m)),
        None => Ok(MatrixRef::Owned(eval_direct(op)?)),
    }
}

/// The shape of `lhs * rhs`, checked (a pure query: nothing runs).
fn product_shape<L: Operation, R: Operation>(p: &MatrixProduct<L, R>) -> Result<(usize, usize)> {
    let (lhs, rhs) = (p.lhs.shape()?, p.rhs.shape()?);
    let (Some(l), Some(r)) = (lhs, rhs) else {
        return Err(Error::InvalidArgument {
            function: "multiply",
            argument: "operands",
            reason: "`*` between expressions multiplies matrices; scale by a scalar with `* 2.0`"
                .into(),
        });
    };
    if l.1 != r.0 {
        return Err(Error::DimensionMismatch {
            operation: "multiply".into(),
            lhs: l,
            rhs: r,
        });
    }
    Ok((l.0, r.1))
}

/// The product's value, once computed: a matrix here, or whatever a layer
/// above stored in its place (reverse mode records a product of variables
/// as a step of its own).
pub(crate) fn stored_product<L, R>(p: &MatrixProduct<L, R>) -> Option<&dyn Precomputed> {
    p.result
        .get()?
        .downcast_ref::<Box<dyn Precomputed>>()
        .map(|value| &**value)
}

/// Stores the product's value (the first value wins).
pub(crate) fn store_product<L, R>(p: &MatrixProduct<L, R>, value: Box<dyn Precomputed>) {
    let _ = p.result.set(Box::new(value));
}

fn stored_matrix<T: ClFloat, L, R>(p: &MatrixProduct<L, R>) -> Option<&MatrixCl<T>> {
    stored_product(p)?.as_any().downcast_ref()
}

impl<T: ClFloat, L: Operation<Scalar = T>, R: Operation<Scalar = T>> Operation
    for MatrixProduct<L, R>
{
    type Scalar = T;
    // The fused kernel only reads the product: the same code as a matrix.
    type Key = Load<'static, T>;

    fn shape(&self) -> Result<Shape> {
        product_shape(self).map(Some)
    }

    fn view(&self) -> View {
        // The GEMM leaf sets its result's view from its operands' the same way.
        self.lhs.view().union(self.rhs.view())
    }

    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        if g.is_epilogue_product(self.node()) {
            // The GEMM holds the product at the work item's element only; a
            // shared product also read elsewhere (under a reduction) cannot
            // be an epilogue's.
            if *at != Index::work_item() {
                g.refuse_epilogue();
            }
            return crate::epilogue::PRODUCT.to_string();
        }
        match stored_product(self) {
            Some(value) => value.generate(g, at),
            // Never compiled: binding the same tree failed first (see `bind`).
            None => "0".to_string(),
        }
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        if b.bind_epilogue_product(self.node()) {
            // The GEMM binds the operands.
            return;
        }
        match stored_product(self) {
            Some(value) => value.bind(b),
            None => b.unevaluated("multiply"),
        }
    }

    fn evaluate_leaves(&self, held: HeldProduct) -> Result<()> {
        if self.result.get().is_some() || held.holds(self.node()) {
            return Ok(());
        }
        product_shape(self)?;
        // An operand that is not a plain matrix is evaluated by the driver,
        // leaves first (a product of products multiplies inner results).
        let a = operand_matrix(&self.lhs)?;
        let b = operand_matrix(&self.rhs)?;
        store_product(self, Box::new(clfuse_kernels::multiply(&a, &b)?));
        Ok(())
    }

    fn matrix(&self) -> Option<&MatrixCl<T>> {
        stored_matrix(self)
    }

    fn epilogue_product(&self) -> Option<&dyn EpilogueProduct> {
        // One computed already (a product of variables is recorded before
        // its step's kernel is built) is read.
        self.result
            .get()
            .is_none()
            .then_some(self as &dyn EpilogueProduct)
    }
}

impl<T: ClFloat, L: Operation<Scalar = T>, R: Operation<Scalar = T>> EpilogueProduct
    for MatrixProduct<L, R>
{
    fn node(&self) -> usize {
        self as *const Self as usize
    }

    fn cl_type(&self) -> &'static str {
        T::CL_NAME
    }

    fn fits(&self) -> Result<bool> {
        let (m, n) = product_shape(self)?;
        let k = self.lhs.shape()?.map_or(0, |s| s.1);
        EpilogueGemm::fits::<T>(m, k, n)
    }

    fn computed(&self) -> bool {
        self.result.get().is_some()
    }

    fn with_gemm(
        &self,
        targets: &[u64],
        run: &mut dyn FnMut(EpilogueGemm<'_>) -> Result<bool>,
    ) -> Result<bool> {
        self.lhs.evaluate_leaves(HeldProduct::NONE)?;
        self.rhs.evaluate_leaves(HeldProduct::NONE)?;
        let a = operand_matrix(&self.lhs)?;
        let b = operand_matrix(&self.rhs)?;
        let fused = if targets.contains(&a.buffer_id()) || targets.contains(&b.buffer_id()) {
            false
        } else {
            match EpilogueGemm::plan(&a, &b)? {
                Some(gemm) => run(gemm)?,
                None => false,
            }
        };
        if !fused && self.result.get().is_none() {
            // The plain path reads the product: computed now from the
            // operands evaluated above, so they are not evaluated again.
            store_product(self, Box::new(clfuse_kernels::multiply(&a, &b)?));
        }
        Ok(fused)
    }
}
