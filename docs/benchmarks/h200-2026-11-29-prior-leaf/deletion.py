# Deletion variants of the leaf with prior columns subtracted (timing only):
# nodiag: no diagonal tiles; norows: no rows-below pass; none: neither
# (p still loaded, rows still read from factor); aread: rows read from a
# in the substitution (wrong results). Written against the second version
# (rows' prior columns staged in local memory, loops up to `prior`); the
# patch in this folder is the last one (loops over all 64, unrolled by 8).
import pathlib, sys
src = pathlib.Path("/work/main/kernels/cl/cholesky.cl").read_text()
diag = "  for (int s = 0; s < TILES_PER_THREAD; s++) {\n    const int tile = t + s * THREADS;\n    if (tile < LOWER_TILES) {\n      const int2 at = lower_tile(tile);\n#pragma unroll 4\n"
assert src.count(diag) == 1
rows = "  for (int row0 = first_row; row0 < end_row; row0 += PASS_ROWS) {\n    const int row = row0 + row_in_pass;\n    T x[PASS_COLUMNS];"
assert src.count(rows) == 1
aread = "  __global const T* rows_below = prior > 0 ? factor : a;"
assert src.count(aread) == 1
nodiag = src.replace(diag, diag.replace("if (tile < LOWER_TILES)", "if (tile < 0)"))
norows = src.replace(rows, rows.replace("row0 < end_row;", "row0 < first_row;"))
none = nodiag.replace(rows, rows.replace("row0 < end_row;", "row0 < first_row;"))
variants = {"nodiag": nodiag, "norows": norows, "none": none,
            "aread": src.replace(aread, "  __global const T* rows_below = a;")}
out = pathlib.Path(sys.argv[1])
for name, text in variants.items():
    assert text != src
    d = out / name; d.mkdir(parents=True, exist_ok=True)
    (d / "cholesky_leaf_double.cl").write_text("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" + text)
    print(name)
