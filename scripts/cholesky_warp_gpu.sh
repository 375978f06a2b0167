#!/bin/bash
# Issue #37, one lease: the Cholesky leaf whose diagonal block one warp
# factors by shuffles. The linalg test binary's Cholesky tests and the dist
# binary's multi_normal tests first (debug builds, stripped, in .gpu/ as
# linalg_tests and dist_tests, when there), then the Cholesky (`--suite
# seeds --figures 5`, two rounds) against cuSOLVER and PyTorch's backward
# (cholesky_adjoint_reference.py), the GP (`--suite seeds --figures 7`)
# against JAX, and one profiled Cholesky round. Here: release bench_report in .gpu/. There: bash
# scripts/cholesky_warp_gpu.sh.
source "$(dirname "$0")/lease.sh"
W=$OUT/chol
mkdir -p $W
run_tests "linalg_tests cholesky" "dist_tests multi_normal"
sizes="${SIZES-2048 4096 8192 16384}"
echo "== cholesky (figure 5), two rounds" >> $S
for round in 1 2; do
  FUSION_DEVICE=nvidia timeout 150 "$bin/bench_report" --suite seeds --figures 5 \
    --cholesky-sizes ${sizes// /,} --no-baselines --reps 10 --out "$W/cholesky-$round" \
    > "$W/cholesky-$round.log" 2>&1
  echo "rc=$?" >> $S
  grep "| [0-9]" "$W/cholesky-$round/report.md" >> $S
done
cp "$W/cholesky-1/report.md" "$OUT/cholesky.md"
echo "== cuSOLVER / torch backward" >> $S
timeout 150 python3 "$here/cholesky_adjoint_reference.py" "$OUT/torch.json" $sizes >> $S 2>&1
echo "rc=$?" >> $S
echo "== GP" >> $S
FUSION_DEVICE=nvidia timeout 200 "$bin/bench_report" --suite seeds --figures 7 \
  --gp-sizes 500,2000,4000,10000 --gp-runs 0 --no-baselines --reps 15 \
  --out "$W/gp" > "$W/gp.log" 2>&1
echo "rc=$?" >> $S
grep "| [0-9]" "$W/gp/report.md" >> $S
cp "$W/gp/report.md" "$OUT/gp.md"
echo "== jax" >> $S
timeout 150 python3 "$here/gp_reference.py" "$OUT/jax.json" 500 2000 4000 10000 2>&1 | grep value_and_grad >> $S
echo "== profile" >> $S
FUSION_PROFILING=1 FUSION_DEVICE=nvidia timeout 150 "$bin/bench_report" --suite seeds --figures 5 \
  --cholesky-sizes ${sizes// /,} --no-baselines --reps 3 --out "$W/profile" > "$W/profile.log" 2>&1
echo "rc=$?" >> $S
grep -E "^## |cholesky leaf|launches; span" "$W/profile/profiles.md" >> $S
cp "$W/profile/profiles.md" "$OUT/profiles.md"
rm -f "$W"/*/*.png
cat $S
