#!/bin/bash
# Whether a diamonds call's speed (#35: every process ran all its calls at
# one of two speeds on H200s) follows the process or its buffers. Device
# tool, carry .gpu (bins.tgz: the release bench_report, debug test binaries):
#   bash scripts/placement_gpu.sh tests   the replay, sweep, batch, front-end
#                                         and reverse-sweep tests on the GPU
#   bash scripts/placement_gpu.sh probe   PROCESSES (default 8) dist suites with
#                                         --copies 4: per process the diamonds call,
#                                         a round of four, and each data copy's call
#                                         (two passes), with the GPU's clocks after it;
#                                         CONTEXTS=1: each copy in a context of its own
source "$(dirname "$0")/lease.sh"
export FUSION_DEVICE=nvidia
[ -f "$bin/bins.tgz" ] && tar xzf "$bin/bins.tgz" -C "$bin"
case $1 in
  tests)
    replay_tests
    run_tests "rev_tests rev_sweep" "rev_tests rev_lent_adjoints" "rev_tests rev_inline_products"
    cp $W/*.txt "$OUT/" 2>/dev/null
    cat "$S" ;;
  probe)
    {
      for process in $(seq ${PROCESSES:-8}); do
        out="$OUT/probe-$process"
        timeout 150 "$bin/bench_report" --suite dist --copies 4 ${CONTEXTS:+--new-contexts} --reps ${REPS:-60} --out "$out" > /dev/null 2>&1
        echo "== process $process: rc=$? clocks $(nvidia-smi --query-gpu=clocks.sm,clocks.mem,pstate,temperature.gpu,power.draw --format=csv,noheader)"
        grep -A20 "## diamonds" "$out/report.md" | grep -E "normal_lpdf|4 chains" | cut -d'|' -f3,4 | tr -s ' '
        cp "$out/report.md" "$OUT/probe-$process.md"; rm -rf "$out"
      done
    } >> "$S" 2>&1
    cat "$S" ;;
esac
