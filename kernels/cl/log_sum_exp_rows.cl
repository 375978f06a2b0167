// The log-normaliser of a softmax over each row of x * w + c, without
// forming the n x k matrix: out_i = log sum_j exp(sum_l x_il w_lj + c_j)
// (x n x q, w q x k, c 1 x k, all column-major). A mixture's E-step and a
// softmax regression divide by it; with it known, the normalised rows are
// one GEMM whose store subtracts it (an epilogue), so the n x k result is
// written once and never read back.
//
// Each work item owns ROWS rows (the host's choice, 1) and keeps them in
// registers (Q, a build option, is q rounded up to even; the padding is
// zero). Columns of w and c
// are staged in local memory CHUNK at a time; every work item reads the same
// staged column at once (a broadcast), two doubles per read, each feeding
// ROWS multiply-adds. The sum runs online: m is the largest term so far and
// s = sum exp(term - m), rescaled when a larger term arrives, so one exp per
// term and no overflow; -inf terms add nothing, +inf stays +inf, NaN stays.

#ifndef ROWS
#define ROWS 1
#endif
#define CHUNK 32

inline void add_term(double v, double* m, double* s) {
  if (v > *m) {
    *s = *s * exp(*m - v) + 1;
    *m = v;
  } else if (v > -INFINITY && *m < INFINITY) {
    *s += exp(v - *m);
  } else if (isnan(v)) {
    *s = v;
  }
}

__kernel void log_sum_exp_rows_of_product(const __global double* x, const __global double* w, const __global double* c, __global double* out, int n, int q, int k) {
  __local double2 staged[CHUNK][Q / 2];
  __local double offsets[CHUNK];
  const int t = get_local_id(0);
  const int first = get_group_id(0) * get_local_size(0) * ROWS + t;
  double2 xs[ROWS][Q / 2];
  double m[ROWS], s[ROWS];
  for (int r = 0; r < ROWS; r++) {
    const int i = first + r * get_local_size(0);
    for (int l = 0; l < Q / 2; l++) {
      const int a = 2 * l, b = 2 * l + 1;
      xs[r][l] = (double2)(i < n && a < q ? x[i + (size_t)n * a] : 0, i < n && b < q ? x[i + (size_t)n * b] : 0);
    }
    m[r] = -INFINITY;
    s[r] = 0;
  }
  for (int j0 = 0; j0 < k; j0 += CHUNK) {
    const int cols = min(CHUNK, k - j0);
    barrier(CLK_LOCAL_MEM_FENCE);
    __local double* flat = (__local double*)staged;
    for (int e = t; e < CHUNK * Q; e += get_local_size(0)) {
      const int l = e % Q;
      const int j = e / Q;
      flat[e] = (j < cols && l < q) ? w[l + (size_t)q * (j0 + j)] : 0;
    }
    if (t < cols) {
      offsets[t] = c[j0 + t];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int j = 0; j < cols; j++) {
      double v[ROWS];
      for (int r = 0; r < ROWS; r++) {
        v[r] = offsets[j];
      }
      for (int l = 0; l < Q / 2; l++) {
        const double2 wl = staged[j][l];
        for (int r = 0; r < ROWS; r++) {
          v[r] = fma(xs[r][l].x, wl.x, v[r]);
          v[r] = fma(xs[r][l].y, wl.y, v[r]);
        }
      }
      for (int r = 0; r < ROWS; r++) {
        add_term(v[r], &m[r], &s[r]);
      }
    }
  }
  for (int r = 0; r < ROWS; r++) {
    const int i = first + r * get_local_size(0);
    if (i < n) {
      out[i] = m[r] + log(s[r]);
    }
  }
}
