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
  dist_ab FUSION_BIND_REPLAYS bind
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
