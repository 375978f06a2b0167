// The log-softmax of each row of an affine product, written once:
//   out_ij = v_ij - log sum_l exp(v_il),   v = x * w + c
// (x n x q, w q x k, c 1 x k, out n x k, all column-major), and each row's
// normaliser, row_normaliser_i = log sum_l exp(v_il). With SOFTMAX, out_ij
// is the softmax itself, exp(v_ij - row_normaliser_i). A mixture's E-step
// is this with x the expanded data and w the expanded parameters: its log
// responsibilities (or responsibilities) and each point's log density.
//
// A work-group owns TILE_ROWS rows and all of their k columns, so a row's
// normaliser is known inside the work-group while its terms are still in
// registers: the product is formed once, each term takes one exp, and the
// n x k result is stored once and never read back. The TILE_ROWS x Q slice
// of x is staged in local memory (Q, a build option, is q rounded up to 4;
// the padding is zero). Each work item then holds ACC terms:
//
// - with TENSOR_CORES (NVIDIA FP64 tensor cores, cl/dmma.cl), WARPS warps
//   of 32; warp w owns columns [8 COL_FRAGS w, 8 COL_FRAGS (w + 1)) of all
//   TILE_ROWS = 16 ROW_FRAGS rows as ROW_FRAGS x COL_FRAGS fragments of
//   16 x 8 (columns past k read as -inf), fed by w straight from global
//   memory (every work-group reads all of it, 57 KB at q = 28, k = 256:
//   cache hits), each k step's slice fetched during the previous step's
//   products;
// - elsewhere 256 work items, (r, s) = (id % 32, id / 32) owning row r,
//   columns s, s + 8, ..., 64 COL_FRAGS of them.
//
// The normaliser takes one round through local memory: each warp's (or
// work item's) largest term per row and its sum of exp(term - largest),
// combined per row rescaled to the row's largest. A NaN term makes its row
// NaN; a row whose largest term is infinite has that infinity as its
// normaliser (its terms then give -inf or NaN, as v - log_sum_exp(v) does).
//
// On an H200 at n = 1e6, q = 28, k = 256: 32 rows and 16 warps (64
// registers) 1.48 ms; 16 rows and 8 warps (70) 1.48-1.52; 32 rows and 8
// warps (113) 1.61; the k loop unrolled (166) 2.61; c hoisted into
// registers (74) 2.19; work-groups looping over tiles (128) 1.92; c
// folded into the product as a row of w against a column of ones 1.58-1.60;
// exp2 of a scaled argument instead of exp 2.24. The time is occupancy:
// each extra live register cost more than it saved. One round through local
// memory for the normaliser instead of two (the row's maximum, then its sum)
// took 1.49-1.50 to 1.46-1.47 ms, same run. The host takes 8 warps up to
// k = 64, where 16 leave half of them on padding columns (a mixture's
// expanded E-step, q = 120, k = 64: 1.73 -> 1.20 ms).

#ifdef TENSOR_CORES
#ifndef WARPS
#define WARPS 16
#endif
#define GROUP (32 * WARPS)
#ifndef ROW_FRAGS
#define ROW_FRAGS 2
#endif
#define TILE_ROWS (16 * ROW_FRAGS)
#define ACC (4 * ROW_FRAGS * COL_FRAGS)
// Work item t of lane group g holds rows g + 8h (h < 2 ROW_FRAGS; its row
// index e / 2 of its terms by fragment), columns 2t, 2t + 1 of each of its
// warp's fragments; 4 WARPS work items share each row. The four lanes of
// a row combine by shuffles, so each warp has one slot per row.
#define ITEM_ROWS (2 * ROW_FRAGS)
#define SLOTS WARPS
#define TERM(fm, fn, e) ((fm) * COL_FRAGS * 4 + (fn) * 4 + (e))
#define TERM_ROW(x) (((x) / (COL_FRAGS * 4)) * 16 + (((x) % 4) / 2) * 8 + g)
#define TERM_COL(x) (warp * 8 * COL_FRAGS + (((x) / 4) % COL_FRAGS) * 8 + 2 * t + (x) % 2)
#define TERM_ITEM_ROW(x) (((x) / (COL_FRAGS * 4)) * 2 + ((x) % 4) / 2)
#define ITEM_ROW(r) (((r) / 2) * 16 + ((r) % 2) * 8 + g)
#else
#define GROUP 256
#define TILE_ROWS 32
#define ACC (8 * COL_FRAGS)
#define ITEM_ROWS 1
#define SLOTS 8
#define TERM_ROW(x) row
#define TERM_COL(x) (slot + 8 * (x))
#define TERM_ITEM_ROW(x) 0
#define ITEM_ROW(r) row
#endif

#ifdef TENSOR_CORES
// The work item's B fragments of the k step at l0: row l0 + t of its
// warp's columns, zero past q and k.
#define FETCH_W(b, l0) \
  for (int fn = 0; fn < COL_FRAGS; fn++) { \
    const int j = warp * 8 * COL_FRAGS + fn * 8 + g; \
    const int l = (l0) + t; \
    (b)[fn][0] = l < q && j < k ? w[l + (size_t)q * j] : 0; \
  }
#endif

// The larger of two terms, NaN winning.
inline double max_or_nan(double a, double b) {
  return isnan(a) || a >= b ? a : b;
}

#ifdef TENSOR_CORES
// v of the lane whose index differs from this one's in the bits of mask.
inline double shuffle_xor(double v, int mask) {
  const uint2 halves = as_uint2(v);
  uint lo, hi;
  asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(lo) : "r"(halves.x), "r"(mask));
  asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(hi) : "r"(halves.y), "r"(mask));
  return as_double((uint2)(lo, hi));
}
// Combines a row's value over the lanes in the bits of mask.
#define LANE_MAX(v, mask) max_or_nan(v, shuffle_xor(v, mask))
#define LANE_SUM(v, mask) ((v) + shuffle_xor(v, mask))
#endif

__attribute__((reqd_work_group_size(GROUP, 1, 1)))
__kernel void log_softmax_rows_of_product(const __global double* restrict x, const __global double* restrict w, const __global double* restrict c, __global double* out, __global double* row_normaliser, int n, int q, int k) {
  __local double x_tile[Q][TILE_ROWS + 4];
  __local double partial_max[TILE_ROWS][SLOTS];
  __local double partial_sum[TILE_ROWS][SLOTS];
  __local double normaliser[TILE_ROWS];
  const int id = get_local_id(0);
  const int row0 = get_group_id(0) * TILE_ROWS;
#ifdef TENSOR_CORES
  const int lane = id % 32;
  const int warp = id / 32;
  const int g = lane / 4;
  const int t = lane % 4;
#else
  const int row = id % TILE_ROWS;
  const int slot = id / TILE_ROWS;
#endif

  for (int e = id; e < Q * TILE_ROWS; e += GROUP) {
    const int r = e % TILE_ROWS;
    const int l = e / TILE_ROWS;
    x_tile[l][r] = row0 + r < n && l < q ? x[row0 + r + (size_t)n * l] : 0;
  }
  double v[ACC];
#ifdef TENSOR_CORES
#pragma unroll
  for (int e = 0; e < ACC; e++) {
    v[e] = 0;
  }
  // Each k step's slice of w is fetched while the previous step's
  // products run (the first before the staging barrier): the loads'
  // latency hides behind the tensor cores without holding all of w in
  // registers.
  double b_next[COL_FRAGS][1];
  FETCH_W(b_next, 0);
  barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll 1
  for (int l0 = 0; l0 < Q; l0 += 4) {
    double b[COL_FRAGS][1];
#pragma unroll
    for (int fn = 0; fn < COL_FRAGS; fn++) {
      b[fn][0] = b_next[fn][0];
    }
    if (l0 + 4 < Q) {
      FETCH_W(b_next, l0 + 4);
    }
    double a[ROW_FRAGS][2];
#pragma unroll
    for (int fm = 0; fm < ROW_FRAGS; fm++) {
      a[fm][0] = x_tile[l0 + t][fm * 16 + g];
      a[fm][1] = x_tile[l0 + t][fm * 16 + g + 8];
    }
#pragma unroll
    for (int fn = 0; fn < COL_FRAGS; fn++) {
#pragma unroll
      for (int fm = 0; fm < ROW_FRAGS; fm++) {
        MMA_16x8x4(&v[TERM(fm, fn, 0)], a[fm], b[fn]);
      }
    }
  }
#else
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int e = 0; e < ACC; e++) {
    const int j = TERM_COL(e);
    double sum = 0;
    if (j < k) {
      for (int l = 0; l < q; l++) {
        sum = fma(x_tile[l][row], w[l + (size_t)q * j], sum);
      }
    }
    v[e] = sum;
  }
#endif

  // The terms, -inf in the padding columns; each row's largest term and the
  // sum of exp(term - largest) over this work item's terms (over the four
  // lanes of a row in a warp on the tensor cores).
  double m[ITEM_ROWS];
#pragma unroll
  for (int r = 0; r < ITEM_ROWS; r++) {
    m[r] = -INFINITY;
  }
#pragma unroll
  for (int e = 0; e < ACC; e++) {
    const int j = TERM_COL(e);
    v[e] = j < k ? v[e] + c[j] : -INFINITY;
    m[TERM_ITEM_ROW(e)] = max_or_nan(m[TERM_ITEM_ROW(e)], v[e]);
  }
#ifdef TENSOR_CORES
#pragma unroll
  for (int r = 0; r < ITEM_ROWS; r++) {
    m[r] = LANE_MAX(LANE_MAX(m[r], 1), 2);
  }
#endif
  double s[ITEM_ROWS];
#pragma unroll
  for (int r = 0; r < ITEM_ROWS; r++) {
    s[r] = 0;
  }
#pragma unroll
  for (int e = 0; e < ACC; e++) {
    const double top = m[TERM_ITEM_ROW(e)];
    if (isfinite(top)) {
      s[TERM_ITEM_ROW(e)] += exp(v[e] - top);
    }
  }
#ifdef TENSOR_CORES
#pragma unroll
  for (int r = 0; r < ITEM_ROWS; r++) {
    s[r] = LANE_SUM(LANE_SUM(s[r], 1), 2);
    if (t == 0) {
      partial_max[ITEM_ROW(r)][warp] = m[r];
      partial_sum[ITEM_ROW(r)][warp] = s[r];
    }
  }
#else
  partial_max[row][slot] = m[0];
  partial_sum[row][slot] = s[0];
#endif
  barrier(CLK_LOCAL_MEM_FENCE);

  // Each row's slots combined: the largest of their maxima, and their sums
  // rescaled to it (one exp per slot).
#ifdef TENSOR_CORES
  if (id < TILE_ROWS * SLOTS) {
    // Work items SLOTS * r .. SLOTS * r + SLOTS - 1 hold row r's slots
    // (whole warps).
    const double slot_max = partial_max[id / SLOTS][id % SLOTS];
    double top = slot_max;
#pragma unroll
    for (int mask = 1; mask < SLOTS; mask *= 2) {
      top = LANE_MAX(top, mask);
    }
    double sum = isfinite(top) ? partial_sum[id / SLOTS][id % SLOTS] * exp(slot_max - top) : 0;
#pragma unroll
    for (int mask = 1; mask < SLOTS; mask *= 2) {
      sum = LANE_SUM(sum, mask);
    }
    if (id % SLOTS == 0) {
      const double lse = isfinite(top) ? top + log(sum) : top;
      normaliser[id / SLOTS] = lse;
      if (row0 + id / SLOTS < n) {
        row_normaliser[row0 + id / SLOTS] = lse;
      }
    }
  }
#else
  if (id < TILE_ROWS) {
    double top = -INFINITY;
    for (int p = 0; p < SLOTS; p++) {
      top = max_or_nan(top, partial_max[id][p]);
    }
    double sum = 0;
    if (isfinite(top)) {
      for (int p = 0; p < SLOTS; p++) {
        sum += partial_sum[id][p] * exp(partial_max[id][p] - top);
      }
    }
    const double lse = isfinite(top) ? top + log(sum) : top;
    normaliser[id] = lse;
    if (row0 + id < n) {
      row_normaliser[row0 + id] = lse;
    }
  }
#endif
  barrier(CLK_LOCAL_MEM_FENCE);

  double lse[ITEM_ROWS];
#pragma unroll
  for (int r = 0; r < ITEM_ROWS; r++) {
    lse[r] = normaliser[ITEM_ROW(r)];
  }
#pragma unroll
  for (int e = 0; e < ACC; e++) {
    const int i = row0 + TERM_ROW(e);
    const int j = TERM_COL(e);
    if (i < n && j < k) {
#ifdef SOFTMAX
      out[i + (size_t)n * j] = exp(v[e] - lse[TERM_ITEM_ROW(e)]);
#else
      out[i + (size_t)n * j] = v[e] - lse[TERM_ITEM_ROW(e)];
#endif
    }
  }
}
