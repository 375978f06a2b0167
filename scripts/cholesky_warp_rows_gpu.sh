#!/bin/bash
# Issue #37, one lease: the Cholesky leaf before (.gpu/old/bench_report) and
# after (.gpu/bench_report) a change, two rounds alternating (`--suite seeds
# --figures 5` at SIZES), cuSOLVER in the same lease, then the linalg
# Cholesky tests of the new build (linalg_tests). Here: .gpu/bins.tgz.
# There: bash scripts/cholesky_warp_rows_gpu.sh.
source "$(dirname "$0")/lease.sh"
export FUSION_DEVICE=nvidia
[ -f "$bin/bins.tgz" ] && tar xzf "$bin/bins.tgz" -C "$bin"
W=/tmp/chol
mkdir -p $W
sizes="${SIZES-512 1024 2048 4096 8192 16384}"
W=/tmp/tests; mkdir -p $W
run_tests "linalg_tests cholesky"
for round in 1 2; do
  for build in old new; do
    echo "== cholesky, $build build, round $round" >> $S
    folder=$bin; [ $build = old ] && folder=$bin/old
    timeout 150 "$folder/bench_report" --suite seeds --figures 5 \
      --cholesky-sizes ${sizes// /,} --no-baselines --reps 10 --out "$W/$build-$round" \
      > "$W/$build-$round.log" 2>&1
    echo "rc=$?" >> $S
    grep "| [0-9]" "$W/$build-$round/report.md" >> $S
    cp "$W/$build-$round/report.md" "$OUT/cholesky-$build-$round.md"
  done
done
echo "== cuSOLVER / torch backward" >> $S
timeout 150 python3 "$here/cholesky_adjoint_reference.py" "$OUT/torch.json" $sizes >> $S 2>&1
echo "rc=$?" >> $S
cp $W/*.txt "$OUT/" 2>/dev/null
cat $S
