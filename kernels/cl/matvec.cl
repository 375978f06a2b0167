// Matrix-vector products (paper section 3.1.3): 1-D work-groups, so no
// thread of a 2-D GEMM grid sits idle on a vector's single column.

#define IN_VIEW(i, j, view) ((i) == (j) || ((i) > (j) && ((view) & 1)) || ((i) < (j) && ((view) & 2)))

// y (M x 1) = A (M x K) * x (K x 1): one work item per row; neighbouring
// work items read neighbouring elements of each column of A.
__kernel void matrix_vector_multiply(__global T* y, const __global T* a, const __global T* x, int M, int K, int view_a) {
  const int i = get_global_id(0);
  if (i >= M) {
    return;
  }
  int k_begin = 0;
  int k_end = K;
  if (!(view_a & 1)) {
    k_begin = min(i, K);
  }
  if (!(view_a & 2)) {
    k_end = min(i + 1, K);
  }
  T sum = 0;
  for (int k = k_begin; k < k_end; k++) {
    sum = fma(a[i + M * k], x[k], sum);
  }
  y[i] = sum;
}

// partial (groups x N, row-major per group) = x (1 x K) * A (K x N), in
// pieces: work-group (g, c) sums rows g, g + G, g + 2G, ... (blocks of
// LOCAL_SIZE rows, G = get_num_groups(0)) for the COLUMN_CHUNK columns
// starting at c * COLUMN_CHUNK. Each work item reads x[k] once per chunk and
// keeps one accumulator per column, so x is not re-read per column and every
// read of A is coalesced; the host sums the groups' partial rows (add_batch).
#ifndef LOCAL_SIZE
#define LOCAL_SIZE 256
#endif
#ifndef COLUMN_CHUNK
#define COLUMN_CHUNK 8
#endif
__kernel void row_vector_matrix_multiply(__global T* partial, const __global T* x, const __global T* a, int K, int N, int view_a) {
  __local T scratch[LOCAL_SIZE];
  const int lid = get_local_id(0);
  const int group = get_group_id(0);
  const int groups = get_num_groups(0);
  const int c0 = get_group_id(1) * COLUMN_CHUNK;
  T acc[COLUMN_CHUNK];
#pragma unroll
  for (int c = 0; c < COLUMN_CHUNK; c++) {
    acc[c] = 0;
  }
  for (int k = group * LOCAL_SIZE + lid; k < K; k += groups * LOCAL_SIZE) {
    const T x_k = x[k];
#pragma unroll
    for (int c = 0; c < COLUMN_CHUNK; c++) {
      const int j = c0 + c;
      if (j < N && IN_VIEW(k, j, view_a)) {
        acc[c] = fma(x_k, a[k + K * j], acc[c]);
      }
    }
  }
  for (int c = 0; c < COLUMN_CHUNK; c++) {
    scratch[lid] = acc[c];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int step = LOCAL_SIZE / 2; step > 0; step /= 2) {
      if (lid < step) {
        scratch[lid] += scratch[lid + step];
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0 && c0 + c < N) {
      partial[group * N + c0 + c] = scratch[0];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}

// Skinny products: the right operand has few columns (NCOLS, at most 16),
// as a batch of chains' parameters has. Each keeps the matrix-vector
// kernels' access pattern, with NCOLS accumulators where those have one, so
// the tall matrix is read once for all the columns.
#ifndef NCOLS
#define NCOLS 1
#endif

// y (M x NCOLS) = A (M x K) * X (K x NCOLS): one work item per row; X's
// elements are the same for every work item (served from cache).
__kernel void matrix_skinny_multiply(__global T* y, const __global T* a, const __global T* x, int M, int K, int view_a) {
  const int i = get_global_id(0);
  if (i >= M) {
    return;
  }
  int k_begin = 0;
  int k_end = K;
  if (!(view_a & 1)) {
    k_begin = min(i, K);
  }
  if (!(view_a & 2)) {
    k_end = min(i + 1, K);
  }
  T acc[NCOLS];
#pragma unroll
  for (int c = 0; c < NCOLS; c++) {
    acc[c] = 0;
  }
  for (int k = k_begin; k < k_end; k++) {
    const T a_ik = a[i + (long)M * k];
#pragma unroll
    for (int c = 0; c < NCOLS; c++) {
      acc[c] = fma(a_ik, x[k + K * c], acc[c]);
    }
  }
#pragma unroll
  for (int c = 0; c < NCOLS; c++) {
    y[i + (long)M * c] = acc[c];
  }
}

// partial (groups x (N * NCOLS)) = A^T (N x K) * X (K x NCOLS), in pieces
// as row_vector_matrix_multiply makes them: work-group (g, c) sums rows g,
// g + G, ... of A for the COLUMN_CHUNK columns of A starting at
// c * COLUMN_CHUNK, against every column of X; group g's piece is the
// N x NCOLS result (column-major) at partial + g * N * NCOLS.
__kernel void transposed_skinny_multiply(__global T* partial, const __global T* a, const __global T* x, int K, int N, int view_a) {
  __local T scratch[LOCAL_SIZE];
  const int lid = get_local_id(0);
  const int group = get_group_id(0);
  const int groups = get_num_groups(0);
  const int j0 = get_group_id(1) * COLUMN_CHUNK;
  T acc[COLUMN_CHUNK][NCOLS];
#pragma unroll
  for (int j = 0; j < COLUMN_CHUNK; j++) {
#pragma unroll
    for (int c = 0; c < NCOLS; c++) {
      acc[j][c] = 0;
    }
  }
  for (int k = group * LOCAL_SIZE + lid; k < K; k += groups * LOCAL_SIZE) {
    T x_k[NCOLS];
#pragma unroll
    for (int c = 0; c < NCOLS; c++) {
      x_k[c] = x[k + (long)K * c];
    }
#pragma unroll
    for (int j = 0; j < COLUMN_CHUNK; j++) {
      if (j0 + j < N && IN_VIEW(k, j0 + j, view_a)) {
        const T a_kj = a[k + (long)K * (j0 + j)];
#pragma unroll
        for (int c = 0; c < NCOLS; c++) {
          acc[j][c] = fma(a_kj, x_k[c], acc[j][c]);
        }
      }
    }
  }
  for (int j = 0; j < COLUMN_CHUNK; j++) {
    for (int c = 0; c < NCOLS; c++) {
      scratch[lid] = acc[j][c];
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int step = LOCAL_SIZE / 2; step > 0; step /= 2) {
        if (lid < step) {
          scratch[lid] += scratch[lid + step];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
      }
      if (lid == 0 && j0 + j < N) {
        partial[(long)group * N * NCOLS + (j0 + j) + N * c] = scratch[0];
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
}
