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

// y (1 x N) = x (1 x K) * A (K x N): one work-group of LOCAL_SIZE work items
// per column of A, reduced in local memory.
#ifndef LOCAL_SIZE
#define LOCAL_SIZE 64
#endif
__kernel void row_vector_matrix_multiply(__global T* y, const __global T* x, const __global T* a, int K, int N, int view_a) {
  __local T partial[LOCAL_SIZE];
  const int j = get_group_id(0);
  const int lid = get_local_id(0);
  int k_begin = 0;
  int k_end = K;
  if (!(view_a & 1)) {
    k_end = min(j + 1, K);
  }
  if (!(view_a & 2)) {
    k_begin = min(j, K);
  }
  T sum = 0;
  for (int k = k_begin + lid; k < k_end; k += LOCAL_SIZE) {
    sum = fma(x[k], a[k + K * j], sum);
  }
  partial[lid] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int step = LOCAL_SIZE / 2; step > 0; step /= 2) {
    if (lid < step) {
      partial[lid] += partial[lid + step];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) {
    y[j] = partial[0];
  }
}
