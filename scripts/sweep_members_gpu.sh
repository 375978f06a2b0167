#!/bin/bash
# What a replayed diamonds call's sweep members cost (#35): the dist suite
# dumps its kernels once, scripts/sweep_members.py writes hand-edited
# variants of the two sweeps (see its doc), and ROUNDS (default 6) rounds
# run the dist suite as built and with each of VARIANTS (default: all of
# them; FUSION_KERNEL_OVERRIDE), alternating, one process each: the diamonds
# call and a round of four to the summary; then one profiled process per
# variant ($OUT/profiles-*.md).
# Device tool, carry .gpu (bins.tgz: the release bench_report):
#   bash scripts/sweep_members_gpu.sh
source "$(dirname "$0")/lease.sh"
export FUSION_DEVICE=nvidia
[ -f "$bin/bins.tgz" ] && tar xzf "$bin/bins.tgz" -C "$bin"
W=$(mktemp -d)
FUSION_DUMP_KERNELS=$W/dump timeout 200 "$bin/bench_report" --suite dist --reps 3 --out "$W/dump-run" > /dev/null 2>&1
python3 "$here/sweep_members.py" "$W/dump" "$W/variants" >> "$S"
# dist VARIANT OUT [ENV...]: one dist suite, VARIANT's kernels built instead
# of the generated ones (none for `built`).
dist() {
  local variant=$1 out=$2; shift 2
  if [ "$variant" = built ]; then
    env "$@" timeout 200 "$bin/bench_report" --suite dist --reps ${REPS:-25} --out "$out" > /dev/null 2>&1
  else
    env "$@" FUSION_KERNEL_OVERRIDE="$W/variants/$variant" timeout 200 "$bin/bench_report" --suite dist --reps ${REPS:-25} --out "$out" > /dev/null 2>&1
  fi
}
{
  for round in $(seq ${ROUNDS:-6}); do
    for variant in ${VARIANTS:-built nomid nopriors norevbar hollow}; do
      dist $variant "$W/$variant-$round"
      echo "== $variant, round $round: rc=$?"
      grep -A6 "## diamonds" "$W/$variant-$round/report.md" | grep -E "normal_lpdf|4 chains" | cut -d"|" -f3,4,5 | tr -s ' '
    done
  done
  for variant in ${VARIANTS:-built nomid nopriors norevbar hollow}; do
    dist $variant "$W/profile-$variant" FUSION_PROFILING=1
    echo "== $variant, profiled: rc=$?"
    cp "$W/profile-$variant/profiles.md" "$OUT/profiles-$variant.md"
  done
} >> "$S" 2>&1
cat "$S"
