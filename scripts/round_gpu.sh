#!/bin/bash
# Interleaved rounds (#35): `bench_report --suite dist` times a diamonds call
# alone and a round of four densities interleaved (as `nuts::sample`
# evaluates a GPU's chains), twice; then profiles both (FUSION_PROFILING=1:
# the kernel timeline of a replayed call and of a replayed round). There
# (device tool, carry .gpu): bash scripts/round_gpu.sh
source "$(dirname "$0")/lease.sh"
export FUSION_DEVICE=nvidia
[ -f "$bin/bins.tgz" ] && tar xzf "$bin/bins.tgz" -C "$bin"
{
  for round in 1 2; do
    timeout 200 "$bin/bench_report" --suite dist --reps 25 --out "$OUT/dist-$round" > /dev/null 2>&1
    echo "== dist, round $round: rc=$?"
    grep "diamonds\|^| 5000 " "$OUT/dist-$round/report.md" | grep -i "diamonds\|chains\|normal" | head -8
  done
  FUSION_PROFILING=1 timeout 200 "$bin/bench_report" --suite dist --reps 5 --out "$OUT/profiles" > /dev/null 2>&1
  echo "== profiles: rc=$?"
} >> "$S" 2>&1
cat "$S"
