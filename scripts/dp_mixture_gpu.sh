#!/bin/bash
# Issue #38's benchmark, one lease: `bench_report --suite seeds --figures g,e`
# (seed 004's Gibbs sweep at n = 1e6, p = 14, k = 64 and 256, with one serial
# CPU sweep; and the diagonal E-step as before), JAX's sweep in the same lease
# (scripts/dp_mixture_reference.py), the example's whole analysis at full
# size (Gibbs and BEM, recovery checked, one serial CPU sweep each).
# Here: release bench_report and examples in .gpu/. There (device tool,
# carry .gpu): bash scripts/dp_mixture_gpu.sh. Everything lands in $OUT.
source "$(dirname "$0")/lease.sh"
W=$OUT/dp_mixture
mkdir -p $W
echo "== clfuse" >> $S
FUSION_DEVICE=nvidia timeout 200 "$bin/bench_report" --suite seeds --figures g,e --reps 15 \
  --out "$W/gpu" > "$W/gpu.log" 2>&1
echo "rc=$?" >> $S
grep -B2 -A16 "## Seed 004" "$W/gpu/report.md" >> $S
echo "== jax" >> $S
timeout 150 python3 "$here/dp_mixture_reference.py" "$W/jax.json" 1000000x14x256 1000000x14x64 >> $S 2>&1
echo "rc=$?" >> $S
echo "== example (n = 1e6, p = 14, k = 64 and 256)" >> $S
FUSION_DEVICE=nvidia timeout 120 "$bin/dp_mixture" --sweeps 40 --serial 1 >> $S 2>&1
echo "rc=$?" >> $S
cat $S
