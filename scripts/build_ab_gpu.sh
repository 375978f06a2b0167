#!/bin/bash
# Two builds of bench_report alternating in one lease: .gpu/old/ (before a
# change) and .gpu/ (after), the dist suite's diamonds call and round of
# four, one process each, ROUNDS (default 10) times, one line per run; then
# one profiled run of each (profiles-{old,new}.md). Device tool, carry .gpu:
#   bash scripts/build_ab_gpu.sh
source "$(dirname "$0")/lease.sh"
export FUSION_DEVICE=nvidia
[ -f "$bin/bins.tgz" ] && tar xzf "$bin/bins.tgz" -C "$bin"
{
  for round in $(seq ${ROUNDS:-10}); do
    for form in old new; do
      dir=$bin; [ $form = old ] && dir=$bin/old
      out="$OUT/many-$form-$round"
      timeout 100 "$dir/bench_report" --suite dist --reps ${REPS:-60} --out "$out" > /dev/null 2>&1
      echo "$form round=$round rc=$? $(grep -A6 '## diamonds' "$out/report.md" | grep -E 'normal_lpdf|4 chains' | cut -d'|' -f4 | tr '\n' ' ')"
      cp "$out/report.md" "$out.md"; rm -rf "$out"
    done
  done
  for form in old new; do
    dir=$bin; [ $form = old ] && dir=$bin/old
    out="$OUT/profiles-$form"
    FUSION_PROFILING=1 timeout 100 "$dir/bench_report" --suite dist --reps 5 --out "$out" > /dev/null 2>&1
    echo "profiles $form: rc=$?"
    cp "$out/profiles.md" "$OUT/profiles-$form.md"; rm -rf "$out"
  done
} >> "$S" 2>&1
cat "$S"
