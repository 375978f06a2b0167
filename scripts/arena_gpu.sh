#!/bin/bash
# Small buffers carved from parents (#35, `fusion-core/src/arena.rs`): a
# replayed launch's variant passes each parent once instead of every
# buffer. FUSION_ARENA=0 / 1 in one lease (device tool, carry .gpu: bins.tgz
# with the release bench_report, eight_schools and regression, and the
# core's debug test binary as core_tests):
#   bash scripts/arena_gpu.sh tests   the core's arena, variant, replay and batch tests on the GPU
#   bash scripts/arena_gpu.sh bench   the dist suite, 0 and 1 alternating ROUNDS (default 4)
#                                     times, one process each: the diamonds call and a round
#                                     of four; then one profiled process each
#   bash scripts/arena_gpu.sh runs    whole 4-chain runs of eight_schools and regression,
#                                     0 and 1 alternating ROUNDS (default 2) times
# then `bash scripts/chains_gpu.sh peers` (NumPyro, GPU and CPU).
source "$(dirname "$0")/lease.sh"
export FUSION_DEVICE=nvidia
[ -f "$bin/bins.tgz" ] && tar xzf "$bin/bins.tgz" -C "$bin"
case $1 in
  tests)
    W=/tmp/tests; mkdir -p $W
    run_tests "core_tests arena::" "core_tests kernel_variants" "core_tests chain_batch" \
      "core_tests replay::" "core_tests sweep::"
    cp $W/*.txt "$OUT/" 2>/dev/null
    cat "$S" ;;
  bench)
    {
      for round in $(seq ${ROUNDS:-4}); do
        for arena in 0 1; do
          out="$OUT/dist-$arena-$round"
          FUSION_ARENA=$arena timeout 200 "$bin/bench_report" --suite dist --reps ${REPS:-25} --out "$out" > /dev/null 2>&1
          echo "FUSION_ARENA=$arena round=$round rc=$? $(grep -A6 '## diamonds' "$out/report.md" | grep -E 'normal_lpdf|4 chains' | cut -d'|' -f3,4,5 | tr -s ' ' | tr '\n' ' ')"
          rm -rf "$out"
        done
      done
      for arena in 0 1; do
        out="$OUT/profile-$arena"
        FUSION_ARENA=$arena FUSION_PROFILING=1 timeout 200 "$bin/bench_report" --suite dist --reps 5 --out "$out" > /dev/null 2>&1
        echo "profiled FUSION_ARENA=$arena: rc=$?"
        cp "$out/profiles.md" "$OUT/profiles-$arena.md"; rm -rf "$out"
      done
    } >> "$S" 2>&1
    cat "$S" ;;
  runs)
    MODES="apart arena" ROUNDS=${ROUNDS:-2} bash "$here/chains_gpu.sh" runs
    cat "$S" ;;
esac
