# Sourced by the lease scripts (scripts/*_gpu.sh) first: registers NVIDIA's
# OpenCL driver, sets $here (scripts/), $bin (the release binaries in .gpu/)
# and $S (the summary in $OUT), and heads the summary with the date, the
# GPU, its driver and the host's cores.
echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
here=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
bin="$here/../.gpu"
S=$OUT/summary.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } >> "$S"

# run_tests "BINARY FILTER" ...: each debug test binary copied into .gpu/
# (when there) with its name filter; the verdicts go to the summary, the
# output to $W/BINARY-FILTER.txt.
run_tests() {
  local t binary filter
  for t in "$@"; do
    binary=${t%% *}
    filter=${t#* }
    [ -x "$bin/$binary" ] || continue
    echo "== $binary $filter" >> $S
    FUSION_DEVICE=nvidia timeout 300 "$bin/$binary" --test-threads=2 $filter > "$W/$binary-$filter.txt" 2>&1
    grep -E "test result|panicked|FAILED" "$W/$binary-$filter.txt" | tail -6 >> $S
  done
}

# dist_ab VARIABLE TAG: the dist suite's diamonds call and round of four
# with VARIABLE 0 / 1 alternating twice (reports $OUT/dist-TAG{0,1}-ROUND.md),
# then each one's profiles ($OUT/profiles-TAG{0,1}.md); verdicts to the summary.
# VARIABLE `build` compares builds instead: 0 is .gpu/old/, 1 is .gpu/.
# REPS (default 25): repetitions per row.
dist_ab() {
  local variable=$1 tag=$2 round value out
  {
    for round in 1 2; do
      for value in 0 1; do
        out="$OUT/dist-$tag$value-$round"
        env "$variable=$value" timeout 200 "$(build_of $variable $value)/bench_report" --suite dist --reps ${REPS:-25} --out "$out" > /dev/null 2>&1
        echo "== dist, $variable=$value, round $round: rc=$?"
        grep -A6 "## diamonds" "$out/report.md" | grep "^| 5000"
        cp "$out/report.md" "$OUT/dist-$tag$value-$round.md"; rm -rf "$out"
      done
    done
    for value in 0 1; do
      out="$OUT/profiles-$tag$value"
      env "$variable=$value" FUSION_PROFILING=1 timeout 200 "$(build_of $variable $value)/bench_report" --suite dist --reps 5 --out "$out" > /dev/null 2>&1
      echo "== profiles, $variable=$value: rc=$?"
      cp "$out/profiles.md" "$OUT/profiles-$tag$value.md"; rm -rf "$out"
    done
  } >> "$S" 2>&1
}

# build_of VARIABLE VALUE: the folder of the binaries to run; with VARIABLE
# `build`, .gpu/old/ for 0 (the build before the change) and .gpu/ for 1.
build_of() {
  if [ "$1" = build ] && [ "$2" = 0 ]; then echo "$bin/old"; else echo "$bin"; fi
}

# replay_tests: the batch, interleave, replay, sweep and front-end tests of
# the debug test binaries in .gpu/ (run_tests), their output copied to $OUT.
replay_tests() {
  W=/tmp/tests; mkdir -p $W
  run_tests "core_tests chain_batch" "core_tests replay::" "core_tests sweep::" \
    "nuts_tests interleave" "rev_tests rev_replay" \
    "runtime_tests sweeps" "nuts_tests front_end"
  cp $W/*.txt "$OUT/" 2>/dev/null
}

# suites_ab: the GLM and fused-expression suites of the build before the
# change (.gpu/old/) and after (.gpu/), alternating, two rounds; the rows to
# the summary (the check that nothing else got slower).
suites_ab() {
  local round value suite
  for round in 1 2; do
    for value in 0 1; do
      for suite in glm fusion; do
        echo "== $suite suite, build=$value (0 before, 1 after), round $round" >> $S
        FUSION_DEVICE=nvidia timeout 200 "$(build_of build $value)/bench_report" --suite $suite --no-baselines \
          --out "/tmp/$suite-$value-$round" > "/tmp/$suite-$value-$round.log" 2>&1
        echo "rc=$?" >> $S
        grep "| [0-9]" "/tmp/$suite-$value-$round/report.md" | cut -d'|' -f2-5 >> $S
      done
    done
  done
}
