#!/bin/bash
# Bound replays (#35): a replay issues each recorded launch (a whole sweep
# among them) on a kernel object of its own, its arguments set once.
# `FUSION_BIND_REPLAYS` 0 / 1 alternating in one lease: the dist suite's
# diamonds call and round of four interleaved (twice each), their profiles,
# and whole 4-chain runs. There (device tool, carry .gpu):
#   bash scripts/bind_gpu.sh bench; ... runs; ... tests
source "$(dirname "$0")/lease.sh"
export FUSION_DEVICE=nvidia
[ -f "$bin/bins.tgz" ] && tar xzf "$bin/bins.tgz" -C "$bin"
if [ "$1" = bench ]; then
{
  for round in 1 2; do
    for bind in 0 1; do
      out="$OUT/dist-bind$bind-$round"
      FUSION_BIND_REPLAYS=$bind timeout 200 "$bin/bench_report" --suite dist --reps 25 --out "$out" > /dev/null 2>&1
      echo "== dist, bind $bind, round $round: rc=$?"
      grep -A6 "## diamonds" "$out/report.md" | grep "^| 5000"
      cp "$out/report.md" "$OUT/dist-bind$bind-$round.md"; rm -rf "$out"
    done
  done
  for bind in 0 1; do
    FUSION_BIND_REPLAYS=$bind FUSION_PROFILING=1 timeout 200 "$bin/bench_report" --suite dist --reps 5 --out "$OUT/profiles-bind$bind" > /dev/null 2>&1
    echo "== profiles, bind $bind: rc=$?"
    cp "$OUT/profiles-bind$bind/profiles.md" "$OUT/profiles-bind$bind.md"; rm -rf "$OUT/profiles-bind$bind"
  done
} >> "$S" 2>&1
fi
if [ "$1" = runs ]; then
  # Whole runs, rebuilt then bound: chains_gpu.sh's loop (logs EXAMPLE-MODE-ROUND.log).
  MODES="rebuilt bound" EXAMPLES="${EXAMPLES:-regression eight_schools}" bash "$here/chains_gpu.sh" runs > /dev/null
fi
if [ "$1" = tests ]; then
W=/tmp/tests; mkdir -p $W
run_tests "rev_tests rev_replay::" "runtime_tests sweeps::" "runtime_tests small_writes::" \
  "nuts_tests interleave::" "nuts_tests front_end::"
cp $W/*.txt "$OUT/" 2>/dev/null
fi
cat "$S"
