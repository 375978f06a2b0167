// Matrix-vector products (paper section 3.1.3): 1-D work-groups, so no
// thread of a 2-D GEMM grid sits idle on a vector's single column.

#define IN_VIEW(i, j, view) ((i) == (j) || ((i) > (j) && ((view) & 1)) || ((i) < (j) && ((view) & 2)))

// The stored columns of row i of a K-column matrix of view `view`: from
// the diagonal on without a lower part, up to it without an upper part.
int row_begin(int i, int K, int view) {
  return (view & 1) ? 0 : min(i, K);
}
int row_end(int i, int K, int view) {
  return (view & 2) ? K : min(i + 1, K);
}

// y (M x 1) = A (M x K) * x (K x 1): one work item per row; neighbouring
// work items read neighbouring elements of each column of A.
__kernel void matrix_vector_multiply(__global T* y, const __global T* a, const __global T* x, int M, int K, int view_a) {
  const int i = get_global_id(0);
  if (i >= M) {
    return;
  }
  const int k_begin = row_begin(i, K, view_a);
  const int k_end = row_end(i, K, view_a);
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

// y (M x NCOLS) = A (M x K) * X (K x NCOLS): one work item per row. X is
// the same for every work item: with X_IN_LOCAL (K * NCOLS small) the
// work-group copies it into local memory first, so its reads are local
// broadcasts rather than global loads beside each element of A.
#ifndef X_CAPACITY
#define X_CAPACITY 1
#endif
__kernel void matrix_skinny_multiply(__global T* y, const __global T* a, const __global T* x, int M, int K, int view_a) {
  const int i = get_global_id(0);
#ifdef X_IN_LOCAL
  __local T x_local[X_CAPACITY];
  for (int e = get_local_id(0); e < K * NCOLS; e += get_local_size(0)) {
    x_local[e] = x[e];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
#define X_AT(k, c) x_local[(k) + K * (c)]
#else
#define X_AT(k, c) x[(k) + K * (c)]
#endif
  if (i >= M) {
    return;
  }
  const int k_begin = row_begin(i, K, view_a);
  const int k_end = row_end(i, K, view_a);
  T acc[NCOLS];
#pragma unroll
  for (int c = 0; c < NCOLS; c++) {
    acc[c] = 0;
  }
  // Unrolled so that each work item has several loads of A in flight.
#pragma unroll 8
  for (int k = k_begin; k < k_end; k++) {
    const T a_ik = a[i + (long)M * k];
#pragma unroll
    for (int c = 0; c < NCOLS; c++) {
      acc[c] = fma(a_ik, X_AT(k, c), acc[c]);
    }
  }
#pragma unroll
  for (int c = 0; c < NCOLS; c++) {
    y[i + (long)M * c] = acc[c];
  }
}
#undef X_AT

// partial (groups x (N * NCOLS)) = A^T (N x K) * X (K x NCOLS), N at most
// LOCAL_SIZE: work-group g takes the tiles of TILE_ROWS rows g, g + G, ...
// (G = get_num_groups(0)), copies each tile of A and of X into local memory
// (coalesced: neighbouring work items read neighbouring rows), and work
// item (j, s) = (lid % N, lid / N) adds rows s, s + S, ... of the tile
// (S = LOCAL_SIZE / N) to its NCOLS sums for column j of A. A and X are each
// read once. The S sums of a column are added at the end; group g's N x
// NCOLS piece (column-major) lands at partial + g * N * NCOLS.
#ifndef TILE_ROWS
#define TILE_ROWS 32
#endif
#ifndef NA
#define NA 1
#endif
// A tile's column stride in local memory: one more than its rows, so that
// work items reading one row of neighbouring columns hit different banks.
#define TILE_STRIDE (TILE_ROWS + 1)
__kernel void transposed_skinny_multiply(__global T* partial, const __global T* a, const __global T* x, int K, int N, int view_a) {
  __local T a_tile[TILE_STRIDE * NA];
  __local T x_tile[TILE_ROWS * NCOLS];
  __local T scratch[LOCAL_SIZE];
  const int lid = get_local_id(0);
  // NA (= N) is known when the kernel is built: the loops below have
  // fixed trip counts the compiler unrolls.
  const int slices = LOCAL_SIZE / NA;
  const int j = lid % NA;
  const int s = lid / NA;
  const bool active = s < slices;
  T acc[NCOLS];
#pragma unroll
  for (int c = 0; c < NCOLS; c++) {
    acc[c] = 0;
  }
  const int tiles = (K + TILE_ROWS - 1) / TILE_ROWS;
  for (int tile = get_group_id(0); tile < tiles; tile += get_num_groups(0)) {
    const int r0 = tile * TILE_ROWS;
    const int rows = min(TILE_ROWS, K - r0);
#pragma unroll
    for (int e = lid; e < TILE_ROWS * NA; e += LOCAL_SIZE) {
      const int r = e % TILE_ROWS;
      const int col = e / TILE_ROWS;
      const int k = r0 + r;
      a_tile[r + TILE_STRIDE * col] = (r < rows && IN_VIEW(k, col, view_a)) ? a[k + (long)K * col] : 0;
    }
    for (int e = lid; e < TILE_ROWS * NCOLS; e += LOCAL_SIZE) {
      const int r = e % TILE_ROWS;
      x_tile[e] = r < rows ? x[r0 + r + (long)K * (e / TILE_ROWS)] : 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (active) {
      for (int r = s; r < rows; r += slices) {
        const T a_rj = a_tile[r + TILE_STRIDE * j];
#pragma unroll
        for (int c = 0; c < NCOLS; c++) {
          acc[c] = fma(a_rj, x_tile[r + TILE_ROWS * c], acc[c]);
        }
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int c = 0; c < NCOLS; c++) {
    scratch[lid] = active ? acc[c] : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < NA) {
      T sum = 0;
      for (int t = 0; t < slices; t++) {
        sum += scratch[lid + NA * t];
      }
      partial[(long)get_group_id(0) * NA * NCOLS + lid + NA * c] = sum;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}

// The same product without tiles in local memory, for A of few columns:
// work item (lane, team) = (lid % LANES, lid / LANES) reads row
// r + lane of columns team, team + TEAMS, ... straight from A (LANES
// neighbouring rows of a column: whole 32-byte sectors) and keeps one sum
// per such column and column of X in registers (COLS_PER_TEAM * NCOLS of
// them), so the loop over rows has no barrier. Rows of X are shared by
// the teams through the cache. The LANES sums of each output are added
// through local memory once, at the end; group g's N x NCOLS piece
// (column-major) lands at partial + g * N * NCOLS, as above.
#ifndef LANES
#define LANES 8
#endif
#define TEAMS (LOCAL_SIZE / LANES)
#define COLS_PER_TEAM ((NA + TEAMS - 1) / TEAMS)
__kernel void transposed_skinny_lanes(__global T* partial, const __global T* a, const __global T* x, int K, int view_a) {
  __local T scratch[LOCAL_SIZE * NCOLS];
  const int lid = get_local_id(0);
  const int lane = lid % LANES;
  const int team = lid / LANES;
  T acc[COLS_PER_TEAM][NCOLS];
#pragma unroll
  for (int q = 0; q < COLS_PER_TEAM; q++) {
#pragma unroll
    for (int c = 0; c < NCOLS; c++) {
      acc[q][c] = 0;
    }
  }
  for (int r = get_group_id(0) * LANES + lane; r < K; r += get_num_groups(0) * LANES) {
    // Every load of the row first, predicated rather than branched
    // around: all are in flight before the first sum needs one.
    T x_r[NCOLS];
    T a_r[COLS_PER_TEAM];
#pragma unroll
    for (int c = 0; c < NCOLS; c++) {
      x_r[c] = x[r + (long)K * c];
    }
#pragma unroll
    for (int q = 0; q < COLS_PER_TEAM; q++) {
      const int col = team + TEAMS * q;
      a_r[q] = (col < NA && IN_VIEW(r, col, view_a)) ? a[r + (long)K * col] : 0;
    }
#pragma unroll
    for (int q = 0; q < COLS_PER_TEAM; q++) {
#pragma unroll
      for (int c = 0; c < NCOLS; c++) {
        acc[q][c] = fma(a_r[q], x_r[c], acc[q][c]);
      }
    }
  }
  // Each output's LANES sums, one column of A at a time.
#pragma unroll
  for (int q = 0; q < COLS_PER_TEAM; q++) {
#pragma unroll
    for (int c = 0; c < NCOLS; c++) {
      scratch[lid + LOCAL_SIZE * c] = acc[q][c];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int o = lid; o < TEAMS * NCOLS; o += LOCAL_SIZE) {
      const int t = o % TEAMS;
      const int c = o / TEAMS;
      const int col = t + TEAMS * q;
      if (col < NA) {
        T sum = 0;
        for (int l = 0; l < LANES; l++) {
          sum += scratch[t * LANES + l + LOCAL_SIZE * c];
        }
        partial[(long)get_group_id(0) * NA * NCOLS + col + NA * c] = sum;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}
