#!/bin/bash
# One-group reductions (#35): a reduction launched as one work-group (a
# sweep's member) writes its totals without the last-group counter, fences
# and second tree. Compares the build before (.gpu/old/) with this one
# (.gpu/) in one lease (device tool, carry .gpu):
#   bash scripts/one_group_gpu.sh tests   the batch, interleave, replay and sweep tests
#   bash scripts/one_group_gpu.sh bench   the dist suite, before / after alternating; profiles
#   bash scripts/one_group_gpu.sh runs    whole 4-chain runs, before / after
#   bash scripts/one_group_gpu.sh dump    the diamonds sweeps' sources and binaries (PTX)
# then `bash scripts/chains_gpu.sh peers` for NumPyro in the same lease.
source "$(dirname "$0")/lease.sh"
export FUSION_DEVICE=nvidia
[ -f "$bin/bins.tgz" ] && tar xzf "$bin/bins.tgz" -C "$bin"
case $1 in
  tests) replay_tests; cat "$S" ;;
  bench) dist_ab build build; cat "$S" ;;
  runs) MODES="before after" ROUNDS=${ROUNDS:-2} bash "$here/chains_gpu.sh" runs ;;
  dump)
    FUSION_CACHE_DIR=off FUSION_DUMP_KERNELS=/tmp/dump timeout 200 "$bin/bench_report" --suite dist --reps 3 --out /tmp/dump-report > /dev/null 2>&1
    echo "== dump: rc=$? $(ls /tmp/dump | wc -l) files" >> "$S"
    tar czf "$OUT/sweeps-dump.tgz" -C /tmp/dump $(cd /tmp/dump && ls | grep -E '^sweep_') ;;
esac
