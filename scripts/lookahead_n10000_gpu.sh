#!/bin/bash
# Issue #37: the Cholesky (Figure 5) and the GP gradient (Figure 7) at n = 10 000 with
# FUSION_CHOLESKY_LOOKAHEAD 0 and 128 alternating, three rounds. Device tool, carry .gpu:
#   bash scripts/lookahead_n10000_gpu.sh
source "$(dirname "$0")/lease.sh"
export FUSION_DEVICE=nvidia
for round in 1 2 3; do
for v in 0 128; do
  echo "== lookahead=$v round $round" >> $S
  FUSION_CHOLESKY_LOOKAHEAD=$v timeout 100 "$bin/bench_report" --suite seeds --figures 5 --cholesky-sizes 10000 --no-baselines --reps 10 --out /tmp/c$v > /dev/null 2>&1
  grep "| [0-9]" /tmp/c$v/report.md | cut -c1-70 >> $S
  FUSION_CHOLESKY_LOOKAHEAD=$v timeout 100 "$bin/bench_report" --suite seeds --figures 7 --gp-sizes 10000 --gp-runs 0 --no-baselines --reps 10 --out /tmp/g$v > /dev/null 2>&1
  grep "| [0-9]" /tmp/g$v/report.md | grep -v whole | cut -c1-90 >> $S
done
done
cat $S
