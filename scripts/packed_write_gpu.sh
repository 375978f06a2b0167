#!/bin/bash
# Packed position writes (#35): a sampler's position travels as vectors of
# 16 values (5 kernel arguments for 26 values instead of 35), and a replayed
# call's first sweep runs that write as its first step
# (FUSION_REPLAY_PROLOGUES). Compares the build before (.gpu/old/) with this
# one (.gpu/), prologues off and on, in one lease (device tool, carry .gpu):
#   bash scripts/packed_write_gpu.sh tests   the write, replay, sweep, batch and front-end tests
#   bash scripts/packed_write_gpu.sh bench   the dist suite: before / packed / packed with
#                                            prologues, alternating ROUNDS (default 4) times,
#                                            one line per run; then each one's profiles
# then `MODES="before after" ROUNDS=2 bash scripts/chains_gpu.sh runs; bash scripts/chains_gpu.sh peers`.
source "$(dirname "$0")/lease.sh"
export FUSION_DEVICE=nvidia
[ -f "$bin/bins.tgz" ] && tar xzf "$bin/bins.tgz" -C "$bin"
# form_of NAME: the binary folder and the prologue setting of a form.
run_form() {
  local form=$1; shift
  case $form in
    before) "$bin/old/bench_report" "$@" ;;
    packed) FUSION_REPLAY_PROLOGUES=0 "$bin/bench_report" "$@" ;;
    prologued) FUSION_REPLAY_PROLOGUES=1 "$bin/bench_report" "$@" ;;
  esac
}
case $1 in
  tests)
    W=/tmp/tests; mkdir -p $W
    replay_tests
    run_tests "runtime_tests small_writes::" "core_tests small_writes"
    cp $W/*.txt "$OUT/" 2>/dev/null
    cat "$S" ;;
  bench)
    {
      for round in $(seq ${ROUNDS:-4}); do
        for form in before packed prologued; do
          out="$OUT/many-$form-$round"
          timeout 100 bash -c "$(declare -f run_form); bin=$bin; run_form $form --suite dist --reps ${REPS:-60} --out $out" > /dev/null 2>&1
          echo "$form round=$round rc=$? $(grep -A6 '## diamonds' "$out/report.md" | grep -E 'normal_lpdf|4 chains' | cut -d'|' -f3,4 | tr '\n' ' ')"
          cp "$out/report.md" "$out.md"; rm -rf "$out"
        done
      done
      for form in before packed prologued; do
        out="$OUT/profiles-$form"
        FUSION_PROFILING=1 timeout 100 bash -c "$(declare -f run_form); bin=$bin; run_form $form --suite dist --reps 5 --out $out" > /dev/null 2>&1
        echo "profiles $form: rc=$?"
        cp "$out/profiles.md" "$OUT/profiles-$form.md"; rm -rf "$out"
      done
    } >> "$S" 2>&1
    cat "$S" ;;
esac
