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
// rows under it, L21 = A21 · L⁻ᵀ. Every work-group of LEAF * GROUPS work
// items factors the diagonal block itself (the same few microseconds on
// every compute unit, instead of a second launch) and then solves its
// share of the rows of L21.
//
// The diagonal block, padded with the identity to LEAF x LEAF, lives in
// local memory and is factored by blocks of FACTOR_BLOCK columns: each
// block's diagonal block, its rows below (a substitution per row), and
// their product subtracted from the rest. With WARP_SHUFFLE (NVIDIA,
// doubles) warps factor each block's columns in registers, one row per
// lane, taking each pivot by a shuffle and each step's column through
// local memory behind a warp barrier: dependent steps without a
// work-group barrier, where the work-group version needs three per step. (The
// earlier leaf, 64 steps of one work-group with a barrier each, took 22
// of its 35 µs factoring on an H200.)
//
// Then one forward substitution per row below the panel, L x = a.
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
// With WARP_SHUFFLE, the lanes of a warp after the block's own rows hold
// rows below it, as many as the work-group's warps can (CARRIED); any
// further rows are substituted as without WARP_SHUFFLE (only with GROUPS 1).
#define LANES_BELOW (32 - FACTOR_BLOCK)
#if defined(WARP_SHUFFLE) && FACTOR_BLOCK > 16
#error "FACTOR_BLOCK must be at most 16 with WARP_SHUFFLE"
#endif
// Work items per row of L21 with WARP_SHUFFLE (a power of two up to 32):
// 4 and 8 measured the same on an H200, 2 5 µs slower per leaf.
#define ROW_LANES 4
#ifndef GROUPS
#define GROUPS 4
#endif
// The side of the tiles of the diagonal block's trailing updates (a
// divisor of FACTOR_BLOCK).
#ifndef TRAILING_TILE
#define TRAILING_TILE 4
#endif
#if FACTOR_BLOCK % TRAILING_TILE != 0
#error "TRAILING_TILE must divide FACTOR_BLOCK"
#endif
#define OWN (LEAF / GROUPS)
#define THREADS (LEAF * GROUPS)
#ifdef WARP_SHUFFLE
#define CARRIED ((THREADS / 32) * LANES_BELOW)
#else
#define CARRIED 0
#endif

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

// The (row, column) of the tile-th tile of a lower triangle of tiles, in
// row-major order.
inline int2 lower_tile(int tile) {
  int row = (int)((sqrt(8.0f * tile + 1.0f) - 1.0f) / 2.0f);
  // Exact whatever the square root's rounding.
  row -= row * (row + 1) / 2 > tile;
  row += (row + 1) * (row + 2) / 2 <= tile;
  return (int2)(row, tile - row * (row + 1) / 2);
}

// The host launches THREADS work items per work-group; the compiler may
// budget registers for exactly that.
__attribute__((reqd_work_group_size(THREADS, 1, 1)))
__kernel void cholesky_leaf(__global const T* a, __global T* factor, __global int* first_failure, int n, int below, int offset, int ld, int index_base) {
  // A, then L (row r, column c at [r][c]; zero above the diagonal).
  __local T l[LEAF][LEAF + 1];
  // 1 / l_kk, so that substitutions multiply instead of divide.
  __local T inverse_diagonal[LEAF];
#ifdef WARP_SHUFFLE
  // Each warp's column of the current step of a block's factorization, by
  // the step's parity (a lane may still read the last step's while
  // another stores this one's).
  __local T step_column[THREADS / 32][2][32];
#endif
  __local int failed;
  const int t = get_local_id(0);
  const int i = t % LEAF;
  const int group = t / LEAF;
  const bool first_group = get_group_id(0) == 0;
  // An earlier panel failed: read by one work item beside the diagonal
  // block's loads, acted on by all after the barrier that ends them (the
  // whole work-group alike; 1-2% faster at n = 2048 and 4096 on an H200
  // than every work item reading it before anything else).
  __local int failed_before;
  if (t == 0) {
    failed_before = *first_failure != INT_MAX;
    failed = 0;
  }
  // A fixed trip count, unrolled: every load of the block is in flight
  // before the first store to local memory (the loop as `e += THREADS` was
  // not unrolled on an H200, and the factorization 1.5-2.5% slower at
  // n = 2048 to 8192).
#pragma unroll
  for (int m = 0; m < LEAF * LEAF / THREADS; m++) {
    const int e = t + m * THREADS;
    const int r = e % LEAF;
    const int c = e / LEAF;
    l[r][c] = (r < n && c <= r) ? a[offset + r + ld * c] : (r == c ? 1 : 0);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (failed_before) {
    return;
  }
  for (int b = 0; b < LEAF; b += FACTOR_BLOCK) {
    // The diagonal block at (b, b).
#ifdef WARP_SHUFFLE
    // The block's columns, from its diagonal down: each warp's first
    // FACTOR_BLOCK lanes hold the diagonal block's rows (every warp factors
    // it again), its other lanes LANES_BELOW of the rows below, so that the
    // rows below need no substitution of their own (26.0 instead of 26.7
    // µs per leaf at n = 4096 on an H200). Entries right of a row's
    // diagonal become garbage and are never stored; every lane of a warp
    // takes part in the shuffles. (Whole rows, so that step k could take
    // column k from row k's lane before the reciprocal square root, were
    // 1.5 µs slower.)
    const int below_block = LEAF - b - FACTOR_BLOCK;
    const int warps = clamp((below_block + LANES_BELOW - 1) / LANES_BELOW, 1, THREADS / 32);
    const int warp = t / 32;
    const int lane = t % 32;
    const int r = lane < FACTOR_BLOCK ? b + lane : b + FACTOR_BLOCK + LANES_BELOW * warp + lane - FACTOR_BLOCK;
    const bool row_taken = warp < warps && (lane < FACTOR_BLOCK || r < LEAF);
    T own[FACTOR_BLOCK];
#pragma unroll
    for (int c = 0; c < FACTOR_BLOCK; c++) {
      own[c] = row_taken ? l[r][b + c] : 0;
    }
    // Every warp has read the diagonal block before the first one stores it.
    barrier(CLK_LOCAL_MEM_FENCE);
    if (warp < warps) {
      // The first failing pivot; the steps after it run on (no branch out
      // of the unrolled loop, which would move `own` out of registers) and
      // are discarded.
      int bad = FACTOR_BLOCK;
      // Each step's pivot comes from its lane before the step before has
      // finished its shuffles (one shuffle fewer on the chain of steps).
      T pivot = lane_value(own[0], 0);
#pragma unroll
      for (int k = 0; k < FACTOR_BLOCK; k++) {
        bad = !(pivot > 0) && bad == FACTOR_BLOCK ? k : bad;
        // A double square root or division is a long subroutine on GPUs:
        // one reciprocal square root per step.
        const T inv_root = rsqrt(pivot);
        const T l_rk = lane >= k ? own[k] * inv_root : 0;
        own[k] = l_rk;
        if (t == k) {
          inverse_diagonal[b + k] = inv_root;
        }
        T next_pivot = 0;
        if (k + 1 < FACTOR_BLOCK) {
          next_pivot = lane_value(own[k + 1] - l_rk * l_rk, k + 1);
        }
        // Column k to every lane: one store, a warp barrier (which also
        // orders the warp's local memory) and one broadcast load per
        // entry, where a shuffle per entry took two 32-bit shuffles (on an
        // H200 the factorization 4-5% faster at n = 1000-4096, 3% at 8192,
        // 1% at 16384).
        step_column[warp][k & 1][lane] = l_rk;
        asm volatile("bar.warp.sync 0xffffffff;" ::: "memory");
#pragma unroll
        for (int c = k + 1; c < FACTOR_BLOCK; c++) {
          own[c] -= l_rk * step_column[warp][k & 1][c];
        }
        pivot = next_pivot;
      }
      if (lane >= FACTOR_BLOCK ? r < LEAF : warp == 0) {
#pragma unroll
        for (int c = 0; c < FACTOR_BLOCK; c++) {
          l[r][b + c] = c <= lane ? own[c] : 0;
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
    // This block's rows below its diagonal block that no warp carried,
    // L21 = A21 · L11⁻ᵀ: work item t substitutes row next + CARRIED + t
    // (two partial sums shorten the dependency chains).
    if (LEAF - next > CARRIED) {
      if (t < LEAF - next - CARRIED) {
        const int r = next + CARRIED + t;
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
    }
    // The rest of the block's lower triangle -= L21 · L21ᵀ.
    // A work item takes a TRAILING_TILE x TRAILING_TILE tile, so that each
    // local read feeds several multiply-adds. (One entry per work item, two
    // reads per multiply-add, took 4-6% longer at n = 4096 and 2-3% at
    // 8192 on an H200.)
    const int side = (LEAF - next) / TRAILING_TILE;
    for (int tile = t; tile < side * (side + 1) / 2; tile += THREADS) {
      const int2 at = lower_tile(tile);
      const int r0 = next + TRAILING_TILE * at.x;
      const int c0 = next + TRAILING_TILE * at.y;
      T s[TRAILING_TILE][TRAILING_TILE] = {{0}};
#pragma unroll
      for (int kk = 0; kk < FACTOR_BLOCK; kk++) {
        T rows[TRAILING_TILE];
        T columns[TRAILING_TILE];
#pragma unroll
        for (int d = 0; d < TRAILING_TILE; d++) {
          rows[d] = l[r0 + d][b + kk];
          columns[d] = l[c0 + d][b + kk];
        }
#pragma unroll
        for (int i = 0; i < TRAILING_TILE; i++) {
#pragma unroll
          for (int j = 0; j < TRAILING_TILE; j++) {
            s[i][j] += rows[i] * columns[j];
          }
        }
      }
#pragma unroll
      for (int i = 0; i < TRAILING_TILE; i++) {
#pragma unroll
        for (int j = 0; j < TRAILING_TILE; j++) {
          if (r0 + i >= c0 + j) {
            l[r0 + i][c0 + j] -= s[i][j];
          }
        }
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
  // L21 = A21 · L⁻ᵀ: row r of L21 is the x with L x = (row r of A21), a
  // forward substitution with the row in registers. It runs
  // right-looking: as soon as x_k is known it is subtracted from every
  // later entry, so each step waits only on the step before it. The rows
  // are shared out evenly, so that each compute unit solves as few of them
  // as it can. (This replaced L⁻¹ by halves and the product A21 · (L⁻¹)ᵀ:
  // 33.6 -> 26.7 µs per leaf at n = 4096 on an H200.)
  //
  // L's entries are read as each step needs them (volatile reads, and a
  // fence per step without WARP_SHUFFLE): left free, the compiler loads
  // all 2016 of them ahead and spills (16 KB per work item, a leaf 3-6x
  // slower on an H200).
  const int rows_per_group = (below + get_num_groups(0) - 1) / get_num_groups(0);
  const int first_row = get_group_id(0) * rows_per_group;
  const int end_row = min(below, first_row + rows_per_group);
#ifdef WARP_SHUFFLE
  // ROW_LANES work items per row, lane q holding entries q, q + ROW_LANES,
  // ...; x_k comes from the lane that holds it by a shuffle. The row loop
  // runs alike in every work item, so whole warps shuffle.
#define ROW_ENTRIES (LEAF / ROW_LANES)
  const int q = t % ROW_LANES;
  const int lane = t % 32;
  const volatile __local T* l_entries = &l[0][0];
  for (int row0 = first_row; row0 < end_row; row0 += THREADS / ROW_LANES) {
    const int row = row0 + t / ROW_LANES;
    const bool row_taken = row < end_row;
    __global const T* a_row = a + offset + n + row;
    T x[ROW_ENTRIES];
#pragma unroll
    for (int c = 0; c < ROW_ENTRIES; c++) {
      x[c] = row_taken && q + ROW_LANES * c < n ? a_row[ld * (q + ROW_LANES * c)] : 0;
    }
#pragma unroll
    for (int k = 0; k < LEAF; k++) {
      const int c = k / ROW_LANES;
      // Right only in the lane that holds entry k.
      const T candidate = x[c] * inverse_diagonal[k];
      const T x_k = lane_value(candidate, (lane & ~(ROW_LANES - 1)) | (k % ROW_LANES));
      if (q == k % ROW_LANES) {
        x[c] = x_k;
      }
#pragma unroll
      for (int later = c; later < ROW_ENTRIES; later++) {
        if (later > c || q > k % ROW_LANES) {
          x[later] -= l_entries[(q + ROW_LANES * later) * (LEAF + 1) + k] * x_k;
        }
      }
    }
    __global T* l21_row = factor + offset + n + row;
#pragma unroll
    for (int c = 0; c < ROW_ENTRIES; c++) {
      if (row_taken && q + ROW_LANES * c < n) {
        l21_row[ld * (q + ROW_LANES * c)] = x[c];
      }
    }
  }
#else
  // One work item per row.
  for (int row = first_row + t; row < end_row; row += THREADS) {
    __global const T* a_row = a + offset + n + row;
    T x[LEAF];
#pragma unroll
    for (int j = 0; j < LEAF; j++) {
      x[j] = j < n ? a_row[ld * j] : 0;
    }
#pragma unroll
    for (int k = 0; k < LEAF; k++) {
      x[k] *= inverse_diagonal[k];
#pragma unroll
      for (int j = k + 1; j < LEAF; j++) {
        x[j] -= l[j][k] * x[k];
      }
      mem_fence(CLK_LOCAL_MEM_FENCE);
    }
    __global T* l21_row = factor + offset + n + row;
#pragma unroll
    for (int j = 0; j < LEAF; j++) {
      if (j < n) {
        l21_row[ld * j] = x[j];
      }
    }
  }
#endif
}
