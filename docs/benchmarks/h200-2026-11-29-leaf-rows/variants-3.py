import pathlib, sys
src = pathlib.Path("/work/main/kernels/cl/cholesky.cl").read_text()
old_loop = """      for (int k = 0; k < FACTOR_BLOCK; k++) {
        const T pivot = lane_value(own[k], k);
        bad = !(pivot > 0) && bad == FACTOR_BLOCK ? k : bad;
        // A double square root or division is a long subroutine on GPUs:
        // one reciprocal square root per step.
        const T inv_root = rsqrt(pivot);
        const T l_rk = lane >= k ? own[k] * inv_root : 0;
        own[k] = l_rk;
        if (t == k) {
          inverse_diagonal[b + k] = inv_root;
        }
#pragma unroll
        for (int c = k + 1; c < FACTOR_BLOCK; c++) {
          own[c] -= l_rk * lane_value(l_rk, c);
        }
      }
"""
assert src.count(old_loop) == 1
def loop(next_pivot, fast):
    rs = "fast_rsqrt(pivot)" if fast else "rsqrt(pivot)"
    if not next_pivot:
        return old_loop.replace("rsqrt(pivot)", rs)
    return f"""      T pivot = lane_value(own[0], 0);
      for (int k = 0; k < FACTOR_BLOCK; k++) {{
        bad = !(pivot > 0) && bad == FACTOR_BLOCK ? k : bad;
        const T inv_root = {rs};
        const T l_rk = lane >= k ? own[k] * inv_root : 0;
        own[k] = l_rk;
        if (t == k) {{
          inverse_diagonal[b + k] = inv_root;
        }}
        T next_pivot = 0;
        if (k + 1 < FACTOR_BLOCK) {{
          next_pivot = lane_value(own[k + 1] - l_rk * l_rk, k + 1);
        }}
#pragma unroll
        for (int c = k + 1; c < FACTOR_BLOCK; c++) {{
          own[c] -= l_rk * lane_value(l_rk, c);
        }}
        pivot = next_pivot;
      }}
"""
fast_fn = """
inline double fast_rsqrt(double p) {
  double y;
  asm("rsqrt.approx.f64 %0, %1;" : "=d"(y) : "d"(p));
  double e = fma(-(p * y), y, 1.0);
  y = fma(0.5 * y, e, y);
  e = fma(-(p * y), y, 1.0);
  return fma(0.5 * y, e, y);
}
"""
anchor = "  return as_double((uint2)(lo, hi));\n}\n"
assert src.count(anchor) == 1
out = pathlib.Path(sys.argv[1])
for name, (nxt, fast) in {"nextpivot": (True, False), "rsq": (False, True), "both": (True, True)}.items():
    t = src.replace(anchor, anchor + fast_fn).replace(old_loop, loop(nxt, fast))
    d = out / name; d.mkdir(parents=True, exist_ok=True)
    (d / "cholesky_leaf_double.cl").write_text("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" + t)
    print(name)
