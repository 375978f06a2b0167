#!/bin/bash
# #19's benchmark on the GPU machine (BENCHMARKS.md, "Reverse-mode autodiff").
# Here: cargo build --release --example autodiff_model
#       mkdir -p .gpu && cp target/release/examples/autodiff_model scripts/glm_reference.py scripts/hier_jax.py scripts/rev_h200.sh .gpu/
# There (device tool, carry .gpu): bash .gpu/rev_h200.sh $OUT
set -u
OUT=$1
echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export FUSION_DEVICE=nvidia
cd "$(dirname "$0")"
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv >> $S 2>&1
date -u >> $S
for args in "--n 1000000 --p 100 --calls 300 --glm-only" \
            "--n 10000000 --p 10 --calls 300 --glm-only" \
            "--n 200000 --p 10 --groups 50 --calls 200" \
            "--n 1000000 --p 10 --groups 100 --calls 100"; do
  echo "== autodiff_model $args" >> $S
  timeout 150 ./autodiff_model $args >> $S 2>&1
  echo "rc=$?" >> $S
done
echo "== JAX bernoulli GLM (glm_reference.py)" >> $S
timeout 120 python3 glm_reference.py $OUT/jax_torch.json >> $S 2>&1
echo "== JAX hierarchical" >> $S
timeout 90 python3 hier_jax.py $OUT/jax_hier.json >> $S 2>&1
exit 0
