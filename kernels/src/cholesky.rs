//! Blocked Cholesky decomposition (paper §3.3.1): a recursion on column
//! panels that ends in a leaf kernel, from a working copy of `a` into a new
//! factor.

use crate::basic::{Block, Part, copy_block, int, square, sub_block, zeros};
use crate::block_inverse::invert_lower_in_place;
use crate::checks::{
    copy_checking_finite, copy_lower_checking_symmetric, enqueue_check_finite, first_flagged,
    first_flagged_all, new_flag, not_finite,
};
use crate::gemm::{MultiplyOptions, Operand, gemm_into};
use crate::launchers as cl;
use clfuse_core::{ClFloat, Error, MatrixCl, NdRange, Result, Runtime, SideWork, View};

/// Blocks up to this size are factored by the leaf kernel, which also
/// solves the rows below them (`LEAF` in cholesky.cl).
const LEAF: usize = 64;

/// The narrowest update tail worth the second queue on GPUs (see
/// [`CholeskyOptions::lookahead`]). On an H200, same lease: 3.27–3.28 ms at
/// n = 4096 against 3.44–3.49 without lookahead, 3.33–3.35 for every tail
/// and 3.36–3.37 for tails of 1024 or more; within 1% at 500–2048, 8192
/// and 16384 for all of them (the tails' products take the compute units
/// the leaves' chain needs; OpenCL has no queue priorities there).
const LOOKAHEAD_ON_GPUS: usize = 128;

/// Work items per leaf row (`GROUPS` in cholesky.cl; the leaf's work-group
/// has `64 * groups` work items) and the leaf kernel's build option for it:
/// [`Tuning::cholesky_leaf_groups`](clfuse_core::Tuning) (1, 2 or 4), else 4
/// (the fastest on an H200 with the earlier leaf, which kept the diagonal
/// block in registers: 36 µs per leaf with its rows below at n = 8192, 66
/// µs with 2).
fn leaf_groups(rt: &Runtime) -> (usize, &'static str) {
    match rt.tuning().cholesky_leaf_groups.unwrap_or(4) {
        1 => (1, "-D GROUPS=1"),
        2 => (2, "-D GROUPS=2"),
        _ => (4, "-D GROUPS=4"),
    }
}

/// Leaf work-groups per compute unit, at most (each factors the diagonal
/// block itself, then takes its share of the rows below):
/// [`Tuning::cholesky_leaf_groups_per_cu`](clfuse_core::Tuning), else 1 (on
/// an H200, 2 measured the same at n = 8192 and 3% slower at 16384).
fn leaf_groups_per_unit(rt: &Runtime) -> usize {
    rt.tuning().cholesky_leaf_groups_per_cu.unwrap_or(1)
}

/// Tuning of [`cholesky_decompose_with`].
///
/// ```
/// let o = clfuse_kernels::CholeskyOptions::default();
/// assert_eq!((o.partition, o.lookahead), (4, 0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CholeskyOptions {
    /// Each panel of columns factors its leading `width / partition`
    /// columns first (rounded up to a whole number of `min_l11_size`).
    pub partition: usize,
    /// Panels this narrow are leaves: their diagonal block is factored by
    /// one work-group (by the register leaf kernel, which also computes
    /// the rows below, up to 64 columns).
    pub min_l11_size: usize,
    /// Relative tolerance of the symmetry check.
    pub symmetry_tolerance: f64,
    /// Lookahead: an update's columns that the next panel does not need
    /// yet are updated on the device's second queue while that panel is
    /// factored (see [`Runtime::on_side_queue`]) when there are at least
    /// this many of them; 0: never.
    pub lookahead: usize,
}

impl CholeskyOptions {
    /// The options [`cholesky_decompose`] uses on the current device: the
    /// defaults, with panels halved (`partition` 2) and lookahead on GPUs
    /// ([`Tuning::cholesky_lookahead`](clfuse_core::Tuning) overrides the
    /// latter). On an H200
    /// that took 12.0 ms against 12.8 ms with quarters at n = 8192 and 54.7
    /// against 59.8 ms at 16384 (same run, BENCHMARKS.md); on PoCL quarters
    /// were faster (103 against 178 ms at n = 1000).
    ///
    /// ```
    /// let o = clfuse_kernels::CholeskyOptions::for_device()?;
    /// assert!(o.partition == 2 || o.partition == 4);
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn for_device() -> Result<Self> {
        let rt = Runtime::get()?;
        let gpu = rt.device_info().is_gpu;
        Ok(CholeskyOptions {
            partition: if gpu { 2 } else { 4 },
            lookahead: rt.tuning().cholesky_lookahead.unwrap_or(if gpu {
                LOOKAHEAD_ON_GPUS
            } else {
                0
            }),
            ..Default::default()
        })
    }
}

impl Default for CholeskyOptions {
    fn default() -> Self {
        CholeskyOptions {
            partition: 4,
            min_l11_size: LEAF,
            symmetry_tolerance: 1e-8,
            lookahead: 0,
        }
    }
}

/// The lower Cholesky factor `L` of a symmetric positive-definite `a`
/// (`a = L·Lᵀ`; the result has the `Lower` view).
///
/// Errors, checked on the device and read back once at the end:
/// `NaN { row, col }` for a NaN in `a`, `NotSymmetric { row, col }` when
/// `a` (view `Entire`) is not symmetric, `NotPositiveDefinite { index }` at
/// the first non-positive pivot. A `Lower` view is taken as the symmetric
/// matrix it is the lower half of.
///
/// ```
/// use clfuse_core::{MatrixCl, View};
/// let a = MatrixCl::from_slice(2, 2, &[4.0, 2.0, 2.0, 5.0])?;
/// let l = clfuse_kernels::cholesky_decompose(&a)?;
/// assert_eq!(l.to_vec()?, vec![2.0, 1.0, 0.0, 2.0]);
/// assert_eq!(l.view(), View::Lower);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn cholesky_decompose<T: ClFloat>(a: &MatrixCl<T>) -> Result<MatrixCl<T>> {
    cholesky_decompose_with(a, &CholeskyOptions::for_device()?)
}

/// [`cholesky_decompose`] with explicit `partition` and `min_l11_size`.
///
/// ```
/// use clfuse_core::MatrixCl;
/// use clfuse_kernels::CholeskyOptions;
/// let a = MatrixCl::from_slice(2, 2, &[4.0, 2.0, 2.0, 5.0])?;
/// let options = CholeskyOptions { partition: 2, min_l11_size: 1, ..Default::default() };
/// let l = clfuse_kernels::cholesky_decompose_with(&a, &options)?;
/// assert_eq!(l.to_vec()?, vec![2.0, 1.0, 0.0, 2.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn cholesky_decompose_with<T: ClFloat>(
    a: &MatrixCl<T>,
    options: &CholeskyOptions,
) -> Result<MatrixCl<T>> {
    let n = square(F, "a", a)?;
    if options.partition < 2 || options.min_l11_size == 0 {
        return Err(Error::InvalidArgument {
            function: F,
            argument: "options",
            reason: format!("partition must be >= 2 and min_l11_size >= 1, got {options:?}"),
        });
    }
    let symmetric_by_view = match a.view() {
        View::Entire => false,
        View::Lower | View::Diagonal => true,
        view => {
            return Err(Error::InvalidView {
                function: F,
                view,
                reason: "pass the lower triangle (view Lower) or the whole matrix",
            });
        }
    };
    int(F, "a", a.len())?;
    // `work` is `a` as the factorization updates it (lower triangle only);
    // the factor goes to a matrix of its own, so that no product has to
    // overwrite its own operand. The copy checks the lower triangle, which
    // is all the factorization reads, for NaN and inf, and a whole `a` for
    // symmetry on the way. The pivots' flag is made first, so that the one
    // launch that sets the copy's flags sets it too.
    let failure = new_flag()?;
    let (work, non_finite, asymmetry) = if symmetric_by_view {
        let (work, non_finite) = copy_checking_finite(F, a, a.view().intersection(View::Lower))?;
        (work, non_finite, None)
    } else {
        let tolerance = T::from_f64(options.symmetry_tolerance);
        let (work, non_finite, asymmetry) = copy_lower_checking_symmetric(F, a, tolerance)?;
        (work, non_finite, Some(asymmetry))
    };
    let factor = MatrixCl::<T>::uninitialized(n, n)?;
    let panels = Panels {
        work: &work,
        factor: &factor,
        failure: &failure,
        upper_zeroed: std::cell::Cell::new(true),
        options,
        thin_update: MultiplyOptions {
            config: crate::gemm::thin_update()?,
            ..WHOLE
        },
    };
    panels.factor(0, n)?;
    if !panels.upper_zeroed.get() {
        zeros(&factor, Part::StrictlyUpper)?;
    }
    let [non_finite, failed, asymmetric] =
        first_flagged_all([Some(&non_finite), Some(panels.failure), asymmetry.as_ref()])?;
    if let Some(index) = non_finite {
        return Err(not_finite(F, "a", a, index, false));
    }
    if let Some(index) = asymmetric {
        // NaN or inf above the diagonal shows as asymmetry: name it as what it is.
        if let Some(index) = first_flagged(&enqueue_check_finite(F, a, View::Entire)?)? {
            return Err(not_finite(F, "a", a, index, false));
        }
        return Err(Error::NotSymmetric {
            function: F,
            argument: "a",
            row: index % n,
            col: index / n,
        });
    }
    if let Some(index) = failed {
        return Err(Error::NotPositiveDefinite {
            function: F,
            argument: "a",
            index,
        });
    }
    factor.set_view(View::Lower);
    Ok(factor)
}

/// The state of one factorization. The recursion works on *panels*: the
/// columns `first .. first + width` of every row from `first` down.
/// Factoring a panel factors its left part, subtracts that part's
/// contribution from the rest of the panel (one product), and factors the
/// rest; a panel at most `min_l11_size` wide is a leaf: its diagonal block
/// is factored in one work-group, and the rows below it are solved against
/// it, `L21 = A21 · (L11⁻¹)ᵀ` (by substitution in the register leaf
/// kernel). The square matrix is the panel of all its columns, so this is
/// the whole algorithm: every flop outside the leaves is in a product, and
/// no inverse larger than a leaf is formed.
struct Panels<'a, T: ClFloat> {
    /// `a`, with every factored column's contribution subtracted from the
    /// columns after it (lower triangle).
    work: &'a MatrixCl<T>,
    /// The result `L` (lower triangle).
    factor: &'a MatrixCl<T>,
    /// Whether every leaf so far wrote the zeros above its panel (the
    /// register leaf kernel does; the global-memory fallback does not).
    upper_zeroed: std::cell::Cell<bool>,
    /// The first failing pivot, `INT_MAX` while none has failed.
    failure: &'a MatrixCl<i32>,
    options: &'a CholeskyOptions,
    /// The options of the update between a panel's two leaves (k and width
    /// at most `LEAF`): [`WHOLE`] with the GEMM module's thin tiling where
    /// it has one (GPUs).
    thin_update: MultiplyOptions,
}

const F: &str = "cholesky_decompose";

impl<T: ClFloat> Panels<'_, T> {
    /// Factors the panel of columns `first .. first + width`, given that
    /// the contributions of all columns before `first` are subtracted.
    fn factor(&self, first: usize, width: usize) -> Result<()> {
        self.factor_beside(first, width, self.options.lookahead > 0, None)
    }

    /// [`factor`](Self::factor), where `pending` is a side-queue update of
    /// the panel's columns after its left part, still running, and `fork`
    /// says whether this panel may queue such updates itself.
    ///
    /// With lookahead, the update of the rest of a panel is split where
    /// the rest's own left part ends: that part's columns are updated on
    /// the main queue, the columns after it on the side queue, and the
    /// rest's left part is factored meanwhile (it reads and writes only
    /// its own columns), so that the chain of leaves runs beside the
    /// product. The left part forks nothing itself: the side queue runs in
    /// order, so its work would wait behind the pending update.
    fn factor_beside(
        &self,
        first: usize,
        width: usize,
        fork: bool,
        pending: Option<SideWork>,
    ) -> Result<()> {
        if width == 0 {
            return Ok(());
        }
        if width <= self.options.min_l11_size {
            return self.leaf(first, width);
        }
        let left = self.left_part(width);
        self.factor_beside(first, left, fork && pending.is_none(), None)?;
        if let Some(pending) = pending {
            pending.join()?;
        }
        let rest = first + left;
        let rest_width = width - left;
        let head = self.left_part(rest_width);
        if fork
            && rest_width > self.options.min_l11_size
            && rest_width - head >= self.options.lookahead
        {
            self.update(first, left, rest, head)?;
            let tail = Runtime::get()?
                .on_side_queue(|| self.update(first, left, rest + head, rest_width - head))?;
            return self.factor_beside(rest, rest_width, fork, Some(tail));
        }
        self.update(first, left, rest, rest_width)?;
        self.factor_beside(rest, rest_width, fork, None)
    }

    /// How many of a panel's `width` columns it factors first: a whole
    /// number of leaves, so that the recursion ends in full leaves.
    fn left_part(&self, width: usize) -> usize {
        let leaf = self.options.min_l11_size;
        ((width / self.options.partition).div_ceil(leaf).max(1) * leaf).min(width - 1)
    }

    /// Columns `column .. column + width` of `work`, from row `column`
    /// down, -= the factor's rows there of columns `first .. first + left`
    /// · its rows level with those columns, transposed (lower triangle
    /// only: the block's top is a diagonal block).
    fn update(&self, first: usize, left: usize, column: usize, width: usize) -> Result<()> {
        let rows = self.work.rows() - column;
        let _scope = clfuse_core::profile_scope(match left {
            ..=64 => "cholesky update, k <= 64",
            65..=256 => "cholesky update, k <= 256",
            257..=1024 => "cholesky update, k <= 1024",
            _ => "cholesky update, k > 1024",
        });
        gemm_into(
            F,
            self.work,
            Block::new(column, column, rows, width),
            Operand::block(
                self.factor,
                Block::new(column, first, rows, left),
                View::Entire,
            ),
            Operand::block(
                self.factor,
                Block::new(column, first, width, left),
                View::Entire,
            )
            .t(),
            T::from_f64(-1.0),
            T::one(),
            true,
            if left <= LEAF && width <= LEAF {
                &self.thin_update
            } else {
                &WHOLE
            },
        )
    }

    /// A leaf panel: its diagonal block `L11` and the rows below it,
    /// `L21 = A21 · (L11⁻¹)ᵀ`: one launch of the register leaf kernel when
    /// the block fits it (a forward substitution per row below), else the
    /// global-memory kernel, the batched triangular inverse and a product.
    fn leaf(&self, first: usize, width: usize) -> Result<()> {
        let n = self.work.rows();
        let below = n - first - width;
        let rt = Runtime::get()?;
        let info = rt.device_info();
        let (groups, leaf_option) = leaf_groups(rt);
        // Doubles on NVIDIA: warps factor the diagonal block's columns in
        // registers, exchanging values by shuffles and warp barriers
        // (inline PTX).
        let shuffles = std::mem::size_of::<T>() == 8 && info.nv_compute_capability.is_some();
        let options = format!(
            "{leaf_option}{}",
            if shuffles { " -D WARP_SHUFFLE" } else { "" }
        );
        let threads = LEAF * groups;
        // The leaf's local memory (cholesky.cl): the padded block, the
        // reciprocal pivots, two flags and, with shuffles, each warp's step
        // columns.
        let step_columns = if shuffles { threads / 32 * 2 * 32 } else { 0 };
        let leaf_bytes = (LEAF * (LEAF + 1) + LEAF + step_columns) * std::mem::size_of::<T>() + 8;
        let diagonal = int(F, "a", first + n * first)?;
        if width <= LEAF
            && leaf_bytes as u64 <= info.local_mem_bytes
            && threads <= info.max_work_group_size
        {
            // Every work-group factors the diagonal block again, so no more
            // of them than the device runs at once.
            let resident = info.compute_units.max(1) as usize * leaf_groups_per_unit(rt);
            let work_groups = below.max(first).div_ceil(LEAF).clamp(1, resident);
            let args = (
                self.work,
                self.factor,
                self.failure,
                int(F, "a", width)?,
                int(F, "a", below)?,
                diagonal,
                int(F, "a", n)?,
                int(F, "a", first)?,
            );
            let _scope = clfuse_core::profile_scope(if below == 0 {
                "cholesky leaf"
            } else {
                "cholesky leaf and L21"
            });
            cl::cholesky_leaf::<T>().launch_with_options(
                NdRange::d1(threads * work_groups).with_local(&[threads]),
                &options,
                args,
            )?;
            return Ok(());
        }
        self.upper_zeroed.set(false);
        let block = Block::new(first, first, width, width);
        sub_block(self.factor, first, first, self.work, block, View::Lower)?;
        // Enough work items for the trailing updates (up to width² elements per step).
        let threads = (width * width).clamp(1, 256).min(info.max_work_group_size);
        let args = (
            self.factor,
            self.failure,
            int(F, "a", width)?,
            diagonal,
            int(F, "a", n)?,
            int(F, "a", first)?,
        );
        cl::cholesky_block::<T>().launch(NdRange::d1(threads).with_local(&[threads]), args)?;
        if below == 0 {
            return Ok(());
        }
        let l11_inverse = copy_block(self.factor, block)?;
        // Pivots were checked by the block kernel, so no diagonal check here.
        invert_lower_in_place(&l11_inverse, width)?;
        let l21 = Block::new(first + width, first, below, width);
        gemm_into(
            F,
            self.factor,
            l21,
            Operand::block(self.work, l21, View::Entire),
            Operand::block(&l11_inverse, Block::new(0, 0, width, width), View::Lower).t(),
            T::one(),
            T::default(),
            false,
            &WHOLE,
        )
    }
}

/// Products of the recursion: never split along k (the blocks are written
/// in place and k is at most a panel's width).
const WHOLE: MultiplyOptions = MultiplyOptions {
    splits: Some(1),
    config: None,
};
