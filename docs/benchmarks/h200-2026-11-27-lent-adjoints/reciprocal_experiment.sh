source scripts/lease.sh
export FUSION_DEVICE=nvidia FUSION_CACHE_DIR=off
FUSION_DUMP_KERNELS=/tmp/d timeout 100 $bin/bench_report --suite dist --reps 3 --out /tmp/o0 > /tmp/o0.log 2>&1
echo "dump rc=$?" >> $S
python3 $bin/hoist_recip.py /tmp/d /tmp/v >> $S
ls /tmp/v >> $S
rows() { grep -E "^## (normal|student|gamma)|^\| 10000000 \| clfuse|^\| 1000000 \| clfuse" "$1"; }
for r in 1 2; do
  echo "== base $r" >> $S
  timeout 100 $bin/bench_report --suite dist --reps 25 --out /tmp/b$r > /dev/null 2>&1; rows /tmp/b$r/report.md >> $S
  echo "== hoisted $r" >> $S
  FUSION_KERNEL_OVERRIDE=/tmp/v timeout 100 $bin/bench_report --suite dist --reps 25 --out /tmp/h$r > /dev/null 2>&1; rows /tmp/h$r/report.md >> $S
done
FUSION_PROFILING=1 FUSION_KERNEL_OVERRIDE=/tmp/v timeout 100 $bin/bench_report --suite dist --reps 5 --out /tmp/hp > /dev/null 2>&1
awk '/scalar mu, sigma, n = 10000000/,/host: call returned/' /tmp/hp/profiles.md >> $S
cp /tmp/v/*.cl $OUT/ 2>/dev/null
cat $S
