// Basic kernels (paper section 3.5): element-wise helpers, transposes,
// triangle handling and checks on column-major matrices. `view` arguments use
// View::bits(): bit 0 = the part below the diagonal, bit 1 = above it;
// elements outside a matrix's view read as zero.

#define IN_VIEW(i, j, view) ((i) == (j) || ((i) > (j) && ((view) & 1)) || ((i) < (j) && ((view) & 2)))

__kernel void add(__global T* c, const __global T* a, const __global T* b, int rows, int cols, int view_a, int view_b) {
  const int i = get_global_id(0);
  const int j = get_global_id(1);
  if (i >= rows || j >= cols) {
    return;
  }
  const T a_ij = IN_VIEW(i, j, view_a) ? a[i + rows * j] : 0;
  const T b_ij = IN_VIEW(i, j, view_b) ? b[i + rows * j] : 0;
  c[i + rows * j] = a_ij + b_ij;
}

__kernel void subtract(__global T* c, const __global T* a, const __global T* b, int rows, int cols, int view_a, int view_b) {
  const int i = get_global_id(0);
  const int j = get_global_id(1);
  if (i >= rows || j >= cols) {
    return;
  }
  const T a_ij = IN_VIEW(i, j, view_a) ? a[i + rows * j] : 0;
  const T b_ij = IN_VIEW(i, j, view_b) ? b[i + rows * j] : 0;
  c[i + rows * j] = a_ij - b_ij;
}

__kernel void scalar_mul(__global T* b, const __global T* a, T scalar, int rows, int cols, int view_a) {
  const int i = get_global_id(0);
  const int j = get_global_id(1);
  if (i >= rows || j >= cols) {
    return;
  }
  b[i + rows * j] = IN_VIEW(i, j, view_a) ? scalar * a[i + rows * j] : 0;
}

// Multiplies the diagonal of a rows x cols matrix in place.
__kernel void scalar_mul_diagonal(__global T* a, T scalar, int rows, int cols) {
  const int i = get_global_id(0);
  if (i >= min(rows, cols)) {
    return;
  }
  a[i + rows * i] *= scalar;
}

// b (cols x rows) = transpose of a (rows x cols), through a local tile so
// that both the reads and the writes are coalesced.
#define TRANSPOSE_TILE 16
__kernel void transpose(__global T* b, const __global T* a, int rows, int cols, int view_a) {
  __local T tile[TRANSPOSE_TILE][TRANSPOSE_TILE + 1];
  const int li = get_local_id(0);
  const int lj = get_local_id(1);
  const int i = get_group_id(0) * TRANSPOSE_TILE + li;
  const int j = get_group_id(1) * TRANSPOSE_TILE + lj;
  if (i < rows && j < cols) {
    tile[lj][li] = IN_VIEW(i, j, view_a) ? a[i + rows * j] : 0;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const int bi = get_group_id(1) * TRANSPOSE_TILE + li;
  const int bj = get_group_id(0) * TRANSPOSE_TILE + lj;
  if (bi < cols && bj < rows) {
    b[bi + cols * bj] = tile[li][lj];
  }
}

// Mirrors one triangle of an n x n matrix onto the other, in place.
// `lower_to_upper` 1 copies the lower triangle up, 0 copies the upper down.
__kernel void triangular_transpose(__global T* a, int n, int lower_to_upper) {
  const int i = get_global_id(0);
  const int j = get_global_id(1);
  if (i >= n || j >= n) {
    return;
  }
  if (lower_to_upper && i < j) {
    a[i + n * j] = a[j + n * i];
  } else if (!lower_to_upper && i > j) {
    a[i + n * j] = a[j + n * i];
  }
}

// Zeroes part of a rows x cols matrix: `part` is a view code, 3 = all,
// 1 = the strictly lower triangle, 2 = the strictly upper triangle.
__kernel void zeros(__global T* a, int rows, int cols, int part) {
  const int i = get_global_id(0);
  const int j = get_global_id(1);
  if (i >= rows || j >= cols) {
    return;
  }
  if (part == 3 || (part == 1 && i > j) || (part == 2 && i < j)) {
    a[i + rows * j] = 0;
  }
}

// `batches` identity matrices of size n x n, one after another in `a`.
__kernel void batch_identity(__global T* a, int n, int batches) {
  const int batch = get_global_id(0);
  const int i = get_global_id(1);
  const int j = get_global_id(2);
  if (batch >= batches || i >= n || j >= n) {
    return;
  }
  a[batch * n * n + i + n * j] = i == j ? 1 : 0;
}

// Copies the rows x cols block of `src` at (src_i, src_j) to `dst` at
// (dst_i, dst_j); only the elements inside `view` (relative to the block)
// are copied, the others of `dst` are left alone.
__kernel void sub_block(__global T* dst, const __global T* src, int src_i, int src_j, int dst_i, int dst_j, int rows, int cols, int src_rows, int dst_rows, int view) {
  const int i = get_global_id(0);
  const int j = get_global_id(1);
  if (i >= rows || j >= cols || !IN_VIEW(i, j, view)) {
    return;
  }
  dst[(dst_i + i) + dst_rows * (dst_j + j)] = src[(src_i + i) + src_rows * (src_j + j)];
}

// Sums `batches` rows x cols matrices stored one after another in `batch`
// into `c` (c = alpha * sum + beta * c): the reduction step of split-k GEMM.
__kernel void add_batch(__global T* c, const __global T* batch, int size, int batches, T beta) {
  const int i = get_global_id(0);
  if (i >= size) {
    return;
  }
  T sum = 0;
  for (int b = 0; b < batches; b++) {
    sum += batch[i + b * size];
  }
  c[i] = beta == 0 ? sum : sum + beta * c[i];
}
