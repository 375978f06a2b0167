// General matrix multiply without local memory or barriers, for CPU devices:
//   C = alpha * op(A) * op(B) + beta * C
// with the same arguments, options (TRANS_A, TRANS_B, LOWER_ONLY), views and
// split-k (global dimension 2) as `gemm` in gemm.cl, and the same EPILOGUE.
//
// Each work item computes DIRECT_COLS elements of one row of C straight from
// global memory: per k one element of op(A) and DIRECT_COLS of op(B) (the
// same for every work item of a row block), DIRECT_COLS multiply-adds.
// Consecutive work items take consecutive rows, so a CPU runtime that
// vectorises across work items (PoCL) turns the A reads into vector loads
// and the B reads into broadcasts; with no barrier nothing is spilled
// between regions, and the caches play the part of local memory.

#ifndef DIRECT_ROWS
#define DIRECT_ROWS 8
#endif
#ifndef DIRECT_COLS
#define DIRECT_COLS 4
#endif

#define IN_VIEW(i, j, view) ((i) == (j) || ((i) > (j) && ((view) & 1)) || ((i) < (j) && ((view) & 2)))

#ifdef TRANS_A
#define A_AT(i, k) a[offset_a + (k) + lda * (i)]
#else
#define A_AT(i, k) a[offset_a + (i) + lda * (k)]
#endif
#ifdef TRANS_B
#define B_AT(k, j) b[offset_b + (j) + ldb * (k)]
#else
#define B_AT(k, j) b[offset_b + (k) + ldb * (j)]
#endif

#ifndef EPILOGUE
#define EPILOGUE_PARAMS
#define EPILOGUE_ARGS
#endif

__kernel void gemm_direct(const __global T* a, const __global T* b, __global T* c, int M, int N, int K, int offset_a, int lda, int offset_b, int ldb, int offset_c, int ldc, int view_a, int view_b, T alpha, T beta EPILOGUE_PARAMS) {
  const int row0 = get_global_id(0) * DIRECT_ROWS;
  const int col0 = get_global_id(1) * DIRECT_COLS;
  if (row0 >= M || col0 >= N) {
    return;
  }
#ifdef LOWER_ONLY
  if (col0 > row0 + DIRECT_ROWS - 1) {
    return;
  }
#endif
  // The k range that can be non-zero anywhere in this block.
  int k_begin = 0;
  int k_end = K;
  if (!(view_a & 1)) {
    k_begin = max(k_begin, row0);
  }
  if (!(view_a & 2)) {
    k_end = min(k_end, row0 + DIRECT_ROWS);
  }
  if (!(view_b & 1)) {
    k_end = min(k_end, col0 + DIRECT_COLS);
  }
  if (!(view_b & 2)) {
    k_begin = max(k_begin, col0);
  }
  const int split = get_global_id(2);
  const int per_split = (max(k_end - k_begin, 0) + get_global_size(2) - 1) / get_global_size(2);
  const int k_first = k_begin + split * per_split;
  const int k_last = min(k_end, k_first + per_split);

  T acc[DIRECT_ROWS][DIRECT_COLS];
#pragma unroll
  for (int r = 0; r < DIRECT_ROWS; r++) {
#pragma unroll
    for (int s = 0; s < DIRECT_COLS; s++) {
      acc[r][s] = 0;
    }
  }
  const bool inside = row0 + DIRECT_ROWS <= M && col0 + DIRECT_COLS <= N && view_a == 3 && view_b == 3;
  if (inside) {
    // Straight-line block: DIRECT_ROWS consecutive elements of a column of
    // op(A) (a vector load when A is not transposed) times DIRECT_COLS
    // elements of op(B).
    for (int k = k_first; k < k_last; k++) {
      T b_k[DIRECT_COLS];
#pragma unroll
      for (int s = 0; s < DIRECT_COLS; s++) {
        b_k[s] = B_AT(k, col0 + s);
      }
#pragma unroll
      for (int s = 0; s < DIRECT_COLS; s++) {
#pragma unroll
        for (int r = 0; r < DIRECT_ROWS; r++) {
          acc[r][s] = fma(A_AT(row0 + r, k), b_k[s], acc[r][s]);
        }
      }
    }
  } else {
    // Edge blocks and views: every element checked.
    for (int k = k_first; k < k_last; k++) {
      for (int s = 0; s < DIRECT_COLS; s++) {
        const int j = col0 + s;
        const T b_ks = (j < N && IN_VIEW(k, j, view_b)) ? B_AT(k, j) : 0;
        for (int r = 0; r < DIRECT_ROWS; r++) {
          const int i = row0 + r;
          const T a_ik = (i < M && IN_VIEW(i, k, view_a)) ? A_AT(i, k) : 0;
          acc[r][s] = fma(a_ik, b_ks, acc[r][s]);
        }
      }
    }
  }

  __global T* out = c + offset_c + split * ldc * N;
  for (int s = 0; s < DIRECT_COLS; s++) {
    const int j = col0 + s;
    for (int r = 0; r < DIRECT_ROWS; r++) {
      const int i = row0 + r;
#ifdef LOWER_ONLY
      const bool wanted = j <= i;
#else
      const bool wanted = true;
#endif
      if (i < M && j < N && wanted) {
        const T value = alpha * acc[r][s];
#ifdef EPILOGUE
        epilogue(i, j, value EPILOGUE_ARGS);
#else
        out[i + ldc * j] = beta == 0 ? value : value + beta * out[i + ldc * j];
#endif
      }
    }
  }
}
