# Leaf variants over kernels/cl/cholesky.cl (written to argv[1]/<name>/):
# t2: trailing tiles of 2 x 2 instead of 4 x 4;
# rows2: the shuffled substitution with two rows per group of ROW_LANES
#   work items (each local read of L feeds two multiply-adds; a pass's rows
#   split in halves, so that few rows still pair), and warps without rows
#   skip the pass.
import pathlib, sys
src = pathlib.Path("/work/main/kernels/cl/cholesky.cl").read_text()
t_old = "#define TRAILING_TILE 4\n"
start = src.index("  for (int row0 = first_row; row0 < end_row; row0 += THREADS / ROW_LANES) {")
end = src.index("#else", start)
rows2 = """  const int slot = t / ROW_LANES;
  for (int row0 = first_row; row0 < end_row; row0 += 2 * (THREADS / ROW_LANES)) {
    const int pass_rows = min(end_row - row0, 2 * (THREADS / ROW_LANES));
    const int first_half = (pass_rows + 1) / 2;
    // Whole warps skip or not (their lanes shuffle together).
    if ((t / 32) * (32 / ROW_LANES) >= first_half) {
      continue;
    }
    int row[2];
    bool row_taken[2];
    row[0] = row0 + slot;
    row[1] = row0 + first_half + slot;
    row_taken[0] = slot < first_half;
    row_taken[1] = slot < pass_rows - first_half;
    T x[2][ROW_ENTRIES];
#pragma unroll
    for (int h = 0; h < 2; h++) {
      __global const T* a_row = a + offset + n + row[h];
#pragma unroll
      for (int c = 0; c < ROW_ENTRIES; c++) {
        x[h][c] = row_taken[h] && q + ROW_LANES * c < n ? a_row[ld * (q + ROW_LANES * c)] : 0;
      }
    }
#pragma unroll
    for (int k = 0; k < LEAF; k++) {
      const int c = k / ROW_LANES;
      const int source = (lane & ~(ROW_LANES - 1)) | (k % ROW_LANES);
      // Right only in the lane that holds entry k.
      const T x_k0 = lane_value(x[0][c] * inverse_diagonal[k], source);
      const T x_k1 = lane_value(x[1][c] * inverse_diagonal[k], source);
      if (q == k % ROW_LANES) {
        x[0][c] = x_k0;
        x[1][c] = x_k1;
      }
#pragma unroll
      for (int later = c; later < ROW_ENTRIES; later++) {
        if (later > c || q > k % ROW_LANES) {
          const T l_jk = l_entries[(q + ROW_LANES * later) * (LEAF + 1) + k];
          x[0][later] -= l_jk * x_k0;
          x[1][later] -= l_jk * x_k1;
        }
      }
    }
#pragma unroll
    for (int h = 0; h < 2; h++) {
      __global T* l21_row = factor + offset + n + row[h];
#pragma unroll
      for (int c = 0; c < ROW_ENTRIES; c++) {
        if (row_taken[h] && q + ROW_LANES * c < n) {
          l21_row[ld * (q + ROW_LANES * c)] = x[h][c];
        }
      }
    }
  }
"""
assert src.count(t_old) == 1
variants = {"t2": src.replace(t_old, "#define TRAILING_TILE 2\n"), "rows2": src[:start] + rows2 + src[end:]}
out = pathlib.Path(sys.argv[1])
for name, text in variants.items():
    d = out / name; d.mkdir(parents=True, exist_ok=True)
    (d / "cholesky_leaf_double.cl").write_text("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" + text)
    (d / "plain.cl").write_text(text)
    print(name)
