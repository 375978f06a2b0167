#!/bin/bash
# Issue #37's first step, one lease: the GP value and gradient (paper
# Figure 7) per call at n = 500, 2000, 4000, 10000 (`bench_report --suite
# seeds --figures 7`), the same with FUSION_PROFILING=1 (each call's kernel
# timeline: launches, device idle time), and JAX's jit(value_and_grad) of
# the same model with its parts (scripts/gp_reference.py), in the same lease.
# Here: release bench_report in .gpu/. There: bash scripts/gp_profile_gpu.sh.
source "$(dirname "$0")/lease.sh"
W=$OUT/gp
mkdir -p $W
sizes="--gp-sizes 500,2000,4000,10000 --gp-runs 500 --no-baselines"
echo "== clfuse" >> $S
FUSION_DEVICE=nvidia timeout 150 "$bin/bench_report" --suite seeds --figures 7 $sizes --reps 15 \
  --out "$W/gpu" > "$W/gpu.log" 2>&1
echo "rc=$?" >> $S
grep "| [0-9]" "$W/gpu/report.md" | grep -v "whole" >> $S
echo "== jax" >> $S
timeout 150 python3 "$here/gp_reference.py" "$W/jax.json" 500 2000 4000 10000 >> $S 2>&1
echo "rc=$?" >> $S
echo "== profile" >> $S
FUSION_PROFILING=1 FUSION_DEVICE=nvidia timeout 120 "$bin/bench_report" --suite seeds --figures 7 $sizes \
  --reps 3 --out "$W/profile" > "$W/profile.log" 2>&1
echo "rc=$?" >> $S
cp "$W/profile/profiles.md" "$OUT/profiles.md"
rm -f "$W"/*/*.png
cat $S
