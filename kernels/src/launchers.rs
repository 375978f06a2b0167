//! Typed launchers of the hand-written kernels in `cl/*.cl`, each checked
//! against its OpenCL C signature at compile time.

clfuse_core::kernel! {
    pub(crate) fn identity_kernel<T>(out a: T, rows: i32, cols: i32) = file "cl/identity.cl";
}
clfuse_core::kernel! {
    pub(crate) fn pack<T>(out packed: T, in unpacked: T, n: i32, view: i32) = file "cl/pack.cl";
}
clfuse_core::kernel! {
    pub(crate) fn unpack<T>(out unpacked: T, in packed: T, n: i32, view: i32) = file "cl/pack.cl";
}
clfuse_core::kernel! {
    pub(crate) fn add<T>(out c: T, in a: T, in b: T, rows: i32, cols: i32, view_a: i32, view_b: i32) = file "cl/basic.cl";
}
clfuse_core::kernel! {
    pub(crate) fn subtract<T>(out c: T, in a: T, in b: T, rows: i32, cols: i32, view_a: i32, view_b: i32) = file "cl/basic.cl";
}
clfuse_core::kernel! {
    pub(crate) fn scalar_mul<T>(out b: T, in a: T, scalar: T, rows: i32, cols: i32, view_a: i32) = file "cl/basic.cl";
}
clfuse_core::kernel! {
    pub(crate) fn scalar_mul_diagonal<T>(inout a: T, scalar: T, rows: i32, cols: i32) = file "cl/basic.cl";
}
clfuse_core::kernel! {
    pub(crate) fn transpose<T>(out b: T, in a: T, rows: i32, cols: i32, view_a: i32) = file "cl/basic.cl";
}
clfuse_core::kernel! {
    pub(crate) fn triangular_transpose<T>(inout a: T, n: i32, lower_to_upper: i32) = file "cl/basic.cl";
}
clfuse_core::kernel! {
    pub(crate) fn zeros<T>(inout a: T, rows: i32, cols: i32, part: i32) = file "cl/basic.cl";
}
clfuse_core::kernel! {
    pub(crate) fn batch_identity<T>(out a: T, n: i32, batches: i32) = file "cl/basic.cl";
}
clfuse_core::kernel! {
    pub(crate) fn sub_block<T>(inout dst: T, in src: T, src_i: i32, src_j: i32, dst_i: i32, dst_j: i32, rows: i32, cols: i32, src_rows: i32, dst_rows: i32, view: i32) = file "cl/basic.cl";
}
clfuse_core::kernel! {
    pub(crate) fn add_batch<T>(inout c: T, in batch: T, size: i32, batches: i32, beta: T) = file "cl/basic.cl";
}
clfuse_core::kernel! {
    pub(crate) fn check_nan<T>(in a: T, inout first: i32, rows: i32, cols: i32, view_a: i32) = file "cl/checks.cl";
}
clfuse_core::kernel! {
    pub(crate) fn check_finite<T>(in a: T, inout first: i32, rows: i32, cols: i32, view_a: i32) = file "cl/checks.cl";
}
clfuse_core::kernel! {
    pub(crate) fn copy_check_finite<T>(in a: T, out b: T, inout first: i32, rows: i32, cols: i32, view_checked: i32) = file "cl/checks.cl";
}
clfuse_core::kernel! {
    pub(crate) fn check_symmetric<T>(in a: T, inout first: i32, n: i32, tolerance: T) = file "cl/checks.cl";
}
clfuse_core::kernel! {
    pub(crate) fn copy_lower_check_symmetric<T>(in a: T, out b: T, inout first_non_finite: i32, inout first_asymmetric: i32, n: i32, tolerance: T) = file "cl/checks.cl";
}
clfuse_core::kernel! {
    pub(crate) fn check_diagonal_zeros<T>(in a: T, inout first: i32, rows: i32, cols: i32) = file "cl/checks.cl";
}
clfuse_core::kernel! {
    pub(crate) fn gemm<T>(in a: T, in b: T, inout c: T, m: i32, n: i32, k: i32, offset_a: i32, lda: i32, offset_b: i32, ldb: i32, offset_c: i32, ldc: i32, view_a: i32, view_b: i32, alpha: T, beta: T) = file "cl/dmma.cl" + "cl/gemm.cl";
}
clfuse_core::kernel! {
    pub(crate) fn gemm_dmma<T>(in a: T, in b: T, inout c: T, m: i32, n: i32, k: i32, offset_a: i32, lda: i32, offset_b: i32, ldb: i32, offset_c: i32, ldc: i32, view_a: i32, view_b: i32, alpha: T, beta: T) = file "cl/dmma.cl" + "cl/gemm.cl";
}
clfuse_core::kernel! {
    pub(crate) fn gemm_direct<T>(in a: T, in b: T, inout c: T, m: i32, n: i32, k: i32, offset_a: i32, lda: i32, offset_b: i32, ldb: i32, offset_c: i32, ldc: i32, view_a: i32, view_b: i32, alpha: T, beta: T) = file "cl/gemm_direct.cl";
}
clfuse_core::kernel! {
    pub(crate) fn matrix_vector_multiply<T>(out y: T, in a: T, in x: T, m: i32, k: i32, view_a: i32) = file "cl/matvec.cl";
}
clfuse_core::kernel! {
    pub(crate) fn row_vector_matrix_multiply<T>(out partial: T, in x: T, in a: T, k: i32, n: i32, view_a: i32) = file "cl/matvec.cl";
}
clfuse_core::kernel! {
    pub(crate) fn matrix_skinny_multiply<T>(out y: T, in a: T, in x: T, m: i32, k: i32, view_a: i32) = file "cl/matvec.cl";
}
clfuse_core::kernel! {
    pub(crate) fn transposed_skinny_multiply<T>(out partial: T, in a: T, in x: T, k: i32, n: i32, view_a: i32) = file "cl/matvec.cl";
}
clfuse_core::kernel! {
    pub(crate) fn transposed_skinny_lanes<T>(out partial: T, in a: T, in x: T, k: i32, view_a: i32) = file "cl/matvec.cl";
}
clfuse_core::kernel! {
    pub(crate) fn diag_inv<T>(inout a: T, inout inv: T, n: i32) = file "cl/tri_inverse.cl";
}
clfuse_core::kernel! {
    pub(crate) fn inv_lower_tri_multiply<T>(in a: T, out temp: T, n: i32, s: i32) = file "cl/tri_inverse.cl";
}
clfuse_core::kernel! {
    pub(crate) fn neg_rect_lower_tri_multiply<T>(inout a: T, in temp: T, n: i32, s: i32) = file "cl/tri_inverse.cl";
}
clfuse_core::kernel! {
    pub(crate) fn cholesky_block<T>(inout a: T, inout first_failure: i32, n: i32, offset: i32, lda: i32, index_base: i32) = file "cl/cholesky.cl";
}
clfuse_core::kernel! {
    pub(crate) fn cholesky_leaf<T>(in a: T, out factor: T, inout first_failure: i32, n: i32, below: i32, offset: i32, ld: i32, index_base: i32) = file "cl/cholesky.cl";
}
clfuse_core::kernel! {
    pub(crate) fn tri_solve_step<T>(in s: T, inout b: T, out x: T, n: i32, m: i32, k0: i32, transposed: i32, upper: i32) = file "cl/tri_solve.cl";
}
clfuse_core::kernel! {
    pub(crate) fn mixture_indicators(in x: f64, in components: f64, out z: i32, out chosen: f64, n: i32, k: i32, seed_lo: i32, seed_hi: i32, stream: i32) = file "cl/philox.cl" + "cl/mixture.cl";
}
clfuse_core::kernel! {
    pub(crate) fn log_sum_exp_rows_of_product(in x: f64, in w: f64, in c: f64, out out: f64, n: i32, q: i32, k: i32) = file "cl/log_sum_exp_rows.cl";
}
clfuse_core::kernel! {
    pub(crate) fn log_softmax_rows_of_product(in x: f64, in w: f64, in c: f64, out out: f64, out row_normaliser: f64, n: i32, q: i32, k: i32) = file "cl/dmma.cl" + "cl/log_softmax_rows.cl";
}
clfuse_core::kernel! {
    pub(crate) fn mixture_log_responsibilities(in x: f64, in components: f64, out responsibilities: f64, out row_log_density: f64, n: i32, k: i32) = file "cl/philox.cl" + "cl/mixture.cl";
}
clfuse_core::kernel! {
    pub(crate) fn mixture_statistics(in x: f64, in z: i32, out partial: f64, n: i32, k: i32, rows_per_chunk: i32) = file "cl/philox.cl" + "cl/mixture.cl";
}
clfuse_core::kernel! {
    pub(crate) fn mixture_features(in x: f64, out features: f64, n: i32) = file "cl/philox.cl" + "cl/mixture.cl";
}
