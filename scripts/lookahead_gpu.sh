#!/bin/bash
# Issue #37, the Cholesky's lookahead (a second queue), one lease: the linalg
# and side-queue tests, then the Cholesky, its adjoint, cuSOLVER, the GP
# gradient and JAX with FUSION_CHOLESKY_LOOKAHEAD 0 and 128 alternating
# (scripts/cholesky_ab_gpu.sh); then the GLM and fused-expression suites of
# the build before the change (.gpu/old/bench_report) and after
# (.gpu/bench_report) alternating, two rounds (every launch now asks which
# queue it goes to). Device tool, carry .gpu: bash scripts/lookahead_gpu.sh
AB=FUSION_CHOLESKY_LOOKAHEAD VALUES="0 128" bash "$(dirname "$0")/cholesky_ab_gpu.sh" > /dev/null
source "$(dirname "$0")/lease.sh"
suites_ab
cat $S
