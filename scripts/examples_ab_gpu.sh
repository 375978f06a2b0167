#!/bin/bash
# Whole 4-chain runs of the sampling examples before and after a change, one
# lease, alternating: .gpu/<example>_old and .gpu/<example> (release builds).
# There (device tool, carry .gpu): bash scripts/examples_ab_gpu.sh
echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export FUSION_DEVICE=nvidia
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for example in eight_schools regression; do
  for which in old new; do
    b=.gpu/$example; [ $which = old ] && b=.gpu/${example}_old
    echo "== $example $which"
    timeout 200 $b > $OUT/$example-$which.log 2>&1
    echo "rc=$?"
    grep "whole run\|divergent" $OUT/$example-$which.log
  done
done
