//! A GEMM whose store runs a generated element-wise epilogue: the fused
//! kernel of `d = f(a * b, ...)` when `f` is element-wise (see
//! `clfuse_ops`'s `epilogue` module, which generates the epilogue).
//!
//! The GEMM kernels (`gemm.cl`, `gemm_direct.cl`) built with `EPILOGUE`
//! call `epilogue(i, j, product, ...)` where they would store C(i, j); the
//! program is the generated prelude followed by the kernel's source, so
//! each distinct epilogue is its own program (cached like any fused kernel).

use super::choice::{GemmChoice, for_element};
use super::launch::{GemmSetup, Kernel, MultiplyOptions, auto_splits};
use super::operand::Operand;
use clfuse_core::{
    Access, ClFloat, CompiledKernel, GemmConfig, KernelArg, MatrixCl, NdRange, Result, enqueue,
};

const GEMM_SOURCE: &str = concat!(
    include_str!("../../cl/dmma.cl"),
    "\n",
    include_str!("../../cl/gemm.cl")
);
const GEMM_DIRECT_SOURCE: &str = include_str!("../../cl/gemm_direct.cl");

/// The GEMM half of an epilogue-fused kernel for `a * b`: which kernel, its
/// grid and build options, and its arguments (the expression's come after).
///
/// ```
/// use clfuse_core::MatrixCl;
/// use clfuse_kernels::EpilogueGemm;
/// let (a, b) = (MatrixCl::<f64>::zeros(40, 30)?, MatrixCl::<f64>::zeros(30, 40)?);
/// let plan = EpilogueGemm::plan(&a, &b)?;
/// // Square enough to take the GEMM kernel (vectors and split-k products do not).
/// assert!(plan.is_some());
/// # Ok::<(), clfuse_core::Error>(())
/// ```
#[derive(Debug)]
pub struct EpilogueGemm<'a> {
    kernel: Kernel,
    /// The kernel and its blocking as numbers (see [`structure`](Self::structure)).
    structure: [u32; 4],
    range: NdRange,
    /// The blocking's build options (`T` is added when a program is built).
    build: String,
    element: &'static str,
    args: Vec<KernelArg<'a>>,
}

/// Whether the shape leaves a GEMM to fuse: no vector, no empty product.
fn gemm_shaped(m: usize, k: usize, n: usize) -> bool {
    m > 1 && n > 1 && k > 0
}

impl<'a> EpilogueGemm<'a> {
    /// The plan for `a * b` with an epilogue, or `None` where a separate
    /// product is better or needed: an empty product or inner dimension,
    /// a vector operand (the matrix-vector kernels beat a GEMM tile that is
    /// one column wide), or a product that split-k would share among parts
    /// (each part stores a partial sum, so no part can finish an element).
    pub fn plan<T: ClFloat>(a: &'a MatrixCl<T>, b: &'a MatrixCl<T>) -> Result<Option<Self>> {
        const F: &str = "multiply";
        if a.cols() != b.rows() || !gemm_shaped(a.rows(), a.cols(), b.cols()) {
            return Ok(None);
        }
        let (oa, ob) = (Operand::whole(a), Operand::whole(b));
        let options = MultiplyOptions {
            config: Some(GemmConfig::for_epilogue(a.rows(), b.cols())?),
            splits: None,
        };
        let Some(setup) = GemmSetup::new(F, &oa, &ob, false, true, &options)? else {
            return Ok(None);
        };
        if setup.splits > 1 {
            return Ok(None);
        }
        let GemmSetup {
            kernel,
            structure,
            range,
            build,
            dims,
            leads: ((offset_a, lda), (offset_b, ldb)),
            ..
        } = setup;
        let args = vec![
            KernelArg::buffer(a, Access::Read),
            KernelArg::buffer(b, Access::Read),
            // C is not written with an epilogue; any buffer of the device will do.
            KernelArg::buffer(a, Access::Read),
            KernelArg::Int(dims.0),
            KernelArg::Int(dims.1),
            KernelArg::Int(dims.2),
            KernelArg::Int(offset_a),
            KernelArg::Int(lda),
            KernelArg::Int(offset_b),
            KernelArg::Int(ldb),
            KernelArg::Int(0),
            KernelArg::Int(dims.0),
            KernelArg::Int(a.view().bits()),
            KernelArg::Int(b.view().bits()),
            scalar(T::one()),
            scalar(T::default()),
        ];
        Ok(Some(EpilogueGemm {
            kernel,
            structure,
            range,
            build,
            element: T::CL_NAME,
            args,
        }))
    }

    /// Whether an `m x k` times `k x n` product takes an epilogue (see
    /// [`plan`](Self::plan)): a question about shapes only, asked before
    /// the operands are evaluated.
    ///
    /// ```
    /// use clfuse_kernels::EpilogueGemm;
    /// assert!(EpilogueGemm::fits::<f64>(1000, 100, 100)?);
    /// assert!(!EpilogueGemm::fits::<f64>(1000, 100, 1)?); // a matrix-vector product
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn fits<T: ClFloat>(m: usize, k: usize, n: usize) -> Result<bool> {
        if !gemm_shaped(m, k, n) {
            return Ok(false);
        }
        let config = for_element::<T>(GemmConfig::for_epilogue(m, n)?);
        Ok(auto_splits(m, n, k, &config) == 1)
    }

    /// What tells this kernel's programs apart besides the epilogue: the
    /// kernel and its blocking (a part of the fused kernel's cache key).
    pub fn structure(&self) -> [u32; 4] {
        self.structure
    }

    /// The entry point's name (`gemm`, `gemm_dmma` or `gemm_direct`: a
    /// profile says which path ran).
    pub fn kernel_name(&self) -> &'static str {
        self.kernel.name()
    }

    /// The program: `prelude` (which defines `epilogue`, `EPILOGUE_PARAMS`
    /// and `EPILOGUE_ARGS`), then the kernel's source built with `EPILOGUE`.
    pub fn source(&self, prelude: &str) -> String {
        let (kernel, order) = match self.kernel {
            Kernel::Direct => (GEMM_DIRECT_SOURCE, ""),
            // Bands of 8 tile rows: a tall product's column tiles of one
            // band run together, so its rows of A are read from memory
            // once instead of once per column of tiles (`inv_logit(x * b +
            // 1)`, x 1e6 x 100, on an H200: 1.287 -> 1.211 ms; square
            // products gained nothing, BENCHMARKS.md).
            Kernel::Tiled | Kernel::TensorCores => {
                (GEMM_SOURCE, "#ifndef SWIZZLE\n#define SWIZZLE 8\n#endif\n")
            }
        };
        format!("{prelude}\n#define EPILOGUE\n{order}\n{kernel}")
    }

    /// The build options (element type and blocking), asked for only when
    /// a program is built.
    pub fn build_options(&self) -> String {
        format!("-D T={} {}", self.element, self.build)
    }

    /// Enqueues `kernel` (built from [`source`](Self::source)) with the
    /// GEMM's arguments followed by `epilogue_args`, the expression's.
    pub fn launch(self, kernel: &CompiledKernel, epilogue_args: Vec<KernelArg<'a>>) -> Result<()> {
        let mut args = self.args;
        args.extend(epilogue_args);
        enqueue(kernel, &args, self.range)?;
        Ok(())
    }
}

fn scalar<'a, T: ClFloat>(value: T) -> KernelArg<'a> {
    if T::CL_NAME == "double" {
        KernelArg::Double(value.to_f64())
    } else {
        KernelArg::Float(value.to_f64() as f32)
    }
}
