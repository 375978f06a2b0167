source scripts/lease.sh
export FUSION_DEVICE=nvidia
rows() { grep -E "^## (normal|student|gamma)|^\| 10000000 \| clfuse|^\| 1000000 \| clfuse|^\| 1000000 \| floor|^\| 10000000 \| floor" "$1"; }
for r in 1 2; do
  for g in 32 8 16 4; do
    echo "== FUSION_REDUCTION_GROUPS_PER_CU=$g round $r" >> $S
    FUSION_REDUCTION_GROUPS_PER_CU=$g timeout 100 $bin/bench_report --suite dist --reps 25 --out /tmp/g$g-$r > /dev/null 2>&1
    rows /tmp/g$g-$r/report.md >> $S
  done
done
cat $S
