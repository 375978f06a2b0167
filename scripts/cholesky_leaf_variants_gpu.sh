#!/bin/bash
# Issue #37, one lease: the Cholesky leaf as built (one warp factors each
# half of the diagonal block by shuffles) and, through
# FUSION_KERNEL_OVERRIDE, variants of its source in .gpu/<variant>/ (the
# work-group path, `#undef WARP_SHUFFLE`, in portable/; VARIANTS names
# them); each timed by `--suite seeds --figures 5` at SIZES with a kernel
# profile, and the leaf's ptxas report (registers, spills). SKIP_CHECKS=1
# skips the tests and the report. The linalg Cholesky tests first
# (.gpu/linalg_tests, debug, stripped). There: bash
# scripts/cholesky_leaf_variants_gpu.sh.
source "$(dirname "$0")/lease.sh"
W=$OUT/leaf
mkdir -p $W
[ -z "$SKIP_CHECKS" ] && run_tests "linalg_tests cholesky"
if [ -z "$SKIP_CHECKS" ]; then
  echo "== ptxas" >> $S
  FUSION_CACHE_DIR=off FUSION_BUILD_LOG=$W/log FUSION_CL_OPTIONS=-cl-nv-verbose FUSION_DEVICE=nvidia \
    timeout 120 "$bin/bench_report" --suite seeds --figures 5 --quick --no-baselines --reps 1 \
    --out "$W/verbose" > "$W/verbose.log" 2>&1
  grep -h -A3 "cholesky_leaf" $W/log/cholesky_leaf*.log | grep -E "registers|spill|Function" | head -8 >> $S
fi
for variant in ${VARIANTS-built portable}; do
  unset FUSION_KERNEL_OVERRIDE
  [ $variant != built ] && export FUSION_KERNEL_OVERRIDE="$bin/$variant"
  echo "== figure 5, $variant" >> $S
  FUSION_PROFILING=1 FUSION_CACHE_DIR=off FUSION_DEVICE=nvidia timeout 150 \
    "$bin/bench_report" --suite seeds --figures 5 --cholesky-sizes ${SIZES-2048,4096,8192} \
    --no-baselines --reps 5 --out "$W/$variant" > "$W/$variant.log" 2>&1
  echo "rc=$?" >> $S
  grep "| [0-9]" "$W/$variant/report.md" >> $S
  grep -E "^## |cholesky leaf|launches; span" "$W/$variant/profiles.md" >> $S
done
unset FUSION_KERNEL_OVERRIDE
rm -f "$W"/*/*.png
cat $S
