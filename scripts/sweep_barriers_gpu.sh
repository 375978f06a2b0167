#!/bin/bash
# Sweeps without the barriers their members do not need (#35): the replay,
# sweep, write and reverse-pass tests of the debug test binaries in .gpu/,
# then the build before (.gpu/old/) against this one (.gpu/), the dist
# suite alternating 8 times and a profile of each (scripts/build_ab_gpu.sh).
# Device tool, carry .gpu:  bash scripts/sweep_barriers_gpu.sh
source "$(dirname "$0")/lease.sh"
[ -f "$bin/bins.tgz" ] && tar xzf "$bin/bins.tgz" -C "$bin"
W=/tmp/tests; mkdir -p $W
replay_tests
run_tests "runtime_tests small_writes::" "rev_tests rev_sweep" "rev_tests rev_lent_adjoints" "rev_tests rev_inline_products"
cp $W/*.txt "$OUT/" 2>/dev/null
ROUNDS=8 bash "$here/build_ab_gpu.sh" > /dev/null 2>&1
cat $S
