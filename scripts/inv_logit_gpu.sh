#!/bin/bash
# inv_logit with one division instead of two (issue #21's epilogue), one
# run: the epilogue and GLM test binaries on the NVIDIA device, then
# `bench_report --suite epilogue` and `--suite glm --no-baselines` built
# from the commit before the change (.gpu/bench_report_old) and after it,
# alternating, twice each.
source "$(dirname "$0")/gpu_tests.sh"
{
  run_test_binaries
  for round in 1 2; do
    for build in old new; do
      bin=./bench_report; [ "$build" = old ] && bin=./bench_report_old
      for suite in epilogue glm; do
        echo "== $suite, $build, round $round"
        timeout 120 $bin --suite $suite --no-baselines --out /tmp/$suite-$build-$round 2>&1 | tail -1
        mkdir -p "$OUT/$suite-$build-$round" && cp /tmp/$suite-$build-$round/report.md "$OUT/$suite-$build-$round/"
      done
    done
  done
} > "$OUT/summary.txt" 2>&1
cat "$OUT/summary.txt"
