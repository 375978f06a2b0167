#!/bin/bash
# Deferred check verdicts (one host wait per gradient evaluation) measured
# against the session's starting point in one lease: `bench_report --suite
# dist` of the commit before (.gpu/bench_report_old) and after
# (.gpu/bench_report), alternating, each round followed by the JAX and
# PyTorch peers (scripts/dist_reference.py); then the `regression` example's
# whole 4-chain run, before and after. Here: build both into .gpu/. There
# (device tool, carry .gpu): bash scripts/deferred_checks_gpu.sh
# Everything lands in $OUT/deferred.tar.gz and $OUT/summary.txt.
source "$(dirname "$0")/lease.sh"
W=$(mktemp -d)
export FUSION_DEVICE=nvidia
for round in 1 2; do
  for which in old new; do
    b="$bin/bench_report"; [ $which = old ] && b="$bin/bench_report_old"
    echo "== $which round $round" >> $S
    timeout 120 "$b" --suite dist --reps 25 --out "$W/$which-$round" > "$W/$which-$round.log" 2>&1
    echo "rc=$?" >> $S
    grep "^|" "$W/$which-$round/report.md" | grep -v "^| workload\|^|---" >> $S
  done
  echo "== peers round $round" >> $S
  timeout 150 python3 "$here/dist_reference.py" "$W/peers-$round.json" >> $S 2>&1
  echo "rc=$?" >> $S
done
echo "== profile (new)" >> $S
FUSION_PROFILING=1 timeout 90 "$bin/bench_report" --suite dist --out "$W/profile" > "$W/profile.log" 2>&1
echo "rc=$?" >> $S
for which in old new; do
  r="$bin/regression"; [ $which = old ] && r="$bin/regression_old"
  echo "== regression whole run, $which" >> $S
  /usr/bin/time -f "wall %e s" timeout 200 "$r" > "$W/regression-$which.log" 2>&1
  echo "rc=$?" >> $S
  tail -8 "$W/regression-$which.log" >> $S
done
tar czf "$OUT/deferred.tar.gz" -C "$W" .
