#!/bin/bash
# #35's one-step-fewer log-Jacobians (d0e70e1) measured: `bench_report
# --suite dist` of 7bb63a5 (before, .gpu/bench_before) and of this build
# (.gpu/bench_report), alternating, two rounds, one lease; the diamonds and
# scalar-parameter rows of each run land in the summary, every report in $OUT.
# There (device tool, carry .gpu): bash scripts/params_ab_gpu.sh
source "$(dirname "$0")/lease.sh"
export FUSION_DEVICE=nvidia
{
  for round in 1 2; do
    for b in bench_before bench_report; do
      echo "== $b, round $round"
      timeout 80 "$bin/$b" --suite dist --reps 25 --out "/tmp/dist-$b-$round" > "/tmp/dist-$b-$round.log" 2>&1
      echo "rc=$?"
      cp "/tmp/dist-$b-$round/report.md" "$OUT/dist-$b-$round.md"
      grep -A5 "^## diamonds" "$OUT/dist-$b-$round.md" | grep -E "^\| 5000"
    done
  done
} >> "$S" 2>&1
cat "$S"
