#!/bin/bash
# Issue #33 ("the house"): every BENCHMARKS.md workload the restructuring
# could move, before and after, alternating, in one lease. Here: the
# session's first commit's release binaries in .gpu/before/, the new ones in
# .gpu/ (bench_report, autodiff_model). There (device tool, carry .gpu):
#   bash scripts/house_gpu.sh 1   # fused expressions, GLM, host path, autodiff
#   bash scripts/house_gpu.sh 2   # linear algebra and the GP / E-step figures
echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export FUSION_DEVICE=nvidia
cd "$(dirname "$0")/../.gpu"
part=${1:-1}
S=$OUT/summary-$part.txt
report() { # build, name, limit, bench_report arguments
  local build=$1 name=$2 limit=$3; shift 3
  local bin=./bench_report; [ "$build" = before ] && bin=./before/bench_report
  echo "== $build $name: bench_report $*" >> $S
  timeout "$limit" $bin "$@" --out "$OUT/$build-$name" >> $OUT/$build-$name.log 2>&1
  echo "rc=$?" >> $S
}
autodiff() { # build, limit, autodiff_model arguments
  local build=$1 limit=$2; shift 2
  local bin=./autodiff_model; [ "$build" = before ] && bin=./before/autodiff_model
  echo "== $build autodiff_model $*" >> $S
  timeout "$limit" $bin "$@" >> $S 2>&1
  echo "rc=$?" >> $S
}
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } >> $S
if [ "$part" = 1 ]; then
  for round in 1 2; do
    for build in before after; do
      report $build fusion-$round 100 --suite fusion --no-baselines
      report $build glm-$round 60 --suite glm --glm-shapes 1e4x10,1e5x100,1e6x100,1e7x10 --no-baselines
      autodiff $build 40 --n 1000000 --p 100 --calls 300 --glm-only
      autodiff $build 40 --n 10000000 --p 10 --calls 300 --glm-only
      autodiff $build 40 --n 1000000 --p 10 --groups 100 --calls 100
    done
  done
  for build in before after; do
    report $build host 90 --suite host --first-call-runs 1
  done
else
  for build in before after; do
    report $build linalg 150 --suite linalg --no-baselines
    report $build seeds-7e 120 --suite seeds --figures 7,e
  done
fi
date -u >> $S
# At most 8 files come back: the reports, logs and plots as one archive.
(cd $OUT && tar czf house-$part.tgz --exclude='house-*.tgz' --exclude="summary-$part.txt" * && \
  find . -mindepth 1 -maxdepth 1 ! -name 'house-*.tgz' ! -name "summary-$part.txt" -exec rm -rf {} +)
cat $S
