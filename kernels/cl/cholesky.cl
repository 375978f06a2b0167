// Cholesky decomposition of a small block (paper section 3.3.1): the
// classic column-by-column algorithm in ONE work-group, in place on the
// n x n block of `a` at `offset` (leading dimension `lda`); only the lower
// triangle is read and written. Work items share each step's column and
// trailing update and synchronise after every step.
//
// A pivot that is not positive (or NaN) stops every work item and records
// its global index (`index_base` + k) with atomic_min in `first_failure`.

__kernel void cholesky_block(__global T* a, __global int* first_failure, int n, int offset, int lda, int index_base) {
  __local int failed;
  const int lid = get_local_id(0);
  const int threads = get_local_size(0);
  __global T* block = a + offset;
  if (lid == 0) {
    failed = *first_failure < index_base + n;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  // An earlier block already failed: everything after it is meaningless.
  if (failed) {
    return;
  }
  for (int k = 0; k < n; k++) {
    if (lid == 0) {
      const T pivot = block[k + lda * k];
      if (!(pivot > 0)) {
        failed = 1;
        atomic_min(first_failure, index_base + k);
      } else {
        block[k + lda * k] = sqrt(pivot);
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    if (failed) {
      return;
    }
    const T diagonal = block[k + lda * k];
    for (int i = k + 1 + lid; i < n; i += threads) {
      block[i + lda * k] /= diagonal;
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
    // Trailing update of the lower triangle (i >= j > k), all elements in
    // parallel: element e of the (n - k - 1)² square, column by column.
    const int rest = n - k - 1;
    for (int e = lid; e < rest * rest; e += threads) {
      const int i = k + 1 + e % rest;
      const int j = k + 1 + e / rest;
      if (i >= j) {
        block[i + lda * j] -= block[i + lda * k] * block[j + lda * k];
      }
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
}

// The leaf of the blocked algorithm, for a panel of at most LEAF columns:
// the Cholesky factor L of its diagonal block (read from `a`'s lower
// triangle; written to `factor` with the zeros above it) and the `below`
// rows under it, L21 = A21 · (L⁻¹)ᵀ. Every work-group of LEAF * GROUPS work
// items factors the diagonal block itself (the same few microseconds on
// every compute unit, instead of a second launch) and then computes blocks
// of LEAF rows of L21. Work item t owns row t % LEAF of the columns
// t / LEAF + c * GROUPS (c < OWN) in registers.
//
// Factor, step k: the owners of column k publish it to local memory, then
// every work item updates its elements of the trailing lower triangle,
// a_ij -= a_ik * a_jk / a_kk, and the owners keep l_ik = a_ik / sqrt(a_kk).
// One barrier per step: the published column alternates between two
// buffers, so step k + 1 may publish while step k's is still being read.
// Inverse: work item j forward-substitutes column j of L X = I by itself,
// then L⁻¹ replaces L in local memory for the rows below.
//
// A pivot that is not positive (or NaN) stops every work-group (all read
// the same pivot); the first records its global index (index_base + k)
// with atomic_min in first_failure. A panel after a failure does nothing.
#define LEAF 64
#ifndef GROUPS
#define GROUPS 4
#endif
#define OWN (LEAF / GROUPS)

__kernel void cholesky_leaf(__global const T* a, __global T* factor, __global int* first_failure, int n, int below, int offset, int ld, int index_base) {
  __local T published[2][LEAF];
  // L, then L⁻¹ (row r, column c at [r][c]; zero above the diagonal).
  __local T l[LEAF][LEAF + 1];
  // 1 / l_kk, so that the inverse's steps multiply instead of divide.
  __local T inverse_diagonal[LEAF];
  const int t = get_local_id(0);
  const int i = t % LEAF;
  const int group = t / LEAF;
  const bool first_group = get_group_id(0) == 0;
  if (*first_failure != INT_MAX) {
    return;
  }
  T own[OWN];
#pragma unroll
  for (int c = 0; c < OWN; c++) {
    const int j = group + c * GROUPS;
    own[c] = (i < n && j <= i) ? a[offset + i + ld * j] : 0;
  }
  for (int k = 0; k < n; k++) {
    const int buffer = k & 1;
    const bool owner = group == k % GROUPS;
    if (owner) {
      // Selected by an unrolled loop: indexing `own` with k would move it
      // out of registers. (A tree of selects, or publishing from inside
      // the update loop, measured slower on an H200.)
      T column_k = 0;
#pragma unroll
      for (int c = 0; c < OWN; c++) {
        column_k = c == k / GROUPS ? own[c] : column_k;
      }
      published[buffer][i] = column_k;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const T pivot = published[buffer][k];
    if (!(pivot > 0)) {
      if (t == 0 && first_group) {
        atomic_min(first_failure, index_base + k);
      }
      return;
    }
    // One reciprocal square root per step on the critical path (a double
    // division or square root is a long subroutine on GPUs; a float
    // estimate refined by Newton steps measured slower on an H200).
    const T inv_root = rsqrt(pivot);
    const T a_ik = published[buffer][i];
    const T scaled = a_ik * inv_root * inv_root;
    // Every owned element is updated, without tests, so that the loads and
    // multiply-adds pipeline: the elements this must not change are either
    // finished (columns up to k, already published and kept in `l`) or
    // above the diagonal (never read as part of L).
#pragma unroll
    for (int c = 0; c < OWN; c++) {
      own[c] -= scaled * published[buffer][group + c * GROUPS];
    }
    if (owner) {
      l[i][k] = i >= k ? a_ik * inv_root : 0;
      if (i == k) {
        inverse_diagonal[k] = inv_root;
      }
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (first_group) {
#pragma unroll
    for (int c = 0; c < OWN; c++) {
      const int j = group + c * GROUPS;
      if (i < n && j < n) {
        factor[offset + i + ld * j] = j <= i ? l[i][j] : 0;
      }
    }
  }
  // The factor's zeros above this panel (rows before index_base), shared
  // out like the rows below: writes that overlap the factorization's wait.
  for (int row = get_group_id(0) * LEAF + i; row < index_base; row += get_num_groups(0) * LEAF) {
#pragma unroll
    for (int c = 0; c < OWN; c++) {
      const int j = group + c * GROUPS;
      if (j < n) {
        factor[offset - index_base + row + ld * j] = 0;
      }
    }
  }
  if (below == 0) {
    return;
  }
  // Work item j < LEAF forward-substitutes column j of L⁻¹ alone (no
  // barriers), the whole recurrence unrolled so that x stays in registers;
  // four partial sums shorten the dependency chains. Entries above the
  // diagonal come out exactly zero.
  T x[LEAF];
  if (t < LEAF) {
    const int j = t;
#pragma unroll
    for (int r = 0; r < LEAF; r++) {
      T s[4] = {r == j ? 1 : 0, 0, 0, 0};
#pragma unroll
      for (int k = 0; k < r; k++) {
        s[k % 4] -= l[r][k] * x[k];
      }
      x[r] = ((s[0] + s[1]) + (s[2] + s[3])) * (r < n ? inverse_diagonal[r] : 1);
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (t < LEAF) {
#pragma unroll
    for (int r = 0; r < LEAF; r++) {
      l[r][t] = x[r];
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  // L21 = A21 · (L⁻¹)ᵀ, LEAF rows per work-group at a time: row i's
  // element j is the sum over k <= j of a21_ik * (L⁻¹)_jk.
  for (int row0 = get_group_id(0) * LEAF; row0 < below; row0 += get_num_groups(0) * LEAF) {
    const int row = row0 + i;
    if (row < below) {
      T sum[OWN];
#pragma unroll
      for (int c = 0; c < OWN; c++) {
        sum[c] = 0;
      }
      // Eight loads in flight before their multiply-adds (a loop of one
      // load and its uses would wait for each load in turn).
      for (int k0 = 0; k0 < n; k0 += 8) {
        T a_k[8];
#pragma unroll
        for (int u = 0; u < 8; u++) {
          a_k[u] = k0 + u < n ? a[offset + n + row + ld * (k0 + u)] : 0;
        }
#pragma unroll
        for (int u = 0; u < 8; u++) {
          if (k0 + u < n) {
#pragma unroll
            for (int c = 0; c < OWN; c++) {
              sum[c] += a_k[u] * l[group + c * GROUPS][k0 + u];
            }
          }
        }
      }
#pragma unroll
      for (int c = 0; c < OWN; c++) {
        const int j = group + c * GROUPS;
        if (j < n) {
          factor[offset + n + row + ld * j] = sum[c];
        }
      }
    }
  }
}
