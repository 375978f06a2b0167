# Leaf variants over kernels/cl/cholesky.cl (written to argv[1]/<name>/):
# nextpivot: the next step's pivot taken from its lane before this step's
#   update shuffles (one shuffle fewer on each step's chain);
# tiles: the trailing update of the diagonal block after each 16-column
#   block in 4 x 4 register tiles (a local read feeds two multiply-adds
#   instead of one half);
# both.
import pathlib, sys
src = pathlib.Path("/work/main/kernels/cl/cholesky.cl").read_text()
old_loop = """#pragma unroll
      for (int k = 0; k < FACTOR_BLOCK; k++) {
        const T pivot = lane_value(own[k], k);
        bad = !(pivot > 0) && bad == FACTOR_BLOCK ? k : bad;
"""
new_loop = """      T pivot = lane_value(own[0], 0);
#pragma unroll
      for (int k = 0; k < FACTOR_BLOCK; k++) {
        bad = !(pivot > 0) && bad == FACTOR_BLOCK ? k : bad;
"""
old_tail = """#pragma unroll
        for (int c = k + 1; c < FACTOR_BLOCK; c++) {
          own[c] -= l_rk * lane_value(l_rk, c);
        }
      }
"""
new_tail = """        T next_pivot = 0;
        if (k + 1 < FACTOR_BLOCK) {
          next_pivot = lane_value(own[k + 1] - l_rk * l_rk, k + 1);
        }
#pragma unroll
        for (int c = k + 1; c < FACTOR_BLOCK; c++) {
          own[c] -= l_rk * lane_value(l_rk, c);
        }
        pivot = next_pivot;
      }
"""
old_rest = """    const int rest = LEAF - next;
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
"""
new_rest = """    const int side = (LEAF - next) / 4;
    for (int tile = t; tile < side * (side + 1) / 2; tile += THREADS) {
      const int2 at = lower_tile(tile);
      const int r0 = next + 4 * at.x;
      const int c0 = next + 4 * at.y;
      T s[4][4] = {{0}};
#pragma unroll
      for (int kk = 0; kk < FACTOR_BLOCK; kk++) {
        T rows[4];
        T columns[4];
#pragma unroll
        for (int d = 0; d < 4; d++) {
          rows[d] = l[r0 + d][b + kk];
          columns[d] = l[c0 + d][b + kk];
        }
#pragma unroll
        for (int i = 0; i < 4; i++) {
#pragma unroll
          for (int j = 0; j < 4; j++) {
            s[i][j] += rows[i] * columns[j];
          }
        }
      }
#pragma unroll
      for (int i = 0; i < 4; i++) {
#pragma unroll
        for (int j = 0; j < 4; j++) {
          if (r0 + i >= c0 + j) {
            l[r0 + i][c0 + j] -= s[i][j];
          }
        }
      }
    }
"""
helper = """
// The (row, column) of the tile-th tile of a lower triangle of tiles, in
// row-major order.
inline int2 lower_tile(int tile) {
  int row = (int)((sqrt(8.0f * tile + 1.0f) - 1.0f) / 2.0f);
  // Exact whatever the square root's rounding.
  row -= row * (row + 1) / 2 > tile;
  row += (row + 1) * (row + 2) / 2 <= tile;
  return (int2)(row, tile - row * (row + 1) / 2);
}
"""
anchor = "\n__kernel void cholesky_leaf("
for text in (old_loop, old_tail, old_rest, anchor):
    assert src.count(text) == 1, text
nextpivot = src.replace(old_loop, new_loop).replace(old_tail, new_tail)
tiles = src.replace(old_rest, new_rest).replace(anchor, helper + anchor)
both = nextpivot.replace(old_rest, new_rest).replace(anchor, helper + anchor)
out = pathlib.Path(sys.argv[1])
for name, text in {"nextpivot": nextpivot, "tiles": tiles, "both": both}.items():
    d = out / name; d.mkdir(parents=True, exist_ok=True)
    (d / "cholesky_leaf_double.cl").write_text("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" + text)
    (d / "plain.cl").write_text(text)
    print(name)
