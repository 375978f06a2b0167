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
// of LEAF rows of L21.
//
// The diagonal block, padded with the identity to LEAF x LEAF, lives in
// local memory and is factored by blocks of FACTOR_BLOCK columns: each
// block's diagonal block, its rows below (a substitution per row), and
// their product subtracted from the rest. With WARP_SHUFFLE (NVIDIA,
// doubles) one warp factors each diagonal block in registers, one row per
// lane, exchanging values by shuffles: dependent steps without a barrier,
// where the work-group version needs three barriers per step. (The
// earlier leaf, 64 steps of one work-group with a barrier each, took 22
// of its 35 µs factoring on an H200.)
//
// Then L⁻¹ by halves, which gives the rows below the panel.
//
// A pivot that is not positive (or NaN) stops every work-group (all read
// the same pivot); the first records its global index (index_base + k)
// with atomic_min in first_failure. A panel after a failure does nothing.
#define LEAF 64
// Columns per block of the diagonal block's factorization (at most 32:
// one warp's lanes); 16 was 7 µs faster per leaf than 32 on an H200, 8
// 1 µs slower than 16.
#ifndef FACTOR_BLOCK
#define FACTOR_BLOCK 16
#endif
// L⁻¹ is formed by halves.
#define SPLIT (LEAF / 2)
#ifndef GROUPS
#define GROUPS 4
#endif
#define OWN (LEAF / GROUPS)
// Loads in flight per step of the L21 product: 16 was 1–2% faster per
// factorization than 8 on an H200 (n = 2048 to 16384), 32 the same, 64 3%
// slower; asking the rows into L1 at the leaf's start (prefetch.global.L1)
// added nothing more.
#ifndef L21_LOADS
#define L21_LOADS 16
#endif
#define THREADS (LEAF * GROUPS)

#ifdef WARP_SHUFFLE
// v as `lane` of this warp holds it (every lane of the warp takes part).
inline double lane_value(double v, int lane) {
  const uint2 halves = as_uint2(v);
  uint lo, hi;
  asm("shfl.sync.idx.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(lo) : "r"(halves.x), "r"(lane));
  asm("shfl.sync.idx.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(hi) : "r"(halves.y), "r"(lane));
  return as_double((uint2)(lo, hi));
}
#endif

__kernel void cholesky_leaf(__global const T* a, __global T* factor, __global int* first_failure, int n, int below, int offset, int ld, int index_base) {
  // A, then L, then L⁻¹ (row r, column c at [r][c]; zero above the diagonal).
  __local T l[LEAF][LEAF + 1];
  // 1 / l_kk, so that substitutions multiply instead of divide.
  __local T inverse_diagonal[LEAF];
  __local int failed;
  const int t = get_local_id(0);
  const int i = t % LEAF;
  const int group = t / LEAF;
  const bool first_group = get_group_id(0) == 0;
  if (*first_failure != INT_MAX) {
    return;
  }
  if (t == 0) {
    failed = 0;
  }
  for (int e = t; e < LEAF * LEAF; e += THREADS) {
    const int r = e % LEAF;
    const int c = e / LEAF;
    l[r][c] = (r < n && c <= r) ? a[offset + r + ld * c] : (r == c ? 1 : 0);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int b = 0; b < LEAF; b += FACTOR_BLOCK) {
    // The diagonal block at (b, b).
#ifdef WARP_SHUFFLE
    if (t < 32) {
      // Lane t < FACTOR_BLOCK holds row b + t; entries right of its diagonal
      // become garbage and are never stored. (Every lane of the warp takes
      // part in the shuffles; FACTOR_BLOCK is at most 32.)
      T own[FACTOR_BLOCK];
#pragma unroll
      for (int c = 0; c < FACTOR_BLOCK; c++) {
        own[c] = t < FACTOR_BLOCK ? l[b + t][b + c] : 0;
      }
      // The first failing pivot; the steps after it run on (no branch out
      // of the unrolled loop, which would move `own` out of registers) and
      // are discarded.
      int bad = FACTOR_BLOCK;
#pragma unroll
      for (int k = 0; k < FACTOR_BLOCK; k++) {
        const T pivot = lane_value(own[k], k);
        bad = !(pivot > 0) && bad == FACTOR_BLOCK ? k : bad;
        // A double square root or division is a long subroutine on GPUs:
        // one reciprocal square root per step.
        const T inv_root = rsqrt(pivot);
        const T l_tk = t >= k ? own[k] * inv_root : 0;
        own[k] = l_tk;
        if (t == k) {
          inverse_diagonal[b + k] = inv_root;
        }
#pragma unroll
        for (int c = k + 1; c < FACTOR_BLOCK; c++) {
          own[c] -= l_tk * lane_value(l_tk, c);
        }
      }
      if (t < FACTOR_BLOCK) {
#pragma unroll
        for (int c = 0; c < FACTOR_BLOCK; c++) {
          l[b + t][b + c] = c <= t ? own[c] : 0;
        }
      }
      if (t == 0 && bad < FACTOR_BLOCK) {
        failed = 1;
        if (first_group) {
          atomic_min(first_failure, index_base + b + bad);
        }
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (failed) {
      return;
    }
#else
    for (int k = b; k < b + FACTOR_BLOCK; k++) {
      const T pivot = l[k][k];
      if (!(pivot > 0)) {
        // Every work item read the same pivot: all return here.
        if (t == 0 && first_group) {
          atomic_min(first_failure, index_base + k);
        }
        return;
      }
      const T inv_root = rsqrt(pivot);
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int r = k + t; r < b + FACTOR_BLOCK; r += THREADS) {
        l[r][k] = r == k ? pivot * inv_root : l[r][k] * inv_root;
      }
      if (t == 0) {
        inverse_diagonal[k] = inv_root;
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      // The rest of the block's lower triangle (i >= j > k).
      const int rest = b + FACTOR_BLOCK - k - 1;
      for (int e = t; e < rest * rest; e += THREADS) {
        const int r = k + 1 + e % rest;
        const int c = k + 1 + e / rest;
        if (r >= c) {
          l[r][c] -= l[r][k] * l[c][k];
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
#endif
    const int next = b + FACTOR_BLOCK;
    if (next == LEAF) {
      break;
    }
    // This block's rows below its diagonal block, L21 = A21 · L11⁻ᵀ: work
    // item t substitutes row next + t (two partial sums shorten the
    // dependency chains).
    if (t < LEAF - next) {
      const int r = next + t;
      T x[FACTOR_BLOCK];
#pragma unroll
      for (int j = 0; j < FACTOR_BLOCK; j++) {
        T s[2] = {l[r][b + j], 0};
#pragma unroll
        for (int c = 0; c < j; c++) {
          s[c % 2] -= x[c] * l[b + j][b + c];
        }
        x[j] = (s[0] + s[1]) * inverse_diagonal[b + j];
      }
#pragma unroll
      for (int j = 0; j < FACTOR_BLOCK; j++) {
        l[r][b + j] = x[j];
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    // The rest of the block's lower triangle -= L21 · L21ᵀ.
    const int rest = LEAF - next;
    for (int e = t; e < rest * rest; e += THREADS) {
      const int r = next + e % rest;
      const int c = next + e / rest;
      if (r >= c) {
        T s = 0;
#pragma unroll 8
        for (int k = b; k < next; k++) {
          s += l[r][k] * l[c][k];
        }
        l[r][c] -= s;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
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
  // L⁻¹ by halves. Each half's diagonal block: work item t < LEAF
  // substitutes column t % SPLIT of block t / SPLIT of L X = I alone,
  // unrolled so that x stays in registers; four partial sums shorten the
  // dependency chains. Entries above the diagonal come out exactly zero.
  // (One column of all of L per work item held 64 values in registers:
  // 168 registers, 6 µs more per leaf on an H200.)
  const int base = (t / SPLIT) * SPLIT;
  T x[SPLIT];
  if (t < LEAF) {
    const int j = t % SPLIT;
#pragma unroll
    for (int r = 0; r < SPLIT; r++) {
      T s[4] = {r == j ? 1 : 0, 0, 0, 0};
#pragma unroll
      for (int k = 0; k < r; k++) {
        s[k % 4] -= l[base + r][base + k] * x[k];
      }
      x[r] = ((s[0] + s[1]) + (s[2] + s[3])) * inverse_diagonal[base + r];
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (t < LEAF) {
#pragma unroll
    for (int r = 0; r < SPLIT; r++) {
      l[base + r][base + t % SPLIT] = x[r];
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  // The block below, -L22⁻¹ · (L21 · L11⁻¹): the product in brackets goes
  // to the (zero) block above the diagonal, then back to zero.
  for (int e = t; e < SPLIT * SPLIT; e += THREADS) {
    const int r = e % SPLIT;
    const int c = e / SPLIT;
    T s = 0;
    for (int k = c; k < SPLIT; k++) {
      s += l[SPLIT + r][k] * l[k][c];
    }
    l[r][SPLIT + c] = s;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int e = t; e < SPLIT * SPLIT; e += THREADS) {
    const int r = e % SPLIT;
    const int c = e / SPLIT;
    T s = 0;
    for (int k = 0; k <= r; k++) {
      s -= l[SPLIT + r][SPLIT + k] * l[k][SPLIT + c];
    }
    l[SPLIT + r][c] = s;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int e = t; e < SPLIT * SPLIT; e += THREADS) {
    l[e % SPLIT][SPLIT + e / SPLIT] = 0;
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
      // L21_LOADS loads in flight before their multiply-adds (a loop of
      // one load and its uses would wait for each load in turn).
      for (int k0 = 0; k0 < n; k0 += L21_LOADS) {
        T a_k[L21_LOADS];
#pragma unroll
        for (int u = 0; u < L21_LOADS; u++) {
          a_k[u] = k0 + u < n ? a[offset + n + row + ld * (k0 + u)] : 0;
        }
#pragma unroll
        for (int u = 0; u < L21_LOADS; u++) {
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
