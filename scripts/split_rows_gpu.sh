#!/bin/bash
# Issue #36, 8 chains over two GPUs with each batch's rows split over them
# (`Sampler::split_rows`), one lease on a two-GPU machine (nvidia-h200-x2 or
# nvidia-h100-x2): `bench_report --suite chains --devices 0,1` (unbatched,
# batched on one GPU, chains over two, rows over two; per call and whole
# NUTS runs), then its JAX peer (scripts/chains_reference.py) on GPU 0.
# Here: release bench_report in .gpu/. There (device tool, carry .gpu):
# bash scripts/split_rows_gpu.sh. Summary in $OUT/summary.txt, raw beside it.
source "$(dirname "$0")/lease.sh"
export FUSION_PLATFORM=nvidia FUSION_DEVICE=0
for round in ${ROUNDS:-1 2}; do
  echo "== chains, round $round" >> $S
  timeout 280 "$bin/bench_report" --suite chains --devices 0,1 --out "$OUT/chains-$round" \
    > "$OUT/chains-$round.log" 2>&1
  echo "rc=$?" >> $S
  grep "^|" "$OUT/chains-$round/report.md" >> $S
  rm -f "$OUT/chains-$round"/*.png
done
if [ -z "$SKIP_JAX" ]; then
  echo "== JAX" >> $S
  timeout 100 python3 "$here/chains_reference.py" "$OUT/chains-jax.json" >> $S 2>&1
  echo "rc=$?" >> $S
fi
# What one part costs alone: the batched call at half the rows on one GPU.
echo "== half rows, per call only" >> $S
timeout 120 "$bin/bench_report" --suite chains --devices 0,1 --no-runs --glm-shapes 5e3x10,5e5x100 \
  --out "$OUT/chains-half" > "$OUT/chains-half.log" 2>&1
echo "rc=$?" >> $S
grep "^|" "$OUT/chains-half/report.md" >> $S
rm -f "$OUT/chains-half"/*.png
