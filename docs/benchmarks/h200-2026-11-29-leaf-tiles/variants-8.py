# Leaf variants over kernels/cl/cholesky.cl (written to argv[1]/<name>/):
# fb8: FACTOR_BLOCK 8 (with the tiled trailing updates);
# fence4 / fence8: the shuffled substitution reads L without volatile, a
#   local fence every 4 (8) steps bounding how far ahead the compiler loads.
import pathlib, sys
src = pathlib.Path("/work/main/kernels/cl/cholesky.cl").read_text()
fb_old = "#ifndef FACTOR_BLOCK\n#define FACTOR_BLOCK 16\n#endif\n"
vol_old = "  const volatile __local T* l_entries = &l[0][0];\n"
step_old = """      const int c = k / ROW_LANES;
      // Right only in the lane that holds entry k.
      const T candidate = x[c] * inverse_diagonal[k];"""
for s in (fb_old, vol_old, step_old):
    assert src.count(s) == 1, s
def fence(every):
    return src.replace(vol_old, "  const __local T* l_entries = &l[0][0];\n").replace(
        step_old, f"""      if (k % {every} == 0) {{
        mem_fence(CLK_LOCAL_MEM_FENCE);
      }}
""" + step_old)
variants = {"fb8": src.replace(fb_old, "#define FACTOR_BLOCK 8\n"), "fence4": fence(4), "fence8": fence(8)}
out = pathlib.Path(sys.argv[1])
for name, text in variants.items():
    d = out / name; d.mkdir(parents=True, exist_ok=True)
    (d / "cholesky_leaf_double.cl").write_text("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" + text)
    (d / "plain.cl").write_text(text)
    print(name)
