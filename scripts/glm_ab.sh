#!/usr/bin/env bash
# A/B timing of the fused bernoulli GLM under several configurations in one
# run, alternating them round by round (machine instances differ by ~5%, so
# only same-run comparisons count).
#
# usage: scripts/glm_ab.sh OUT ROUNDS "BINARY|ENV" ...
#   BINARY: a bench_report binary (path); ENV: variables for that run, e.g.
#   "FUSION_ROW_BLOCK_GROUPS_PER_CU=4" or "FUSION_KERNEL_OVERRIDE=variants".
#   SHAPES (environment) picks the GLM shapes, default 1e4x10,1e6x100,1e7x10.
# Prints each configuration's median call time per shape.
set -euo pipefail
out=$1
rounds=$2
shift 2
mkdir -p "$out"
for round in $(seq 1 "$rounds"); do
  for spec in "$@"; do
    IFS='|' read -r binary envs <<< "$spec"
    tag=$(echo "$(basename "$binary")-$envs" | tr -c 'A-Za-z0-9_.-' '_')-$round
    # shellcheck disable=SC2086 # ENV holds several assignments
    env $envs "$binary" --suite glm --no-baselines \
      --glm-shapes "${SHAPES:-1e4x10,1e6x100,1e7x10}" --reps 25 \
      --out "$out/$tag" > "$out/$tag.txt" 2>&1
    echo "$tag: $(grep -h 'fused (fusion' "$out/$tag/report.md" | cut -d'|' -f2,4 | tr '\n' ' ')"
  done
done
