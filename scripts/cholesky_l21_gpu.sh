#!/bin/bash
# Issue #37, one lease: the Cholesky leaf's rows below (L21) as built and as
# variants of its source in .gpu/<variant>/ (FUSION_KERNEL_OVERRIDE; e.g.
# old_kernel/, the source before the change, and those that the
# generators in docs/benchmarks/h200-2026-11-29-leaf-rows/ write): each
# variant's ptxas report
# (registers, spills), the linalg Cholesky tests with it, then
# `--suite seeds --figures 5` at SIZES with a kernel profile. A variant
# bin:DIR runs .gpu/DIR/bench_report instead (another build, as built).
# There: VARIANTS="built old_kernel bin:old ..." bash scripts/cholesky_l21_gpu.sh.
source "$(dirname "$0")/lease.sh"
export FUSION_DEVICE=nvidia FUSION_CACHE_DIR=off
W=/tmp/l21
mkdir -p $W
for variant in ${VARIANTS-built old_kernel}; do
  unset FUSION_KERNEL_OVERRIDE
  report="$bin/bench_report"
  case $variant in
    built) ;;
    bin:*) report="$bin/${variant#bin:}/bench_report" ;;
    *) export FUSION_KERNEL_OVERRIDE="$bin/$variant" ;;
  esac
  echo "== $variant" >> $S
  rm -rf $W/log-$variant
  FUSION_BUILD_LOG=$W/log-$variant FUSION_CL_OPTIONS=-cl-nv-verbose timeout 120 "$report" \
    --suite seeds --figures 5 --quick --no-baselines --reps 1 --out "$W/verbose-$variant" > /dev/null 2>&1
  grep -h -A3 "cholesky_leaf" $W/log-$variant/cholesky_leaf*.log | grep -E "registers|spill" | head -2 >> $S
  [ -z "$SKIP_TESTS" ] && [[ $variant != bin:* ]] && timeout 200 "$bin/linalg_tests" --test-threads=2 cholesky:: > "$W/tests-$variant.txt" 2>&1
  grep -E "test result|panicked" "$W/tests-$variant.txt" 2>/dev/null | head -4 >> $S
  FUSION_PROFILING=1 timeout 150 "$report" --suite seeds --figures 5 \
    --cholesky-sizes ${SIZES-2048,4096,8192,16384} --no-baselines --reps 5 --out "$W/$variant" > "$W/$variant.log" 2>&1
  echo "rc=$?" >> $S
  grep "| [0-9]" "$W/$variant/report.md" | cut -d'|' -f2,4 >> $S
  grep -E "^## |: cholesky_leaf|k <= 64|launches; span" "$W/$variant/profiles.md" >> $S
done
unset FUSION_KERNEL_OVERRIDE
cat $S
