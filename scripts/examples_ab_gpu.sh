#!/bin/bash
# Whole 4-chain runs of the sampling examples before and after a change, one
# lease, alternating: .gpu/<example>_old and .gpu/<example> (release builds).
# There (device tool, carry .gpu): bash scripts/examples_ab_gpu.sh
source "$(dirname "$0")/lease.sh"
export FUSION_DEVICE=nvidia
cat "$S"
for example in eight_schools regression; do
  for which in old new; do
    b=.gpu/$example; [ $which = old ] && b=.gpu/${example}_old
    echo "== $example $which"
    timeout 200 $b > $OUT/$example-$which.log 2>&1
    echo "rc=$?"
    grep "whole run\|divergent" $OUT/$example-$which.log
  done
done
