#!/bin/bash
# Replays (#35): a sampler's density replays its recorded device work
# (`FUSION_REPLAY`). One lease: `bench_report --suite dist` with replays
# off and on, alternating, two rounds; the JAX peers once; whole 4-chain
# runs of eight_schools and regression with replays off and on; the test
# binaries packed in .gpu/bins.tgz. There (device tool, carry .gpu):
#   bash scripts/replay_gpu.sh bench; ... runs; ... tests
source "$(dirname "$0")/lease.sh"
export FUSION_DEVICE=nvidia
[ -f "$bin/bins.tgz" ] && tar xzf "$bin/bins.tgz" -C "$bin"
rows() {
  grep -E "^## |^\| 5000 |^\| 1000000 \| clfuse::dist::normal" "$1"
}
if [ "$1" = bench ]; then
{
  for round in 1 2; do
    for replay in 0 1; do
      echo "== FUSION_REPLAY=$replay, round $round"
      FUSION_REPLAY=$replay timeout 150 "$bin/bench_report" --suite dist --reps 25 \
        --out "/tmp/dist-$replay-$round" > "/tmp/dist-$replay-$round.log" 2>&1
      echo "rc=$?"
      cp "/tmp/dist-$replay-$round/report.md" "$OUT/dist-replay$replay-$round.md"
      rows "$OUT/dist-replay$replay-$round.md"
    done
  done
  echo "== peers"
  timeout 150 python3 "$here/dist_reference.py" "$OUT/peers.json"
  echo "rc=$?"
} >> "$S" 2>&1
fi
if [ "$1" = runs ]; then
{
  for example in eight_schools regression; do
    for replay in 0 1; do
      [ -x "$bin/$example" ] || continue
      echo "== $example, FUSION_REPLAY=$replay"
      FUSION_REPLAY=$replay timeout 140 "$bin/$example" > "$OUT/$example-replay$replay.log" 2>&1
      echo "rc=$?"
      grep "whole run\|divergent\|R-hat\|rhat" "$OUT/$example-replay$replay.log" | head -5
    done
  done
} >> "$S" 2>&1
fi
if [ "$1" = tests ]; then
W=/tmp/tests; mkdir -p $W
run_tests "rev_tests rev_replay::" "rev_tests rev_params::" "runtime_tests sweeps::" "runtime_tests small_writes::"
cp $W/*.txt "$OUT/" 2>/dev/null
fi
cat "$S"
