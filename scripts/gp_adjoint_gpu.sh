#!/bin/bash
# Issue #37, one lease: the Cholesky and its adjoint's schedules at GP sizes
# (`bench_report --suite cholesky`) against cuSOLVER and PyTorch's Cholesky
# backward; the GP value and gradient (paper Figure 7, `--suite seeds
# --figures 7`) of the kept build (bench_report_old) and of the change,
# alternating, against JAX jit(value_and_grad); the fused and GLM suites of
# both builds (nothing else slower; SUITES="" skips them); then one
# profiled call of the change. GP_ONLY=1 skips the Cholesky suite and its
# peers.
# The linalg and rev test binaries run first when copied into .gpu/ (debug
# builds, stripped: linalg_tests, rev_tests). Here: release
# bench_report(_old) in .gpu/. There: bash scripts/gp_adjoint_gpu.sh.
source "$(dirname "$0")/lease.sh"
W=$OUT/gp
mkdir -p $W
for t in linalg_tests rev_tests; do
  [ -x "$bin/$t" ] || continue
  echo "== $t" >> $S
  FUSION_DEVICE=nvidia timeout 300 "$bin/$t" --test-threads=2 > "$W/$t.txt" 2>&1
  grep -E "test result|panicked|FAILED" "$W/$t.txt" | tail -6 >> $S
done
if [ -z "$GP_ONLY" ]; then
  echo "== cholesky suite" >> $S
  FUSION_DEVICE=nvidia timeout 200 "$bin/bench_report" --suite cholesky --reps 10 \
    --out "$W/cholesky" > "$W/cholesky.log" 2>&1
  echo "rc=$?" >> $S
  grep "| [0-9]" "$W/cholesky/report.md" >> $S
  echo "== torch cholesky / backward" >> $S
  timeout 150 python3 "$here/cholesky_adjoint_reference.py" "$W/torch.json" >> $S 2>&1
  echo "rc=$?" >> $S
fi
sizes="--gp-sizes 500,2000,4000,10000 --gp-runs 500 --no-baselines"
for build in new old new old; do
  b="$bin/bench_report"; [ $build = old ] && b="$bin/bench_report_old"
  echo "== GP $build" >> $S
  FUSION_DEVICE=nvidia timeout 150 "$b" --suite seeds --figures 7,e $sizes --reps 15 \
    --out "$W/gp-$build" > "$W/gp-$build.log" 2>&1
  echo "rc=$?" >> $S
  grep "| [0-9]" "$W/gp-$build/report.md" | grep -v "whole" >> $S
done
for suite in ${SUITES-fusion glm}; do
  for build in new old; do
    b="$bin/bench_report"; [ $build = old ] && b="$bin/bench_report_old"
    echo "== $suite suite, $build" >> $S
    FUSION_DEVICE=nvidia timeout 200 "$b" --suite $suite --no-baselines --reps 10 \
      --out "$W/$suite-$build" > "$W/$suite-$build.log" 2>&1
    echo "rc=$?" >> $S
    grep "| [0-9]" "$W/$suite-$build/report.md" >> $S
  done
done
echo "== jax" >> $S
timeout 150 python3 "$here/gp_reference.py" "$W/jax.json" 500 2000 4000 10000 >> $S 2>&1
echo "rc=$?" >> $S
echo "== profile" >> $S
FUSION_PROFILING=1 FUSION_DEVICE=nvidia timeout 120 "$bin/bench_report" --suite seeds --figures 7 $sizes \
  --reps 3 --out "$W/profile" > "$W/profile.log" 2>&1
echo "rc=$?" >> $S
cp "$W/profile/profiles.md" "$OUT/profiles.md"
rm -f "$W"/*/*.png
cat $S
