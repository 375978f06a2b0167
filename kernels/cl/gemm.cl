// General matrix multiply (paper section 3.1):
//   C = alpha * op(A) * op(B) + beta * C
// op(A) is M x K, op(B) is K x N; TRANS_A / TRANS_B (compile options) read the
// stored matrix transposed. Operands may be blocks of larger matrices
// (offset + leading dimension), so blocked algorithms work in place.
//
// Each work-group computes a THREAD_BLOCK_SIZE x THREAD_BLOCK_SIZE tile of C
// with (TS / WPT) x (TS / WPT) threads; each thread accumulates a
// WPT x WPT register block. K is walked in TILE_K-deep slices through local
// memory. Views (bit 0 = lower part, bit 1 = upper part) bound the range of k
// that can be non-zero for the tile, so tiles of triangular operands known to
// be zero are skipped, and elements outside a view read as zero.
//
// Split-k: the third global dimension splits the k range into
// get_global_size(2) parts; part s writes its own copy of C at
// s * ldc * N (the host sums them with add_batch).
//
// LOWER_ONLY computes only tiles touching the lower triangle (A * A^T).
//
// TENSOR_CORES (NVIDIA, compute capability 8.0 and 9.0+, built only there)
// keeps the staging above and computes with FP64 tensor cores instead: the
// RTS x RTS work items form 8 warps in a 4 x 2 grid, each warp owning a
// (TS / 4) x (TS / 2) block of the tile as 16 x 8 accumulator fragments
// (with -D GROUP_THREADS=512, RTS x 2 RTS work items form 16 warps in a
// 4 x 4 grid of (TS / 4) x (TS / 4) blocks),
// advanced by mma.m16n8k16 when TILE_K is a multiple of 16 (compute
// capability 9.0+), else by mma.m16n8k4 (two m8n8k4 on 8.x); the fragment
// layouts are at K_STEP below. That needs RTS = 16, TS a multiple of 64
// and TILE_K of 4; the host checks. Its entry point is `gemm_dmma`,
// so that profiles say which path ran.
//
// EPILOGUE (defined by a generated prelude, see `src/gemm/epilogue.rs`): a fused
// expression's element-wise tail takes each element of the product where the
// kernel would store it, `epilogue(i, j, product, ...)`, and C is not
// written. The prelude also defines EPILOGUE_PARAMS and EPILOGUE_ARGS, the
// expression's own kernel parameters, passed through to `epilogue`. The host
// never combines it with split-k or LOWER_ONLY.
//
// SWIZZLE (the epilogue's source defines it as 8): work-groups take their
// tiles in bands of SWIZZLE tile rows, column by column within a band,
// instead of down whole columns of tiles.
//
// With an even WORK_PER_THREAD a work item owns pairs of adjacent rows and
// columns, so each step reads its operands from local memory as vectors of
// two (half the local-memory instructions). Work-groups whose tile lies
// inside both operands (views Entire) fetch full k slices without the
// per-element bounds and view tests.

#ifndef THREAD_BLOCK_SIZE
#define THREAD_BLOCK_SIZE 32
#endif
#ifndef WORK_PER_THREAD
#define WORK_PER_THREAD 4
#endif
#ifndef TILE_K
#define TILE_K 16
#endif

#define TS THREAD_BLOCK_SIZE
#define WPT WORK_PER_THREAD
#define RTS (THREAD_BLOCK_SIZE / WORK_PER_THREAD)
// Work items per work-group: RTS x RTS, or with TENSOR_CORES twice as many
// (-D GROUP_THREADS=512: 16 warps, each with half the accumulators, for
// the lower-only products of factorizations; see src/gemm/tensor_cores.rs).
#ifndef GROUP_THREADS
#define GROUP_THREADS (RTS * RTS)
#endif
#if !defined(TENSOR_CORES) && GROUP_THREADS != RTS * RTS
#error "GROUP_THREADS other than RTS * RTS needs TENSOR_CORES (the tiled path's register blocks are RTS x RTS)"
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define T2 CAT(T, 2)

// The r-th row (or column) of a work item's register block, t its local id.
#if WORK_PER_THREAD % 2 == 0
#define PAIRED
#define LANE(t, r) (2 * (t) + ((r) & 1) + ((r) >> 1) * 2 * RTS)
#ifdef TENSOR_CORES
// A row stride of 4 (mod 16) doubles: a warp's fragment reads (4 rows of 8
// consecutive elements) and its staging writes down k both take the
// minimum two passes through the 32 banks.
#define PAD 4
#else
// Padding keeps each local row 16-byte aligned for the vector reads.
#define PAD 2
#endif
#else
#define LANE(t, r) ((t) + (r) * RTS)
#define PAD 1
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

// Which tile element the l-th staged load is: consecutive work items read
// consecutive addresses of the stored (possibly transposed) operand.
#define LOADS ((TS * TILE_K + GROUP_THREADS - 1) / GROUP_THREADS)
// Every work item's last staged load is inside the tile.
#define EXACT_LOADS (LOADS * GROUP_THREADS == TS * TILE_K)
#define STAGED(l) (EXACT_LOADS || (l) < TS * TILE_K)
#ifdef TRANS_A
#define A_KK(l) ((l) % TILE_K)
#define A_II(l) ((l) / TILE_K)
#else
#define A_II(l) ((l) % TS)
#define A_KK(l) ((l) / TS)
#endif
#ifdef TRANS_B
#define B_JJ(l) ((l) % TS)
#define B_KK(l) ((l) / TS)
#else
#define B_KK(l) ((l) % TILE_K)
#define B_JJ(l) ((l) / TILE_K)
#endif

// Fetches the tiles starting at k0 into a_next / b_next (zero outside the
// matrices, the k range and the views).
#define FETCH_TILES(k0) \
  for (int n = 0; n < LOADS; n++) { \
    const int l = thread + n * GROUP_THREADS; \
    const int i = row0 + A_II(l); \
    const int ka = (k0) + A_KK(l); \
    a_next[n] = (STAGED(l) && i < M && ka < k_end && IN_VIEW(i, ka, view_a)) ? A_AT(i, ka) : 0; \
    const int j = col0 + B_JJ(l); \
    const int kb = (k0) + B_KK(l); \
    b_next[n] = (STAGED(l) && j < N && kb < k_end && IN_VIEW(kb, j, view_b)) ? B_AT(kb, j) : 0; \
  }

// The same for a k slice that lies inside both operands entirely.
#define FETCH_INTERIOR_TILES(k0) \
  for (int n = 0; n < LOADS; n++) { \
    const int l = thread + n * GROUP_THREADS; \
    if (STAGED(l)) { \
      a_next[n] = A_AT(row0 + A_II(l), (k0) + A_KK(l)); \
      b_next[n] = B_AT((k0) + B_KK(l), col0 + B_JJ(l)); \
    } \
  }

#define FETCH(k0) \
  if (interior && (k0) + TILE_K <= k_end) { \
    FETCH_INTERIOR_TILES(k0); \
  } else { \
    FETCH_TILES(k0); \
  }

#ifdef TENSOR_CORES
#ifndef WARPS_M
#define WARPS_M 4
#endif
#define WARPS_N (GROUP_THREADS / 32 / WARPS_M)
// Rows and columns of C per warp, and its 16 x 8 fragments each way.
#define WARP_ROWS (TS / WARPS_M)
#define WARP_COLS (TS / WARPS_N)
#define FRAGS_M (WARP_ROWS / 16)
#define FRAGS_N (WARP_COLS / 8)

// K_STEP: the k depth of one tensor-core instruction. Compute capability
// 9.0 has the f64 m16n8k16 shape, used whenever a staged k slice holds whole
// steps of 16 (one instruction instead of four m16n8k4); 8.x has only
// m8n8k4 (DMMA_M8N8K4), so a 16 x 8 x 4 step there is two of those.
// -D K_STEP=4 keeps m16n8k4 at any TILE_K (to compare the two).
#ifndef K_STEP
#if defined(DMMA_M8N8K4) || TILE_K % 16 != 0
#define K_STEP 4
#else
#define K_STEP 16
#endif
#endif
#if (K_STEP != 4 && K_STEP != 16) || TILE_K % K_STEP != 0 || (K_STEP == 16 && defined(DMMA_M8N8K4))
#error "K_STEP must be 4, or 16 with TILE_K a multiple of 16 and compute capability 9.0+"
#endif
// The fragment layouts of one step: cl/dmma.cl.
#define K_PARTS (K_STEP / 4)
#if K_STEP == 16
#define MMA_STEP MMA_16x8x16
#else
#define MMA_STEP MMA_16x8x4
#endif
#endif

#ifndef EPILOGUE
#define EPILOGUE_PARAMS
#define EPILOGUE_ARGS
#endif

// C(i, j) = alpha * sum + beta * C(i, j) inside C (and, with LOWER_ONLY,
// on or below the diagonal); beta == 0 never reads C. With an EPILOGUE,
// alpha * sum goes to it instead.
inline void store_c(__global T* out, int i, int j, int M, int N, int ldc, T sum, T alpha, T beta EPILOGUE_PARAMS) {
#ifdef LOWER_ONLY
  if (j > i) {
    return;
  }
#endif
  if (i < M && j < N) {
    const T value = alpha * sum;
#ifdef EPILOGUE
    epilogue(i, j, value EPILOGUE_ARGS);
#else
    out[i + ldc * j] = beta == 0 ? value : value + beta * out[i + ldc * j];
#endif
  }
}

// The work-group's tile of C; the local tiles are the entry point's (OpenCL
// declares __local memory in kernels only). One element of padding per row:
// the staging writes of a tile walk down k (stride TS), which would
// otherwise hit the same local-memory bank.
inline void gemm_tile(const __global T* a, const __global T* b, __global T* c, int M, int N, int K, int offset_a, int lda, int offset_b, int ldb, int offset_c, int ldc, int view_a, int view_b, T alpha, T beta, __local T (*a_tile)[TS + PAD], __local T (*b_tile)[TS + PAD] EPILOGUE_PARAMS) {
  const int tx = get_local_id(0);
  const int ty = get_local_id(1);
  const int thread = tx + RTS * ty;
#ifdef SWIZZLE
  // Work-groups run in bands of SWIZZLE tile rows, down a band's rows before
  // moving to its next column, so that the groups resident at once share
  // fewer panels of A and B (more L2 hits).
  const int groups_m = get_num_groups(0);
  const int linear = get_group_id(0) + groups_m * get_group_id(1);
  const int band_size = SWIZZLE * get_num_groups(1);
  const int band_row0 = (linear / band_size) * SWIZZLE;
  const int band_rows = min(groups_m - band_row0, SWIZZLE);
  const int in_band = linear % band_size;
  const int row0 = (band_row0 + in_band % band_rows) * TS;
  const int col0 = (in_band / band_rows) * TS;
#else
  const int row0 = get_group_id(0) * TS;
  const int col0 = get_group_id(1) * TS;
#endif
#ifdef LOWER_ONLY
  if (col0 > row0 + TS - 1) {
    return;
  }
#endif

  // The k range that can be non-zero anywhere in this tile.
  int k_begin = 0;
  int k_end = K;
  if (!(view_a & 1)) {
    k_begin = max(k_begin, row0);
  }
  if (!(view_a & 2)) {
    k_end = min(k_end, row0 + TS);
  }
  if (!(view_b & 1)) {
    k_end = min(k_end, col0 + TS);
  }
  if (!(view_b & 2)) {
    k_begin = max(k_begin, col0);
  }
  const int tiles = k_end > k_begin ? (k_end - k_begin + TILE_K - 1) / TILE_K : 0;
  const int split = get_global_id(2);
  const int tiles_per_split = (tiles + get_global_size(2) - 1) / get_global_size(2);
  const int tile_begin = split * tiles_per_split;
  const int tile_end = min(tiles, tile_begin + tiles_per_split);
  const bool interior = view_a == 3 && view_b == 3 && row0 + TS <= M && col0 + TS <= N;

#ifdef TENSOR_CORES
  const int lane = thread % 32;
  const int warp = thread / 32;
  const int g = lane / 4;
  const int t = lane % 4;
  const int warp_row0 = (warp % WARPS_M) * WARP_ROWS;
  const int warp_col0 = (warp / WARPS_M) * WARP_COLS;
  T acc[FRAGS_M][FRAGS_N][4];
#pragma unroll
  for (int fm = 0; fm < FRAGS_M; fm++) {
#pragma unroll
    for (int fn = 0; fn < FRAGS_N; fn++) {
#pragma unroll
      for (int e = 0; e < 4; e++) {
        acc[fm][fn][e] = 0;
      }
    }
  }
#else
  T acc[WPT][WPT];
#pragma unroll
  for (int r = 0; r < WPT; r++) {
#pragma unroll
    for (int s = 0; s < WPT; s++) {
      acc[r][s] = 0;
    }
  }
#endif

  // Each work item stages LOADS elements of each tile; the next tile's
  // elements are fetched into registers while the current one is used, so
  // global-memory latency overlaps the arithmetic.
  T a_next[LOADS];
  T b_next[LOADS];
  if (tile_begin < tile_end) {
    FETCH(k_begin + tile_begin * TILE_K);
  }
  for (int tile = tile_begin; tile < tile_end; tile++) {
#pragma unroll
    for (int n = 0; n < LOADS; n++) {
      const int l = thread + n * GROUP_THREADS;
      if (STAGED(l)) {
        a_tile[A_KK(l)][A_II(l)] = a_next[n];
        b_tile[B_KK(l)][B_JJ(l)] = b_next[n];
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (tile + 1 < tile_end) {
      FETCH(k_begin + (tile + 1) * TILE_K);
    }
#ifdef TENSOR_CORES
#pragma unroll
    for (int kk = 0; kk < TILE_K; kk += K_STEP) {
      T a_frag[FRAGS_M][2 * K_PARTS];
#pragma unroll
      for (int fm = 0; fm < FRAGS_M; fm++) {
#pragma unroll
        for (int p = 0; p < K_PARTS; p++) {
          a_frag[fm][2 * p] = a_tile[kk + 4 * p + t][warp_row0 + fm * 16 + g];
          a_frag[fm][2 * p + 1] = a_tile[kk + 4 * p + t][warp_row0 + fm * 16 + g + 8];
        }
      }
#pragma unroll
      for (int fn = 0; fn < FRAGS_N; fn++) {
        T b_frag[K_PARTS];
#pragma unroll
        for (int p = 0; p < K_PARTS; p++) {
          b_frag[p] = b_tile[kk + 4 * p + t][warp_col0 + fn * 8 + g];
        }
#pragma unroll
        for (int fm = 0; fm < FRAGS_M; fm++) {
          MMA_STEP(acc[fm][fn], a_frag[fm], b_frag);
        }
      }
    }
#else
#pragma unroll
    for (int kk = 0; kk < TILE_K; kk++) {
      T a_reg[WPT];
      T b_reg[WPT];
#ifdef PAIRED
#pragma unroll
      for (int r = 0; r < WPT; r += 2) {
        const T2 a_pair = *(__local const T2*)&a_tile[kk][LANE(tx, r)];
        a_reg[r] = a_pair.x;
        a_reg[r + 1] = a_pair.y;
        const T2 b_pair = *(__local const T2*)&b_tile[kk][LANE(ty, r)];
        b_reg[r] = b_pair.x;
        b_reg[r + 1] = b_pair.y;
      }
#else
#pragma unroll
      for (int r = 0; r < WPT; r++) {
        a_reg[r] = a_tile[kk][LANE(tx, r)];
        b_reg[r] = b_tile[kk][LANE(ty, r)];
      }
#endif
#pragma unroll
      for (int r = 0; r < WPT; r++) {
#pragma unroll
        for (int s = 0; s < WPT; s++) {
          acc[r][s] = fma(a_reg[r], b_reg[s], acc[r][s]);
        }
      }
    }
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
  }

  __global T* out = c + offset_c + split * ldc * N;
#ifdef TENSOR_CORES
#pragma unroll
  for (int fm = 0; fm < FRAGS_M; fm++) {
#pragma unroll
    for (int fn = 0; fn < FRAGS_N; fn++) {
#pragma unroll
      for (int e = 0; e < 4; e++) {
        const int i = row0 + warp_row0 + fm * 16 + g + (e / 2) * 8;
        const int j = col0 + warp_col0 + fn * 8 + 2 * t + e % 2;
        store_c(out, i, j, M, N, ldc, acc[fm][fn][e], alpha, beta EPILOGUE_ARGS);
      }
    }
  }
#else
#pragma unroll
  for (int r = 0; r < WPT; r++) {
    const int i = row0 + LANE(tx, r);
#pragma unroll
    for (int s = 0; s < WPT; s++) {
      const int j = col0 + LANE(ty, s);
      store_c(out, i, j, M, N, ldc, acc[r][s], alpha, beta EPILOGUE_ARGS);
    }
  }
#endif
}

#ifdef TENSOR_CORES
// The work-group size is fixed: the compiler may budget registers for it.
__attribute__((reqd_work_group_size(RTS, GROUP_THREADS / RTS, 1)))
__kernel void gemm_dmma(const __global T* a, const __global T* b, __global T* c, int M, int N, int K, int offset_a, int lda, int offset_b, int ldb, int offset_c, int ldc, int view_a, int view_b, T alpha, T beta EPILOGUE_PARAMS) {
  __local T a_tile[TILE_K][TS + PAD] __attribute__((aligned(16)));
  __local T b_tile[TILE_K][TS + PAD] __attribute__((aligned(16)));
  gemm_tile(a, b, c, M, N, K, offset_a, lda, offset_b, ldb, offset_c, ldc, view_a, view_b, alpha, beta, a_tile, b_tile EPILOGUE_ARGS);
}
#else
__kernel void gemm(const __global T* a, const __global T* b, __global T* c, int M, int N, int K, int offset_a, int lda, int offset_b, int ldb, int offset_c, int ldc, int view_a, int view_b, T alpha, T beta EPILOGUE_PARAMS) {
  __local T a_tile[TILE_K][TS + PAD] __attribute__((aligned(16)));
  __local T b_tile[TILE_K][TS + PAD] __attribute__((aligned(16)));
  gemm_tile(a, b, c, M, N, K, offset_a, lda, offset_b, ldb, offset_c, ldc, view_a, view_b, alpha, beta, a_tile, b_tile EPILOGUE_ARGS);
}
#endif
