#!/bin/bash
# Batched chains (#35): interleaved chains whose replays are launched
# together (`ReplayBatch`, FUSION_BATCH_CHAINS). One lease (device tool,
# carry .gpu):
#   bash scripts/batch_gpu.sh tests   the batch, interleave, replay and sweep tests
#   bash scripts/batch_gpu.sh runs    whole 4-chain runs, FUSION_BATCH_CHAINS 0 / 1
#   bash scripts/batch_gpu.sh bench   the dist suite (a call, a round of four) and profiles, 0 / 1
# then `bash scripts/chains_gpu.sh peers` for NumPyro in the same lease.
# AB and TAG name another variable for `bench` (scripts/compact_gpu.sh).
source "$(dirname "$0")/lease.sh"
export FUSION_DEVICE=nvidia
[ -f "$bin/bins.tgz" ] && tar xzf "$bin/bins.tgz" -C "$bin"
if [ "$1" = tests ]; then
  replay_tests
  cat "$S"
fi
if [ "$1" = runs ]; then
  MODES="${MODES:-unbatched batched}" ROUNDS=${ROUNDS:-2} bash "$here/chains_gpu.sh" runs
fi
if [ "$1" = bench ]; then
  dist_ab "${AB:-FUSION_BATCH_CHAINS}" "${TAG:-batch}"
  cat "$S"
fi
