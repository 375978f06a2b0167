source scripts/lease.sh
export FUSION_DEVICE=nvidia
for r in 1 2; do
  for g in 32 8; do
    echo "== FUSION_REDUCTION_GROUPS_PER_CU=$g round $r" >> $S
    FUSION_REDUCTION_GROUPS_PER_CU=$g timeout 200 $bin/bench_report --suite fusion --no-baselines --reps 9 --out /tmp/f$g-$r > /tmp/f$g-$r.log 2>&1
    echo "rc=$?" >> $S
    grep -E "^## |^\| [0-9]+ \| fused" /tmp/f$g-$r/report.md >> $S
    cp /tmp/f$g-$r/report.md $OUT/fusion-groups$g-$r.md
  done
done
cat $S
