#!/bin/bash
# Sweeps (#35): launches of one work-group wait and run as one kernel
# (`FUSION_SWEEPS`). One lease: `bench_report --suite dist` with sweeps off
# and on, alternating, two rounds; the JAX / PyTorch peers once; a profiled
# run (a kernel timeline per call); whole 4-chain runs of eight_schools and
# regression with sweeps off and on; then the test binaries copied into
# .gpu/ (or packed in .gpu/bins.tgz; sweeps are on by default on the GPU, so they soak them). The rows
# that matter land in the summary, the reports in $OUT. There (device tool,
# carry .gpu), in calls within the tool's 10 minutes each:
#   bash scripts/sweeps_gpu.sh bench; ... runs; ... tests
source "$(dirname "$0")/lease.sh"
export FUSION_DEVICE=nvidia
# The binaries travel packed (the carry's 64 MiB): .gpu/bins.tgz.
[ -f "$bin/bins.tgz" ] && tar xzf "$bin/bins.tgz" -C "$bin"
rows() {
  grep -E "^## |^\| 10000000 \| clfuse|^\| 5000 |^\| 1000000 \| clfuse::dist::normal|^\| 10000000 \| clEnqueueCopyBuffer" "$1"
}
if [ "$1" = bench ]; then
{
  for round in 1 2; do
    for sweeps in 0 1; do
      echo "== FUSION_SWEEPS=$sweeps, round $round"
      FUSION_SWEEPS=$sweeps timeout 150 "$bin/bench_report" --suite dist --reps 25 \
        --out "/tmp/dist-$sweeps-$round" > "/tmp/dist-$sweeps-$round.log" 2>&1
      echo "rc=$?"
      cp "/tmp/dist-$sweeps-$round/report.md" "$OUT/dist-sweeps$sweeps-$round.md"
      rows "$OUT/dist-sweeps$sweeps-$round.md"
    done
  done
  echo "== peers"
  timeout 150 python3 "$here/dist_reference.py" "$OUT/peers.json"
  echo "rc=$?"
  echo "== profiled (FUSION_PROFILING=1, sweeps on)"
  FUSION_PROFILING=1 timeout 120 "$bin/bench_report" --suite dist --reps 5 --out /tmp/dist-profile \
    > /tmp/dist-profile.log 2>&1
  echo "rc=$?"
  cp /tmp/dist-profile/profiles.md "$OUT/profiles.md"
} >> "$S" 2>&1
fi
if [ "$1" = runs ]; then
{
  for example in eight_schools regression; do
    for sweeps in 0 1; do
      [ -x "$bin/$example" ] || continue
      echo "== $example, FUSION_SWEEPS=$sweeps"
      FUSION_SWEEPS=$sweeps timeout 150 "$bin/$example" > "$OUT/$example-sweeps$sweeps.log" 2>&1
      echo "rc=$?"
      grep "whole run\|divergent\|R-hat\|rhat" "$OUT/$example-sweeps$sweeps.log" | head -5
    done
  done
} >> "$S" 2>&1
fi
if [ "$1" = tests ]; then
W=/tmp/tests; mkdir -p $W
run_tests "runtime_tests sweeps::" "rev_tests rev_" "dist_tests dist" "ops_tests ops_"
cp $W/*.txt "$OUT/" 2>/dev/null
fi
cat "$S"
