#!/bin/bash
# #19: NVIDIA's native red.add against compare-and-swap loops in the reverse
# kernels, same run; and the rev test binaries with the native path.
# Here: cargo build --release --example autodiff_model; copy it and the rev
#       test binaries (.gpu/tests/) into .gpu/, with scripts/hier_jax.py.
# There (device tool, carry .gpu): bash scripts/native_atomics_gpu.sh $OUT
set -u
source "$(dirname "$0")/gpu_tests.sh"
S=$OUT/summary.txt
run_test_binaries > "$OUT/tests.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv >> $S 2>&1
date -u >> $S
for round in 1 2; do
  for atomics in 1 0; do
    for args in "--n 200000 --p 10 --groups 50 --calls 200" \
                "--n 1000000 --p 10 --groups 100 --calls 100"; do
      echo "== round $round, FUSION_NATIVE_ATOMICS=$atomics: autodiff_model $args" >> $S
      FUSION_NATIVE_ATOMICS=$atomics timeout 150 ./autodiff_model $args >> $S 2>&1
      echo "rc=$?" >> $S
    done
  done
done
FUSION_PROFILING=1 timeout 120 ./autodiff_model --n 1000000 --p 10 --groups 100 --calls 20 > $OUT/profile_hierarchical.txt 2>&1
for args in "--n 1000000 --p 100 --calls 300 --glm-only" \
            "--n 10000000 --p 10 --calls 300 --glm-only"; do
  echo "== autodiff_model $args" >> $S
  timeout 120 ./autodiff_model $args >> $S 2>&1
done
echo "== JAX hierarchical" >> $S
timeout 90 python3 hier_jax.py $OUT/jax_hier.json >> $S 2>&1
exit 0
