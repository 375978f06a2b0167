#!/bin/bash
# Replay prologues (#35): a replayed sweep runs the position write queued
# before it as its first step (FUSION_REPLAY_PROLOGUES). One lease (device
# tool, carry .gpu):
#   bash scripts/prologue_gpu.sh tests   the batch, replay, sweep and interleave tests
#   bash scripts/prologue_gpu.sh bench   the dist suite (a call, a round of four) and profiles, 0 / 1
#   bash scripts/prologue_gpu.sh runs    whole 4-chain runs, FUSION_REPLAY_PROLOGUES 0 / 1
# then `bash scripts/chains_gpu.sh peers` for NumPyro in the same lease.
AB=FUSION_REPLAY_PROLOGUES TAG=prologue MODES="${MODES:-unprologued prologued}" \
  exec bash "$(dirname "$0")/batch_gpu.sh" "$@"
