#!/bin/bash
# #19: products read inline by scalar steps, on the GPU machine.
# Here: cargo build --release --example autodiff_model; copy it, the rev and
#       glm test binaries (.gpu/tests/), scripts/glm_reference.py and
#       scripts/hier_jax.py into .gpu/.
# There (device tool, carry .gpu): bash scripts/inline_products_gpu.sh $OUT
set -u
source "$(dirname "$0")/gpu_tests.sh"
S=$OUT/summary.txt
run_test_binaries > "$OUT/tests.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv >> $S 2>&1
date -u >> $S
# Two alternating rounds of the GLM shapes: per-call times drift between runs.
for round in 1 2; do
  for args in "--n 1000000 --p 100 --calls 300 --glm-only" \
              "--n 10000000 --p 10 --calls 300 --glm-only"; do
    echo "== round $round: autodiff_model $args" >> $S
    timeout 120 ./autodiff_model $args >> $S 2>&1
    echo "rc=$?" >> $S
  done
done
echo "== timelines (FUSION_PROFILING=1)" >> $S
FUSION_PROFILING=1 timeout 120 ./autodiff_model --n 10000000 --p 10 --calls 20 --glm-only > $OUT/profile_1e7.txt 2>&1
FUSION_PROFILING=1 timeout 120 ./autodiff_model --n 1000000 --p 10 --groups 100 --calls 20 > $OUT/profile_hierarchical.txt 2>&1
for args in "--n 200000 --p 10 --groups 50 --calls 200" \
            "--n 1000000 --p 10 --groups 100 --calls 100"; do
  echo "== autodiff_model $args" >> $S
  timeout 150 ./autodiff_model $args >> $S 2>&1
  echo "rc=$?" >> $S
done
echo "== JAX / PyTorch bernoulli GLM (glm_reference.py)" >> $S
timeout 120 python3 glm_reference.py $OUT/jax_torch.json >> $S 2>&1
echo "== JAX hierarchical" >> $S
timeout 90 python3 hier_jax.py $OUT/jax_hier.json >> $S 2>&1
exit 0
