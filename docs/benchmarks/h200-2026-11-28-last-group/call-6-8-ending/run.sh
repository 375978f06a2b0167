#!/bin/bash
# Times the diamonds likelihood's compact kernel with parts removed (FUSION_KERNEL_OVERRIDE).
echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
tar xzf .gpu/bins.tgz -C .gpu
export FUSION_DEVICE=nvidia FUSION_CACHE_DIR=off
for round in $(seq ${ROUNDS:-2}); do
for v in ${VARIANTS:-v0_full v1_no_xtv_end v2_no_scalar_end v3_no_ends v4_no_xtv v5_loop_only}; do
  FUSION_KERNEL_OVERRIDE=$PWD/.gpu/ov/$v FUSION_PROFILING=1 timeout 100 .gpu/bench_report --suite dist --reps 5 --out /tmp/p-$v > /dev/null 2>&1
  echo "$v round $round rc=$? $(grep -A8 'normal_lpdf(y, x·b + Intercept, sigma), n = 5000' /tmp/p-$v/profiles.md | grep '^| calculate' | head -1)"
  cp /tmp/p-$v/profiles.md $OUT/profiles-$v-$round.md
done
done
