import pathlib, sys
src = pathlib.Path("/work/main/kernels/cl/cholesky.cl").read_text()
start = src.index("  const int rows_per_group")
end = src.rindex("}")
head, tail_end = src[:start], src[end:]
orig = src[start:end]
out = pathlib.Path(sys.argv[1])

vol = orig.replace("    T x[LEAF];\n", "    T x[LEAF];\n    const volatile __local T* lv = &l[0][0];\n").replace(
    "x[j] -= l[j][k] * x[k];", "x[j] -= lv[j * (LEAF + 1) + k] * x[k];")
assert vol != orig
fence = orig.replace("        x[j] -= l[j][k] * x[k];\n      }\n", "        x[j] -= l[j][k] * x[k];\n      }\n      mem_fence(CLK_LOCAL_MEM_FENCE);\n")
assert fence != orig

def lanes4(volatile):
    load = "lv[(q + 4 * c2) * (LEAF + 1) + k]" if volatile else "l[q + 4 * c2][k]"
    return f'''  const int rows_per_group = (below + get_num_groups(0) - 1) / get_num_groups(0);
  const int first_row = get_group_id(0) * rows_per_group;
  const int end_row = min(below, first_row + rows_per_group);
  const int q = t % 4;
  const int lane = t % 32;
  const volatile __local T* lv = &l[0][0];
  for (int row0 = first_row; row0 < end_row; row0 += THREADS / 4) {{
    const int row = row0 + t / 4;
    const bool live = row < end_row;
    __global const T* a_row = a + offset + n + row;
    T s[16];
#pragma unroll
    for (int c = 0; c < 16; c++) {{
      s[c] = live && q + 4 * c < n ? a_row[ld * (q + 4 * c)] : 0;
    }}
#pragma unroll
    for (int k = 0; k < LEAF; k++) {{
      const int c = k / 4;
      const T mine = s[c] * inverse_diagonal[k];
      const T xk = lane_value(mine, (lane & ~3) | (k % 4));
      if (q == k % 4) {{
        s[c] = xk;
      }}
#pragma unroll
      for (int c2 = c; c2 < 16; c2++) {{
        if (c2 > c || q > k % 4) {{
          s[c2] -= {load} * xk;
        }}
      }}
    }}
    __global T* l21_row = factor + offset + n + row;
#pragma unroll
    for (int c = 0; c < 16; c++) {{
      if (live && q + 4 * c < n) {{
        l21_row[ld * (q + 4 * c)] = s[c];
      }}
    }}
  }}
'''

variants = {"vol": vol, "fence": fence, "lanes4": lanes4(True), "lanes4nv": lanes4(False)}
for name, body in variants.items():
    d = out / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "cholesky_leaf_double.cl").write_text("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" + head + body + tail_end)
    print(name)
