"""Issue #37: where a Cholesky leaf's time goes, by deletion.

Writes copies of kernels/cl/cholesky.cl with parts of `cholesky_leaf`
removed, each as OUT/<variant>/cholesky_leaf_double.cl, to be built in place
of the kernel through FUSION_KERNEL_OVERRIDE
(scripts/cholesky_leaf_variants_gpu.sh). The results of a cut variant are
wrong; only its time counts. No variant records a failed pivot, so a wrong
block never stops the leaves after it (`full` is the kernel with only that
change, the control).

    python3 scripts/cholesky_leaf_parts.py OUT
"""

import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
SOURCE = (HERE.parent / "kernels" / "cl" / "cholesky.cl").read_text()

NO_FAILURE = (
    "        failed = 1;\n"
    "        if (first_group) {\n"
    "          atomic_min(first_failure, index_base + b + bad);\n"
    "        }\n",
    "",
)

# variant: the edits (old, new) after NO_FAILURE; each old text must occur once.
VARIANTS = {
    "full": [],
    # Only the launch and the first-failure read.
    "empty": [("  if (t == 0) {\n    failed = 0;\n  }\n", "  return;\n")],
    # The diagonal block's load into local memory, nothing after.
    "load": [
        (
            "  barrier(CLK_LOCAL_MEM_FENCE);\n  for (int b = 0; b < LEAF;",
            "  barrier(CLK_LOCAL_MEM_FENCE);\n  return;\n  for (int b = 0; b < LEAF;",
        )
    ],
    # Load, the blocked factorization, the factor's and the zeros' stores.
    "factor": [("  if (below == 0) {\n    return;\n  }\n", "  return;\n")],
    # Everything but the L21 product.
    "inverse": [
        (
            "for (int row0 = get_group_id(0) * LEAF; row0 < below;",
            "for (int row0 = get_group_id(0) * LEAF; row0 < 0;",
        )
    ],
    # Everything but the blocked factorization of the diagonal block.
    "nofactor": [("for (int b = 0; b < LEAF; b += FACTOR_BLOCK)", "for (int b = LEAF; b < LEAF; b += FACTOR_BLOCK)")],
    # The blocked factorization without its shuffled diagonal blocks.
    "noshuffle": [("    if (t < 32) {\n      // Lane t", "    if (t < 0) {\n      // Lane t")],
}


def main() -> None:
    out = pathlib.Path(sys.argv[1])
    base = SOURCE
    assert base.count(NO_FAILURE[0]) == 1, "failure record not found"
    base = base.replace(*NO_FAILURE)
    for name, edits in VARIANTS.items():
        text = base
        for old, new in edits:
            assert text.count(old) == 1, f"{name}: {old!r} occurs {text.count(old)} times"
            text = text.replace(old, new)
        folder = out / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "cholesky_leaf_double.cl").write_text(
            "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" + text
        )
        print(name)


if __name__ == "__main__":
    main()
