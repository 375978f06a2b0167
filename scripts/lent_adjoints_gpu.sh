#!/bin/bash
# #34's vector-parameter densities with the partials stored in the
# parameters' adjoints (`FUSION_LEND_ADJOINTS`), measured: `bench_report
# --suite dist` with the knob off and on, alternating, two rounds, and the
# JAX / PyTorch peers after each round, in one lease; then one profiled run
# (a kernel timeline per call); then the rev tests. The rows that matter land in the summary,
# the reports in $OUT. There (device tool, carry .gpu):
#   bash scripts/lent_adjoints_gpu.sh
source "$(dirname "$0")/lease.sh"
export FUSION_DEVICE=nvidia
rows() {
  grep -E "^## |^\| 1000000 \| clfuse|^\| 10000000 \| clfuse|^\| 5000 |^\| 1000000 \| clfuse::dist::normal|^\| 10000000 \| clEnqueueCopyBuffer" "$1"
}
{
  for round in 1 2; do
    for lend in 0 1; do
      echo "== FUSION_LEND_ADJOINTS=$lend, round $round"
      FUSION_LEND_ADJOINTS=$lend timeout 120 "$bin/bench_report" --suite dist --reps 25 \
        --out "/tmp/dist-$lend-$round" > "/tmp/dist-$lend-$round.log" 2>&1
      echo "rc=$?"
      cp "/tmp/dist-$lend-$round/report.md" "$OUT/dist-lend$lend-$round.md"
      rows "$OUT/dist-lend$lend-$round.md"
    done
    echo "== peers, round $round"
    timeout 150 python3 "$here/dist_reference.py" "$OUT/peers-$round.json"
    echo "rc=$?"
  done
  echo "== profiled (FUSION_PROFILING=1, lending on)"
  FUSION_PROFILING=1 timeout 90 "$bin/bench_report" --suite dist --reps 5 --out /tmp/dist-profile \
    > /tmp/dist-profile.log 2>&1
  echo "rc=$?"
  cp /tmp/dist-profile/profiles.md "$OUT/profiles.md"
} >> "$S" 2>&1
# The reverse-mode tests on the GPU (the debug test binary, when copied
# into .gpu/ as rev_tests).
W=/tmp/tests; mkdir -p $W
run_tests "rev_tests rev_"
cp $W/*.txt "$OUT/" 2>/dev/null
cat "$S"
