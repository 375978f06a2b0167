#!/bin/bash
# Issue #36, what bounds the two-GPU speed-ups, one lease on a two-GPU
# machine (nvidia-h200-x2 or nvidia-h100-x2): the data-parallel bernoulli GLM
# at the issue's shapes and at half their rows (one GPU's time at half the
# rows is what a split into two halves can reach at best), then whole
# 8-chain NUTS runs (200 + 200) at (1e6, 100) (unbatched, batched, chains over two,
# rows split over two). There (device tool, carry .gpu):
# bash scripts/two_gpu_bounds_gpu.sh. Summary in $OUT/summary.txt.
source "$(dirname "$0")/lease.sh"
export FUSION_PLATFORM=nvidia FUSION_DEVICE=0
echo "== data-parallel GLM, full and half rows" >> $S
timeout 240 "$bin/bench_report" --suite host --first-call-runs 1 --devices 0,1 \
  --glm-shapes 1e4x10,5e6x10,1e7x10,5e5x100,1e6x100 --out "$OUT/host" > "$OUT/host.log" 2>&1
echo "rc=$?" >> $S
grep -A20 "split across" "$OUT/host/report.md" | grep "^|\|^##" >> $S
echo "== whole runs at (1e6, 100)" >> $S
timeout 300 "$bin/bench_report" --suite chains --devices 0,1 --glm-shapes 1e6x100 \
  --run-shape 1e6x100 --run-length 200x200 --out "$OUT/chains" > "$OUT/chains.log" 2>&1
echo "rc=$?" >> $S
grep "^|" "$OUT/chains/report.md" >> $S
rm -f "$OUT"/*/*.png
