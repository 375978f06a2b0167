// The log-softmax of each row of an affine product, written once:
//   out_ij = v_ij - log sum_l exp(v_il),   v = x * w + c
// (x n x q, w q x k, c 1 x k, out n x k, all column-major). A mixture's
// E-step is this with x the expanded data and w the expanded parameters.
//
// A work-group of 256 work items owns TILE_ROWS = 32 rows and all of their
// k columns (KP = 64 * COL_FRAGS of them, the padding reads as -inf), so a
// row's normaliser is known inside the work-group while its terms are still
// in registers: the product is formed once, each term takes one exp, and
// the n x k result is stored once and never read back.
//
// The 32 x Q slice of x is staged in local memory (Q, a build option, is q
// rounded up to 4; the padding is zero). Each work item then holds ACC
// terms: with TENSOR_CORES (NVIDIA FP64 tensor cores, cl/dmma.cl) warp w
// owns columns [8 * COL_FRAGS * w, 8 * COL_FRAGS * (w + 1)) of all 32 rows
// as 2 x COL_FRAGS fragments of 16 x 8, fed by w straight from global
// memory (a few kilobytes every work-group reads: cache hits); elsewhere
// work item (r, s) = (id % 32, id / 32) owns row r, columns s, s + 8, ...
//
// The normaliser takes two rounds through local memory: each work item's
// largest term per row, then the sum of exp(term - row max). A NaN term
// makes its row NaN; a row whose largest term is infinite has that
// infinity as its normaliser (its terms then give -inf or NaN, as
// v - log_sum_exp(v) does).

#define TILE_ROWS 32
#define GROUP 256
#define KP (64 * COL_FRAGS)
#define ACC (8 * COL_FRAGS)

#ifdef TENSOR_CORES
// Work item t of lane group g holds rows g, g + 8, g + 16, g + 24 (row
// index e / 2 of its terms by fragment), columns 2t, 2t + 1 of each of its
// warp's fragments; 32 work items (8 warps x 4) share each row.
#define ITEM_ROWS 4
#define SLOTS 32
#define TERM(fm, fn, e) ((fm) * COL_FRAGS * 4 + (fn) * 4 + (e))
#define TERM_ROW(x) (((x) / (COL_FRAGS * 4)) * 16 + (((x) % 4) / 2) * 8 + g)
#define TERM_COL(x) (warp * 8 * COL_FRAGS + (((x) / 4) % COL_FRAGS) * 8 + 2 * t + (x) % 2)
#define TERM_ITEM_ROW(x) (((x) / (COL_FRAGS * 4)) * 2 + ((x) % 4) / 2)
#define ITEM_ROW(r) (((r) / 2) * 16 + ((r) % 2) * 8 + g)
#define SLOT (warp * 4 + t)
#else
#define ITEM_ROWS 1
#define SLOTS 8
#define TERM_ROW(x) row
#define TERM_COL(x) (slot + 8 * (x))
#define TERM_ITEM_ROW(x) 0
#define ITEM_ROW(r) row
#define SLOT slot
#endif

// The larger of two terms, NaN winning.
inline double max_or_nan(double a, double b) {
  return isnan(a) || a >= b ? a : b;
}

__attribute__((reqd_work_group_size(GROUP, 1, 1)))
__kernel void log_softmax_rows_of_product(const __global double* restrict x, const __global double* restrict w, const __global double* restrict c, __global double* out, int n, int q, int k) {
  __local double x_tile[Q][TILE_ROWS + 1];
  __local double partial[TILE_ROWS][SLOTS];
  __local double row_max[TILE_ROWS];
  __local double normaliser[TILE_ROWS];
  const int id = get_local_id(0);
  const int row0 = get_group_id(0) * TILE_ROWS;

  for (int e = id; e < Q * TILE_ROWS; e += GROUP) {
    const int r = e % TILE_ROWS;
    const int l = e / TILE_ROWS;
    x_tile[l][r] = row0 + r < n && l < q ? x[row0 + r + (size_t)n * l] : 0;
  }
  barrier(CLK_LOCAL_MEM_FENCE);

  double v[ACC];
#ifdef TENSOR_CORES
  const int lane = id % 32;
  const int warp = id / 32;
  const int g = lane / 4;
  const int t = lane % 4;
#pragma unroll
  for (int e = 0; e < ACC; e++) {
    v[e] = 0;
  }
  for (int l0 = 0; l0 < Q; l0 += 4) {
    const int l = l0 + t;
    double a[2][2];
#pragma unroll
    for (int fm = 0; fm < 2; fm++) {
      a[fm][0] = x_tile[l][fm * 16 + g];
      a[fm][1] = x_tile[l][fm * 16 + g + 8];
    }
#pragma unroll
    for (int fn = 0; fn < COL_FRAGS; fn++) {
      const int j = warp * 8 * COL_FRAGS + fn * 8 + g;
      const double b[1] = {l < q && j < k ? w[l + (size_t)q * j] : 0};
#pragma unroll
      for (int fm = 0; fm < 2; fm++) {
        MMA_16x8x4(&v[TERM(fm, fn, 0)], a[fm], b);
      }
    }
  }
#else
  const int row = id % TILE_ROWS;
  const int slot = id / TILE_ROWS;
#pragma unroll
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

  // The terms, -inf in the padding columns, and each row's largest.
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
#pragma unroll
  for (int r = 0; r < ITEM_ROWS; r++) {
    partial[ITEM_ROW(r)][SLOT] = m[r];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (id < TILE_ROWS) {
    double top = -INFINITY;
    for (int p = 0; p < SLOTS; p++) {
      top = max_or_nan(top, partial[id][p]);
    }
    row_max[id] = top;
  }
  barrier(CLK_LOCAL_MEM_FENCE);

  // Each row's sum of exp(term - largest); only finite maxima need it.
  double s[ITEM_ROWS];
#pragma unroll
  for (int r = 0; r < ITEM_ROWS; r++) {
    m[r] = row_max[ITEM_ROW(r)];
    s[r] = 0;
  }
#pragma unroll
  for (int e = 0; e < ACC; e++) {
    const double top = m[TERM_ITEM_ROW(e)];
    if (isfinite(top)) {
      s[TERM_ITEM_ROW(e)] += exp(v[e] - top);
    }
  }
#pragma unroll
  for (int r = 0; r < ITEM_ROWS; r++) {
    partial[ITEM_ROW(r)][SLOT] = s[r];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (id < TILE_ROWS) {
    double sum = 0;
    for (int p = 0; p < SLOTS; p++) {
      sum += partial[id][p];
    }
    const double top = row_max[id];
    normaliser[id] = isfinite(top) ? top + log(sum) : top;
  }
  barrier(CLK_LOCAL_MEM_FENCE);

#pragma unroll
  for (int e = 0; e < ACC; e++) {
    const int i = row0 + TERM_ROW(e);
    const int j = TERM_COL(e);
    if (i < n && j < k) {
      out[i + (size_t)n * j] = v[e] - normaliser[TERM_ROW(e)];
    }
  }
}
