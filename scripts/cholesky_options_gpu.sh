#!/bin/bash
# Issue #37, one lease: Cholesky leaf variants chosen by build options
# (FUSION_CL_OPTIONS, no rebuild), OPTIONS separated by ';' (default: as
# built, and `-D L21_LOADS=8`, the loads in flight of the L21 product before
# 2026-11-28). Two rounds alternating (`--suite seeds --figures 5` at SIZES),
# then cuSOLVER in the same lease and the linalg Cholesky tests with the last
# variant. Here: release bench_report (and linalg_tests) in .gpu/ (or
# .gpu/bins.tgz). There: bash scripts/cholesky_options_gpu.sh.
source "$(dirname "$0")/lease.sh"
export FUSION_DEVICE=nvidia
[ -f "$bin/bins.tgz" ] && tar xzf "$bin/bins.tgz" -C "$bin"
W=$OUT/chol
mkdir -p $W
sizes="${SIZES-2048 4096 8192 16384}"
IFS=';' read -r -a variants <<< "${OPTIONS-;-D L21_LOADS=8}"
for round in 1 2; do
  for v in "${!variants[@]}"; do
    echo "== cholesky, options '${variants[$v]}', round $round" >> $S
    FUSION_CL_OPTIONS="${variants[$v]}" timeout 150 "$bin/bench_report" --suite seeds --figures 5 \
      --cholesky-sizes ${sizes// /,} --no-baselines --reps 10 --out "$W/v$v-$round" \
      > "$W/v$v-$round.log" 2>&1
    echo "rc=$?" >> $S
    grep "| [0-9]" "$W/v$v-$round/report.md" >> $S
    cp "$W/v$v-$round/report.md" "$OUT/cholesky-v$v-$round.md"
  done
done
echo "== cuSOLVER / torch backward" >> $S
timeout 150 python3 "$here/cholesky_adjoint_reference.py" "$OUT/torch.json" $sizes >> $S 2>&1
echo "rc=$?" >> $S
W=/tmp/tests; mkdir -p $W
(export FUSION_CL_OPTIONS="${variants[-1]}"; run_tests "linalg_tests cholesky")
cp $W/*.txt "$OUT/" 2>/dev/null
cat $S
