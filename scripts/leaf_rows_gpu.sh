#!/bin/bash
# Issue #37, the final A/B of a Cholesky change (one lease; first for the
# leaf's rows below by substitution, then its trailing tiles): the
# linalg and side-queue tests, the Cholesky, its adjoint, cuSOLVER, the GP
# gradient and JAX with the build before the change (.gpu/old/bench_report)
# and after (.gpu/bench_report) alternating (scripts/cholesky_ab_gpu.sh);
# the new build's Cholesky kernel profile at n = 2048 to 16384; then the
# GLM and fused-expression suites of both builds alternating, two rounds.
# Device tool, carry .gpu: bash scripts/leaf_rows_gpu.sh
bash "$(dirname "$0")/cholesky_ab_gpu.sh" > /dev/null
source "$(dirname "$0")/lease.sh"
export FUSION_DEVICE=nvidia
echo "== profile, new build" >> $S
FUSION_PROFILING=1 timeout 150 "$bin/bench_report" --suite seeds --figures 5 \
  --cholesky-sizes 2048,4096,8192,16384 --no-baselines --reps 5 --out /tmp/leaf-profile > /dev/null 2>&1
echo "rc=$?" >> $S
cp /tmp/leaf-profile/profiles.md "$OUT/profiles.md"
suites_ab
cat $S
