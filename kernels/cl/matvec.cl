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
