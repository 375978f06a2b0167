#!/bin/bash
# Last-group sums of xᵀ·v (#35): the kernel that computes xᵀ·v adds up its
# work-groups' sums itself (its last group), instead of a second kernel.
# Compares the build before (.gpu/old/) with this one (.gpu/) in one lease
# (device tool, carry .gpu):
#   bash scripts/last_group_gpu.sh tests   the ops, glm and rev tests and fusion-ops' own; then
#                                          those of xᵀ·v with FUSION_LAST_GROUP_SUMS=0
#   bash scripts/last_group_gpu.sh bench   the dist suite, before / after alternating, profiles;
#                                          then the GLM suite, before / after alternating
#   bash scripts/last_group_gpu.sh ab      the dist suite only, three times two alternating rounds
#   bash scripts/last_group_gpu.sh many    the dist suite only, before / after alternating ROUNDS
#                                          (default 10) times, one line per run; then this build
#                                          with 64, 256 and 512 work items per row-block group
#                                          (FUSION_ROW_BLOCK_GROUP_SIZE), timed and profiled
# then `MODES=after ROUNDS=2 bash scripts/chains_gpu.sh runs; bash scripts/chains_gpu.sh peers`.
source "$(dirname "$0")/lease.sh"
export FUSION_DEVICE=nvidia
[ -f "$bin/bins.tgz" ] && tar xzf "$bin/bins.tgz" -C "$bin"
case $1 in
  tests)
    W=/tmp/tests; mkdir -p $W
    run_tests "ops_lib_tests transpose_product" "ops_lib_tests scalar_sums" \
      "ops_tests transpose" "glm_tests glm" "rev_tests rev_"
    cp $W/*.txt "$OUT/" 2>/dev/null
    # The second kernel on the GPU too (the CPUs' default).
    echo "== FUSION_LAST_GROUP_SUMS=0" >> "$S"
    W=/tmp/tests-off; mkdir -p $W; mkdir -p "$OUT/ending-off"
    FUSION_LAST_GROUP_SUMS=0 run_tests "ops_lib_tests transpose_product" \
      "ops_tests transpose" "glm_tests glm" "rev_tests rev_inline_products"
    cp $W/*.txt "$OUT/ending-off/" 2>/dev/null
    cat "$S" ;;
  bench)
    dist_ab build build
    bash "$here/glm_ab.sh" "$OUT/glm" 2 "$bin/old/bench_report|FUSION_X=0" "$bin/bench_report|FUSION_X=1" >> "$S" 2>&1
    rm -rf "$OUT"/glm/*/plots
    cat "$S" ;;
  ab)
    for tag in a b c; do dist_ab build $tag; done
    grep -E "==|normal_lpdf|4 chains" "$S" ;;
  many)
    {
      for round in $(seq ${ROUNDS:-10}); do
        for value in 0 1; do
          out="$OUT/many-$value-$round"
          timeout 100 "$(build_of build $value)/bench_report" --suite dist --reps ${REPS:-60} --out "$out" > /dev/null 2>&1
          echo "build=$value round=$round rc=$? $(grep -A6 '## diamonds' "$out/report.md" | grep -E 'normal_lpdf|4 chains' | cut -d'|' -f3,4 | tr '\n' ' ')"
          cp "$out/report.md" "$out.md"; rm -rf "$out"
        done
      done
      for size in 64 256 512; do
        out="$OUT/group-$size"
        FUSION_ROW_BLOCK_GROUP_SIZE=$size timeout 100 "$bin/bench_report" --suite dist --reps ${REPS:-60} --out "$out" > /dev/null 2>&1
        echo "group size $size: rc=$? $(grep -A6 '## diamonds' "$out/report.md" | grep -E 'normal_lpdf|4 chains' | cut -d'|' -f3,4 | tr '\n' ' ')"
        cp "$out/report.md" "$out.md"; rm -rf "$out"
        FUSION_ROW_BLOCK_GROUP_SIZE=$size FUSION_PROFILING=1 timeout 100 "$bin/bench_report" --suite dist --reps 5 --out "$out" > /dev/null 2>&1
        cp "$out/profiles.md" "$OUT/profiles-group-$size.md"; rm -rf "$out"
      done
    } >> "$S" 2>&1
    cat "$S" ;;
esac
