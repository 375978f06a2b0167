source scripts/lease.sh
[ -f "$bin/bins.tgz" ] && tar xzf "$bin/bins.tgz" -C "$bin"
export FUSION_DEVICE=nvidia
lscpu | grep -E "NUMA|Model name" >> $S
nvidia-smi topo -m 2>/dev/null | head -5 >> $S
for core in 0-1 6-7 14-15; do for form in old new; do for r in 1 2; do
  b=$bin; [ $form = old ] && b=$bin/old
  out=$OUT/pin-$core-$form-$r
  taskset -c $core timeout 60 $b/bench_report --suite dist --reps 60 --out $out > /dev/null 2>&1
  echo "core=$core $form r=$r $(grep -A6 '## diamonds' $out/report.md | grep -E 'normal_lpdf|4 chains' | cut -d'|' -f3,4 | tr '\n' ' ')" >> $S
  rm -rf $out
done; done; done
cat $S
