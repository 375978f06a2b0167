#!/bin/bash
# Compact launches (#35): a replayed launch of many arguments takes its
# scalars from a table and each repeated buffer once
# (FUSION_COMPACT_LAUNCHES). One lease (device tool, carry .gpu):
#   bash scripts/compact_gpu.sh tests   the batch, interleave, replay and sweep tests
#   bash scripts/compact_gpu.sh bench   the dist suite (a call, a round of four) and profiles, 0 / 1
#   bash scripts/compact_gpu.sh runs    whole 4-chain runs, FUSION_COMPACT_LAUNCHES 0 / 1
# then `bash scripts/chains_gpu.sh peers` for NumPyro in the same lease.
AB=FUSION_COMPACT_LAUNCHES TAG=compact MODES="${MODES:-uncompacted compacted}" \
  exec bash "$(dirname "$0")/batch_gpu.sh" "$@"
