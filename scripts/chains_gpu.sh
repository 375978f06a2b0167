#!/bin/bash
# Issue #36's benchmark, one lease on a two-GPU machine (nvidia-h100-x2 or
# nvidia-h200-x2): `bench_report --suite chains` (8 chains unbatched,
# batched on one GPU and over two; whole NUTS runs) with its JAX peer
# (scripts/chains_reference.py), then the data-parallel bernoulli GLM
# (`--suite host --devices 0,1`). Here: release bench_report in .gpu/.
# There (device tool, carry .gpu): bash scripts/chains_gpu.sh
# Everything lands in $OUT/chains.tar.gz and $OUT/summary.txt.
source "$(dirname "$0")/lease.sh"
W=$(mktemp -d)
export FUSION_PLATFORM=nvidia FUSION_DEVICE=0
echo "== chains" >> $S
timeout 260 "$bin/bench_report" --suite chains --devices 0,1 --out "$W/chains" > "$W/chains.log" 2>&1
echo "rc=$?" >> $S
grep "^|" "$W/chains/report.md" >> $S
echo "== JAX" >> $S
timeout 100 python3 "$here/chains_reference.py" "$W/chains-jax.json" >> $S 2>&1
echo "rc=$?" >> $S
echo "== data parallel" >> $S
timeout 200 "$bin/bench_report" --suite host --first-call-runs 1 --devices 0,1 \
  --out "$W/host" > "$W/host.log" 2>&1
echo "rc=$?" >> $S
grep -A12 "split across" "$W/host/report.md" >> $S
tail -3 "$W/host.log" >> $S
cp "$W"/*.log "$OUT/" 2>/dev/null
tar czf "$OUT/chains.tar.gz" -C "$W" .
# Where a call's time goes: kernel timelines (FUSION_PROFILING=1).
echo "== profiles" >> $S
FUSION_PROFILING=1 timeout 120 "$bin/bench_report" --suite chains --devices 0 --reps 3 \
  --glm-shapes 1e4x10,1e6x100 --out "$W/chains-profile" > "$W/chains-profile.log" 2>&1
echo "rc=$?" >> $S
FUSION_PROFILING=1 timeout 120 "$bin/bench_report" --suite host --first-call-runs 1 --reps 3 \
  --devices 0,1 --out "$W/host-profile" > "$W/host-profile.log" 2>&1
echo "rc=$?" >> $S
cp "$W/chains-profile/profiles.md" "$OUT/chains-profiles.md" 2>/dev/null
cp "$W/host-profile/profiles.md" "$OUT/host-profiles.md" 2>/dev/null
tar czf "$OUT/chains.tar.gz" -C "$W" .
