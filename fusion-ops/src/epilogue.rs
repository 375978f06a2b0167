//! Epilogue fusion: `d.assign(f(&a * &b, ...))` for an element-wise `f` as
//! ONE kernel, the GEMM applying `f` where it stores each element of the
//! product, instead of a GEMM writing the product and a fused kernel
//! reading it back.
//!
//! The driver asks the outputs for such a product
//! ([`Operation::epilogue_product`](crate::Operation::epilogue_product):
//! only element-wise nodes pass the question on, so the product is read at
//! the work item's own element only). The epilogue kernel is generated and
//! bound by a [`Generator`] and a [`Binder`] made for it
//! ([`Generator::for_epilogue`], [`Binder::for_epilogue`]), which name that
//! product node: it generates the name of the GEMM's element (`product`)
//! and binds nothing but its place in the alias pattern; while the other
//! leaves are evaluated it is *held* and evaluates nothing. The rest of the
//! expression generates as usual, into the function `epilogue` that
//! `clfuse_kernels::EpilogueGemm` compiles in front of the GEMM kernel. The
//! kernel is cached like any fused kernel, by the expression's type, its
//! alias pattern (with the product's place) and the GEMM's blocking.
//!
//! A product stays a separate GEMM when it is a vector (matrix-vector
//! kernels), when split-k would share its elements among parts, when the
//! target is one of its operands (the GEMM reads them while the epilogue
//! writes), when it depends on a variable (reverse mode records it
//! as a step of its own), and when the expression needs more than its element
//! (a reduction's loop, a target read elsewhere).

use crate::binder::Binder;
use crate::driver::{complete, dump_name};
use crate::failure_flags::FailureFlags;
use crate::gather_checks::Gathers;
use crate::generator::{Generator, Section};
use crate::launch_shape::LaunchShape;
use crate::operation::HeldProduct;
use crate::outputs::{OutputList, Schedule};
use clfuse_core::{FusedKernel, FusedPlan, GemmEpilogue, Result, Runtime, compile_kernel};
use clfuse_kernels::EpilogueGemm;
use std::any::TypeId;
use std::marker::PhantomData;
use std::sync::Arc;

/// The name of the product's element inside the generated `epilogue`.
pub(crate) const PRODUCT: &str = "product";

/// A matrix product that can hand its element-wise consumer to its GEMM
/// (implemented by [`MatrixProduct`](crate::MatrixProduct); see the module
/// docs).
pub trait EpilogueProduct {
    /// The node's address: identifies it while the epilogue kernel is bound
    /// and generated.
    fn node(&self) -> usize;
    /// The element type's OpenCL C name.
    fn cl_type(&self) -> &'static str;
    /// Whether the product's shape takes an epilogue (asked before its
    /// operands are evaluated).
    fn fits(&self) -> Result<bool>;
    /// Whether the product was computed after all (by another kernel that
    /// reads it, evaluated as a leaf of the expression).
    fn computed(&self) -> bool;
    /// Evaluates the operands and calls `run` with the planned GEMM; `Ok(false)`
    /// without calling it when the product cannot take an epilogue after
    /// all (an operand is one of `targets`, the buffers the kernel writes).
    fn with_gemm(
        &self,
        targets: &[u64],
        run: &mut dyn FnMut(EpilogueGemm<'_>) -> Result<bool>,
    ) -> Result<bool>;
}

/// The program of `list`'s epilogue kernel, `product` taking the GEMM's
/// element; `None` when the expression needs more than the element it computes.
fn program<L: OutputList>(
    list: &L,
    product: &dyn EpilogueProduct,
    gemm: &EpilogueGemm<'_>,
) -> Option<String> {
    let mut g = Generator::for_epilogue(product.node());
    let mut values = Vec::new();
    list.generate_exprs(&mut g, &mut values);
    g.set_section(Section::Outputs);
    list.generate_outputs(&mut g, &mut values.iter());
    let prelude = g.epilogue_prelude(PRODUCT, product.cl_type())?;
    (!g.reads_target_elsewhere()).then(|| gemm.source(&prelude))
}

/// Plans the GEMM of `product` for `list`'s epilogue, evaluates the
/// expression's other leaves while the product is held, and calls `run`
/// with it. `Ok(false)` without calling it when the product cannot take
/// the epilogue: fusion turned off, outputs that are not one element-wise
/// store, a shape that does not fit, a target that is an operand, or a
/// product that a leaf's own kernel computed after all.
fn with_planned_gemm<L: OutputList>(
    list: &L,
    product: &dyn EpilogueProduct,
    run: &mut dyn FnMut(EpilogueGemm<'_>) -> Result<bool>,
) -> Result<bool> {
    let mode = Runtime::get()?.tuning().gemm_epilogue.unwrap_or_default();
    if mode == GemmEpilogue::Off || list.schedule() != Schedule::ELEMENTWISE || !product.fits()? {
        return Ok(false);
    }
    let mut targets = Vec::new();
    list.target_ids(&mut targets);
    product.with_gemm(&targets, &mut |gemm| {
        list.evaluate_leaves(HeldProduct::of(product.node()))?;
        if product.computed() {
            return Ok(false);
        }
        run(gemm)
    })
}

/// The source of the one kernel that runs `list` when its product takes
/// its element-wise tail as an epilogue (see [`source_of`](crate::source_of)).
pub(crate) fn source<L: OutputList>(list: &L) -> Result<Option<String>> {
    let Some(product) = list.epilogue_product() else {
        return Ok(None);
    };
    let mut found = None;
    with_planned_gemm(list, product, &mut |gemm| {
        found = program(list, product, &gemm);
        Ok(found.is_some())
    })?;
    Ok(found)
}

/// The cache key type of the epilogue kernel of outputs `K` (a different
/// kernel from their plain fused one).
struct Epilogue<K>(PhantomData<K>);

/// Runs `list` (one element-wise output of a `rows x cols` grid whose
/// expression consumes `product`) as one GEMM kernel with an epilogue, then
/// `then`. `Ok(false)`: nothing ran, and the caller launches it as usual.
pub(crate) fn launch<L: OutputList>(
    list: &L,
    product: &dyn EpilogueProduct,
    (rows, cols): (usize, usize),
    then: &mut dyn FnMut() -> Result<()>,
) -> Result<bool> {
    let rt = Runtime::get()?;
    with_planned_gemm(list, product, &mut |gemm| {
        let launch = LaunchShape::choose(rows, cols, Schedule::ELEMENTWISE, rt);
        list.prepare(&launch)?;
        let gather_flags = FailureFlags::default();
        let mut binder = Binder::for_epilogue(product.node());
        for code in gemm.structure() {
            binder.structure(code);
        }
        list.bind_exprs(&mut binder);
        list.bind_outputs(&mut binder);
        binder.int(rows as i32);
        binder.int(cols as i32);
        let gathers = Gathers::attach(&mut binder, &gather_flags)?;
        let (args, pattern) = binder.finish()?;
        let key = TypeId::of::<Epilogue<L::Key>>();
        let plan = rt.kernels().fused(key, pattern, |key| {
            let Some(source) = program(list, product, &gemm) else {
                // Not one element's work: the plain path (cached as such).
                return Ok(FusedPlan::ViaTemporaries);
            };
            let name = format!("epilogue_{}", dump_name(key));
            let compiled =
                compile_kernel(gemm.kernel_name(), &source, &gemm.build_options(), &name)?;
            Ok(FusedPlan::Direct(Arc::new(FusedKernel::new(
                compiled, source,
            ))))
        })?;
        let FusedPlan::Direct(kernel) = plan else {
            return Ok(false);
        };
        gemm.launch(kernel.compiled(), args)?;
        complete(list, &gathers, &launch, then)?;
        Ok(true)
    })
}
