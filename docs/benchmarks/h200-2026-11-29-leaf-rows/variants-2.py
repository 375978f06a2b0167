import pathlib, sys
src = pathlib.Path("/work/main/kernels/cl/cholesky.cl").read_text()
start = src.index("  const int rows_per_group")
end = src.rindex("}")
head, tail_end = src[:start], src[end:]
out = pathlib.Path(sys.argv[1])

def lanes(lpr, skip=False):
    own = 64 // lpr
    body = f'''  const int rows_per_group = (below + get_num_groups(0) - 1) / get_num_groups(0);
  const int first_row = get_group_id(0) * rows_per_group;
  const int end_row = min(below, first_row + rows_per_group);
  const int q = t % {lpr};
  const int lane = t % 32;
  const volatile __local T* lv = &l[0][0];
  for (int row0 = first_row; row0 < end_row; row0 += THREADS / {lpr}) {{
    const int row = row0 + t / {lpr};
    const bool live = row < end_row;
    __global const T* a_row = a + offset + n + row;
    T s[{own}];
#pragma unroll
    for (int c = 0; c < {own}; c++) {{
      s[c] = live && q + {lpr} * c < n ? a_row[ld * (q + {lpr} * c)] : 0;
    }}
#pragma unroll
    for (int k = 0; k < LEAF; k++) {{
      const int c = k / {lpr};
      const T mine = s[c] * inverse_diagonal[k];
      const T xk = lane_value(mine, (lane & ~{lpr - 1}) | (k % {lpr}));
      if (q == k % {lpr}) {{
        s[c] = xk;
      }}
#pragma unroll
      for (int c2 = c; c2 < {own}; c2++) {{
        if (c2 > c || q > k % {lpr}) {{
          s[c2] -= lv[(q + {lpr} * c2) * (LEAF + 1) + k] * xk;
        }}
      }}
    }}
    __global T* l21_row = factor + offset + n + row;
#pragma unroll
    for (int c = 0; c < {own}; c++) {{
      if (live && q + {lpr} * c < n) {{
        l21_row[ld * (q + {lpr} * c)] = s[c];
      }}
    }}
  }}
'''
    if skip:
        body = "  if (below > 0) return;\n" + body
    return head + body + tail_end

def tall(text):
    a = text.index("    if (t < 32) {\n      // Lane t < FACTOR_BLOCK")
    b = text.index("    barrier(CLK_LOCAL_MEM_FENCE);\n    if (failed) {\n      return;\n    }\n#else")
    new = '''    const int below_rows = LEAF - b - FACTOR_BLOCK;
    const int warps = max(1, (below_rows + 15) / 16);
    const int w = t / 32;
    const int lane = t % 32;
    const int r = lane < 16 ? b + lane : b + FACTOR_BLOCK + 16 * w + lane - 16;
    const bool row_ok = w < warps && (lane < 16 || r < LEAF);
    T own[FACTOR_BLOCK];
#pragma unroll
    for (int c = 0; c < FACTOR_BLOCK; c++) {
      own[c] = row_ok ? l[r][b + c] : 0;
    }
    // Every warp reads the diagonal block before the first one overwrites it.
    barrier(CLK_LOCAL_MEM_FENCE);
    if (w < warps) {
      int bad = FACTOR_BLOCK;
#pragma unroll
      for (int k = 0; k < FACTOR_BLOCK; k++) {
        const T pivot = lane_value(own[k], k);
        bad = !(pivot > 0) && bad == FACTOR_BLOCK ? k : bad;
        const T inv_root = rsqrt(pivot);
        const T l_tk = (lane >= 16 || lane >= k) ? own[k] * inv_root : 0;
        own[k] = l_tk;
        if (w == 0 && lane == k) {
          inverse_diagonal[b + k] = inv_root;
        }
#pragma unroll
        for (int c = k + 1; c < FACTOR_BLOCK; c++) {
          own[c] -= l_tk * lane_value(l_tk, c);
        }
      }
      if (lane < 16) {
        if (w == 0) {
#pragma unroll
          for (int c = 0; c < FACTOR_BLOCK; c++) {
            l[b + lane][b + c] = c <= lane ? own[c] : 0;
          }
        }
      } else if (row_ok) {
#pragma unroll
        for (int c = 0; c < FACTOR_BLOCK; c++) {
          l[r][b + c] = own[c];
        }
      }
      if (t == 0 && bad < FACTOR_BLOCK) {
        failed = 1;
        if (first_group) {
          atomic_min(first_failure, index_base + b + bad);
        }
      }
    }
'''
    text = text[:a] + new + text[b:]
    s0 = "    // This block's rows below its diagonal block, L21 = A21 · L11⁻ᵀ: work\n"
    s1 = "    // The rest of the block's lower triangle -= L21 · L21ᵀ.\n"
    i0 = text.index(s0); i1 = text.index(s1)
    text = text[:i0] + "#ifndef WARP_SHUFFLE\n" + text[i0:i1] + "#endif\n" + text[i1:]
    return text

variants = {"lanes2": lanes(2), "lanes8": lanes(8), "lanes4": lanes(4), "l21none": lanes(4, True), "tall": tall(lanes(4))}
for name, body in variants.items():
    d = out / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "cholesky_leaf_double.cl").write_text("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" + body)
    print(name)
