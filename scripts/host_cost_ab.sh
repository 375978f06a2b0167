#!/usr/bin/env bash
# Same machine, same run: host cost before (38cd174) and after, alternating;
# then the new soundness tests on the GPU. One file comes back: all.txt.
# Run through the device tool with `.gpu/` holding bench_report_old (built at
# the earlier commit), bench_report_new and the four test binaries; copy this
# script to .gpu/run.sh and run `bash .gpu/run.sh`.
set -u
echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export FUSION_DEVICE=nvidia
cd "$(dirname "$0")"
R=/tmp/results; mkdir -p $R
A=$OUT/all.txt
nvidia-smi --query-gpu=name,driver_version --format=csv >> $A 2>&1
for r in 1 2 3 4 5; do
  for v in old new; do
    timeout 120 ./bench_report_$v --suite fusion --max-n 1000 --no-baselines --out $R/${v}_$r > $R/${v}_$r.log 2>&1
    echo "=== $v round $r (exit $?)" >> $A
    awk '/^## host cost/{p=1} /^## /&&!/host cost/{p=0} p' $R/${v}_$r/report.md >> $A
  done
done
for t in soundness_threads soundness_targets non_finite_inputs proptest_targets; do
  timeout 240 ./$t > $R/test_$t.log 2>&1; echo "=== $t exit $?" >> $A; tail -4 $R/test_$t.log >> $A
done
FUSION_QUEUE=in-order timeout 120 ./soundness_threads > $R/t.log 2>&1; echo "=== threads in-order exit $?" >> $A; tail -4 $R/t.log >> $A
FUSION_SOUNDNESS_ROUNDS=200 timeout 200 ./soundness_threads every_read_back > $R/t2.log 2>&1; echo "=== threads 200 rounds exit $?" >> $A; tail -4 $R/t2.log >> $A
