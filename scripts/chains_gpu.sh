#!/bin/bash
# Chains (#35): a device's chains interleaved from one thread
# (`Sampler::interleave`) or on threads of their own. One lease: whole
# 4-chain runs of eight_schools and regression in each mode; NumPyro's runs
# of the same models on the GPU and the CPU; the interleave, front-end,
# sweep and replay tests. There (device tool, carry .gpu):
#   bash scripts/chains_gpu.sh runs; ... peers; ... tests
source "$(dirname "$0")/lease.sh"
export FUSION_DEVICE=nvidia
[ -f "$bin/bins.tgz" ] && tar xzf "$bin/bins.tgz" -C "$bin"
if [ "$1" = runs ]; then
{
  # ROUNDS (default 1), EXAMPLES, MODES and ARGS (the examples' flags)
  # widen or narrow it. Modes: chains interleaved from one thread (the
  # default) or on threads of their own (--threaded); bound and rebuilt:
  # interleaved with FUSION_BIND_REPLAYS=1 / 0; batched and unbatched:
  # interleaved with FUSION_BATCH_CHAINS=1 / 0; compacted and uncompacted:
  # interleaved with FUSION_COMPACT_LAUNCHES=1 / 0; arena and apart:
  # interleaved with FUSION_ARENA=1 / 0; before and after: the build in
  # .gpu/old/ and the one in .gpu/.
  for round in $(seq ${ROUNDS:-1}); do
    for example in ${EXAMPLES:-eight_schools regression}; do
      for mode in ${MODES:-interleaved threaded}; do
        [ -x "$bin/$example" ] || continue
        log="$OUT/$example-$mode-$round.log"
        echo "== $example, $mode, round $round"
        case $mode in
          interleaved) timeout 140 "$bin/$example" $ARGS > "$log" 2>&1 ;;
          threaded) timeout 140 "$bin/$example" --threaded $ARGS > "$log" 2>&1 ;;
          # Interleaved, replays bound or rebuilt (FUSION_BIND_REPLAYS).
          bound) FUSION_BIND_REPLAYS=1 timeout 140 "$bin/$example" $ARGS > "$log" 2>&1 ;;
          rebuilt) FUSION_BIND_REPLAYS=0 timeout 140 "$bin/$example" $ARGS > "$log" 2>&1 ;;
          # Interleaved, the round's replays batched or not (FUSION_BATCH_CHAINS).
          batched) FUSION_BATCH_CHAINS=1 timeout 140 "$bin/$example" $ARGS > "$log" 2>&1 ;;
          unbatched) FUSION_BATCH_CHAINS=0 timeout 140 "$bin/$example" $ARGS > "$log" 2>&1 ;;
          # Interleaved, bound launches compacted or not (FUSION_COMPACT_LAUNCHES).
          compacted) FUSION_COMPACT_LAUNCHES=1 timeout 140 "$bin/$example" $ARGS > "$log" 2>&1 ;;
          uncompacted) FUSION_COMPACT_LAUNCHES=0 timeout 140 "$bin/$example" $ARGS > "$log" 2>&1 ;;
          # Interleaved, small buffers carved from parents or apart (FUSION_ARENA).
          arena) FUSION_ARENA=1 timeout 140 "$bin/$example" $ARGS > "$log" 2>&1 ;;
          apart) FUSION_ARENA=0 timeout 140 "$bin/$example" $ARGS > "$log" 2>&1 ;;
          # Interleaved, the build before the change (.gpu/old/) or this one.
          before) timeout 140 "$bin/old/$example" $ARGS > "$log" 2>&1 ;;
          after) timeout 140 "$bin/$example" $ARGS > "$log" 2>&1 ;;
        esac
        echo "rc=$?"
        grep "whole run\|R-hat" "$log" | head -3
      done
    done
  done
} >> "$S" 2>&1
fi
if [ "$1" = peers ]; then
{
  for backend in gpu cpu; do
    echo "== NumPyro, $backend"
    timeout 200 python3 "$here/models_reference.py" $backend > "$OUT/numpyro-$backend.txt" 2>&1
    echo "rc=$?"
    tail -8 "$OUT/numpyro-$backend.txt"
  done
} >> "$S" 2>&1
fi
if [ "$1" = tests ]; then
W=/tmp/tests; mkdir -p $W
run_tests "runtime_tests sweeps::" "runtime_tests small_writes::" \
  "runtime_tests soundness_threads::" "rev_tests rev_replay::" "nuts_tests front_end::" "nuts_tests interleave::"
cp $W/*.txt "$OUT/" 2>/dev/null
fi
cat "$S"
