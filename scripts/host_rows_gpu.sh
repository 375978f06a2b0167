#!/bin/bash
# The fused-expression suite's host-bound rows (n = 1e3 to 1e6, ~12-60 µs
# per call) of several builds of the report, alternating, ROUNDS rounds
# (default 2), the order rotated each round: .gpu/<name>/bench_report or
# .gpu/<name>.gz for each name in BUILDS. Device tool, carry .gpu:
# BUILDS="old new" bash scripts/host_rows_gpu.sh
source "$(dirname "$0")/lease.sh"
export FUSION_DEVICE=nvidia
names=(${BUILDS:-old new})
for name in "${names[@]}"; do
  if [ -f "$bin/$name.gz" ]; then
    mkdir -p /tmp/builds/$name && gunzip -c "$bin/$name.gz" > /tmp/builds/$name/bench_report
    chmod +x /tmp/builds/$name/bench_report
  else
    mkdir -p /tmp/builds/$name && cp "$bin/$name/bench_report" /tmp/builds/$name/
  fi
done
for round in $(seq 1 ${ROUNDS:-2}); do
  for i in "${!names[@]}"; do
    name=${names[$(( (i + round - 1) % ${#names[@]} ))]}
    echo "== fusion suite, build $name, round $round" >> $S
    timeout 200 /tmp/builds/$name/bench_report --suite fusion --no-baselines \
      --out "/tmp/fusion-$name-$round" > "/tmp/fusion-$name-$round.log" 2>&1
    echo "rc=$?" >> $S
    grep "| [0-9]" "/tmp/fusion-$name-$round/report.md" | cut -d'|' -f2-5 >> $S
  done
done
cat $S
