import pathlib, sys
src = pathlib.Path("/work/main/kernels/cl/cholesky.cl").read_text()
NO_FAILURE = ("        failed = 1;\n        if (first_group) {\n          atomic_min(first_failure, index_base + b + bad);\n        }\n", "")
V = {
  "full": [],
  "empty": [("  if (t == 0) {\n    failed = 0;\n  }\n", "  return;\n")],
  "nofactor": [("for (int b = 0; b < LEAF; b += FACTOR_BLOCK)", "for (int b = LEAF; b < LEAF; b += FACTOR_BLOCK)")],
  "nol21": [("  if (below == 0) {\n    return;\n  }\n", "  return;\n")],
  "nozeros": [("row < index_base; row +=", "row < 0; row +=")],
}
base = src
assert base.count(NO_FAILURE[0]) == 1
base = base.replace(*NO_FAILURE)
out = pathlib.Path(sys.argv[1])
for name, edits in V.items():
    t = base
    for o, n in edits:
        assert t.count(o) == 1, (name, o)
        t = t.replace(o, n)
    d = out / name; d.mkdir(parents=True, exist_ok=True)
    (d / "cholesky_leaf_double.cl").write_text("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" + t)
    print(name)
