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
#   bash scripts/placement_gpu.sh chain   PROCESSES (default 10) placement suites: per
#                                         process one-work-group latency chains on six
#                                         buffers allocated apart (with the compute units
#                                         they ran on), the diamonds call over two copies,
#                                         the chains again
#   bash scripts/placement_gpu.sh numa    the host's NUMA layout and the GPU's place in
#                                         it, then PROCESSES (default 6) chain probes
#                                         pinned to each NUMA node's cores in turn
#                                         (taskset; numactl --membind too where present)
source "$(dirname "$0")/lease.sh"
export FUSION_DEVICE=nvidia
[ -f "$bin/bins.tgz" ] && tar xzf "$bin/bins.tgz" -C "$bin"
# chain_probe NAME: one placement suite (run under $PIN when set): its
# rows to the summary, its report to $OUT/chain-NAME.md.
chain_probe() {
  local out="$OUT/chain-$1"
  timeout 120 $PIN "$bin/bench_report" --suite placement --copies 2 --reps ${REPS:-40} --out "$out" > /dev/null 2>&1
  echo "== process $1${PIN:+ ($PIN)}: rc=$? clocks $(nvidia-smi --query-gpu=clocks.sm,clocks.mem,pstate,temperature.gpu,power.draw --format=csv,noheader)"
  grep -E "buffer [0-9]|data copy|rounds," "$out/report.md" | cut -d'|' -f3,4,5,6 | tr -s ' '
  cp "$out/report.md" "$OUT/chain-$1.md"; rm -rf "$out"
}

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
  chain)
    {
      for process in $(seq ${PROCESSES:-10}); do
        chain_probe "$process"
      done
    } >> "$S" 2>&1
    cat "$S" ;;
  numa)
    {
      lscpu | grep -iE "^cpu\(s\)|numa|socket|model name"
      command -v numactl > /dev/null && numactl -H
      nvidia-smi topo -m
      gpu=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader | head -1 | tr 'A-F' 'a-f' | sed 's/^0000//')
      for d in /sys/bus/pci/devices/*"${gpu#0}"; do echo "GPU $d: numa_node $(cat $d/numa_node) local_cpulist $(cat $d/local_cpulist)"; done
      for node in $(lscpu | grep -E "^NUMA node[0-9]+ CPU" | sed -E 's/NUMA node([0-9]+) .*/\1/'); do
        cpus=$(lscpu | grep -E "^NUMA node$node CPU" | awk '{print $NF}')
        pin="taskset -c $cpus"
        command -v numactl > /dev/null && pin="numactl --cpunodebind=$node --membind=$node"
        for process in $(seq ${PROCESSES:-6}); do
          PIN="$pin" chain_probe "node$node-$process"
        done
      done
    } >> "$S" 2>&1
    cat "$S" ;;
esac
