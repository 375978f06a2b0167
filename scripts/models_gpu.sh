#!/bin/bash
# Issue #35's benchmark, one lease: `bench_report --suite dist` (the
# densities and posteriordb's diamonds) twice with the JAX/PyTorch peers
# (scripts/dist_reference.py: diamonds on JAX's GPU and CPU backends), then
# each sampling example's whole run (4 chains) on the GPU and on the lent
# machine's CPU (PoCL). Here: release bench_report and examples in .gpu/.
# There (device tool, carry .gpu): bash scripts/models_gpu.sh
# Everything lands in $OUT/models.tar.gz.
source "$(dirname "$0")/lease.sh"
W=$(mktemp -d)
for round in 1 2; do
  echo "== clfuse round $round" >> $S
  FUSION_DEVICE=nvidia timeout 120 "$bin/bench_report" --suite dist --reps 25 \
    --out "$W/gpu-$round" > "$W/gpu-$round.log" 2>&1
  echo "rc=$?" >> $S
  grep -A5 "## diamonds" "$W/gpu-$round/report.md" >> $S
  echo "== peers round $round" >> $S
  timeout 150 python3 "$here/dist_reference.py" "$W/peers-$round.json" >> $S 2>&1
  echo "rc=$?" >> $S
done
echo "== profile" >> $S
FUSION_PROFILING=1 FUSION_DEVICE=nvidia timeout 90 "$bin/bench_report" --suite dist \
  --out "$W/gpu-profile" > "$W/gpu-profile.log" 2>&1
echo "rc=$?" >> $S
run() {  # label, device selector, command...
  local label=$1 sel=$2; shift 2
  echo "== $label" >> $S
  start=$(date +%s%N)
  env $sel timeout ${LIMIT:-110} "$@" > "$W/$label.log" 2>&1
  rc=$?
  end=$(date +%s%N)
  echo "rc=$rc wall_ms=$(( (end - start) / 1000000 ))" >> $S
  tail -6 "$W/$label.log" >> $S
}
for ex in eight_schools regression; do
  run "$ex-nvidia" FUSION_DEVICE=nvidia "$bin/$ex"
  run "$ex-pocl" FUSION_PLATFORM=portable "$bin/$ex"
done
# The GP at the paper's size on the GPU; the device against faer (the
# example's CPU model, same front end, same chains) at a size both finish.
LIMIT=170 run gp_nuts-n1000-nvidia FUSION_DEVICE=nvidia "$bin/gp_nuts" --n 1000 --cpu-run 0
LIMIT=120 run gp_nuts-n250-nvidia-and-faer FUSION_DEVICE=nvidia "$bin/gp_nuts" --n 250

tar czf "$OUT/models.tar.gz" -C "$W" .
