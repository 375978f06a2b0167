#!/bin/bash
# Batched chains (#35): interleaved chains whose replays are launched
# together (`ReplayBatch`, FUSION_BATCH_CHAINS). One lease (device tool,
# carry .gpu):
#   bash scripts/batch_gpu.sh tests   the batch, interleave, replay and sweep tests
#   bash scripts/batch_gpu.sh runs    whole 4-chain runs, FUSION_BATCH_CHAINS 0 / 1
#   bash scripts/batch_gpu.sh bench   the dist suite (a call, a round of four) and profiles, 0 / 1
# then `bash scripts/chains_gpu.sh peers` for NumPyro in the same lease.
source "$(dirname "$0")/lease.sh"
export FUSION_DEVICE=nvidia
[ -f "$bin/bins.tgz" ] && tar xzf "$bin/bins.tgz" -C "$bin"
if [ "$1" = tests ]; then
  W=/tmp/tests; mkdir -p $W
  run_tests "core_tests chain_batch" "nuts_tests interleave" "rev_tests rev_replay" \
    "runtime_tests sweeps" "nuts_tests front_end"
  cp $W/*.txt "$OUT/" 2>/dev/null
  cat "$S"
fi
if [ "$1" = runs ]; then
  MODES="${MODES:-unbatched batched}" ROUNDS=${ROUNDS:-2} bash "$here/chains_gpu.sh" runs
fi
if [ "$1" = bench ]; then
{
  # The dist suite's diamonds call and round of four interleaved,
  # FUSION_BATCH_CHAINS 0 / 1 alternating twice, then each one's profiles.
  for round in 1 2; do
    for batch in 0 1; do
      out="$OUT/dist-batch$batch-$round"
      FUSION_BATCH_CHAINS=$batch timeout 200 "$bin/bench_report" --suite dist --reps 25 --out "$out" > /dev/null 2>&1
      echo "== dist, batch $batch, round $round: rc=$?"
      grep -A6 "## diamonds" "$out/report.md" | grep "^| 5000"
      cp "$out/report.md" "$OUT/dist-batch$batch-$round.md"; rm -rf "$out"
    done
  done
  for batch in 0 1; do
    FUSION_BATCH_CHAINS=$batch FUSION_PROFILING=1 timeout 200 "$bin/bench_report" --suite dist --reps 5 --out "$OUT/profiles-batch$batch" > /dev/null 2>&1
    echo "== profiles, batch $batch: rc=$?"
    cp "$OUT/profiles-batch$batch/profiles.md" "$OUT/profiles-batch$batch.md"; rm -rf "$OUT/profiles-batch$batch"
  done
} >> "$S" 2>&1
cat "$S"
fi
