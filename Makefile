# The two commands of the README's Quick start. Both first make sure an
# OpenCL runtime exists (installing PoCL when none is found).

.PHONY: demo test opencl

# On PoCL the tests' kernels build unoptimized (`-cl-opt-disable`) and once
# for any work-group size (no specialization): cold on a 2-core machine the
# test binaries' kernels built about 4x faster (2026-11-29, CONTRIBUTING.md),
# and at test sizes they run fast enough. Optimized builds are what GPUs,
# the examples and the quick report below run. The tests keep their own
# caches, so that no unoptimized binary reaches a normal run (the library's
# cache keys a binary by its source and device, not by PoCL's variables).
# Other drivers ignore the PoCL variables.
#
# Those caches live beside the default ones, in the user's cache folder, not
# in the checkout: a fresh clone on a machine that ran the tests before
# finds its kernels built, as the examples find theirs in the default
# caches. (CI from a fresh clone took 3022 s with the tests in the default
# caches, then 4745 s with them in `target/`, which starts empty every time.)
TEST_CACHES ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/clfuse-test-builds
POCL_TEST_BUILDS = POCL_EXTRA_BUILD_FLAGS=-cl-opt-disable POCL_WORK_GROUP_SPECIALIZATION=0 \
	POCL_CACHE_DIR=$(TEST_CACHES)/pocl FUSION_CACHE_DIR=$(TEST_CACHES)/kernels

# One build serves every run below: the same packages (the library's crates;
# the benchmark report's member, with plotters, faer and criterion, is built
# once, for its quick run), the same features (the optional ones too: the
# host-interop test, the conversions' doc tests and the sampler's tests and
# examples need them) and one profile, cargo's `test`, for the examples as
# well (`cargo run --profile test`; the test run has built them already).
# Cargo builds a crate again for every other feature set or profile: the
# root package alone with other features (or none of the optional ones) or
# `cargo run`'s `dev` profile would build the library, and the former the
# (large) test binaries, a second time. clippy and `make demo` build the
# default features. The report's member asks for these features too, and the
# root's dev-dependencies for the few its own dependencies add to shared
# crates (Cargo.toml says which), so that its build reuses theirs.
TEST_FEATURES = faer,ndarray,nuts
comma := ,
TESTS = $(POCL_TEST_BUILDS) cargo test --workspace --exclude clfuse-bench \
	--features clfuse/$(subst $(comma),$(comma)clfuse/,$(TEST_FEATURES))
EXAMPLE = cargo run --profile test --features $(TEST_FEATURES) --example

# The GLMs and inline products run again with xᵀ·v's last-group ending
# (below): two of each, or all of them when soaking.
ifdef FUSION_SOAK
LAST_GROUP_CASES = glm:: rev_inline_products::
else
LAST_GROUP_CASES = glm::bernoulli_logit glm::normal_id rev_inline_products::two_products_of_one_matrix_in_one_step rev_inline_products::a_likelihood_reads_its_product_inline_in_one_step
endif

opencl:
	@bash scripts/ensure-opencl.sh

demo: opencl
	cargo run --release --example demo

test: opencl
	# Every dependency in the lock file, optional ones too: trybuild's
	# compile-fail projects resolve the whole workspace offline.
	cargo fetch
	# The integration tests are one binary per area (tests/<area>/main.rs:
	# ops, linalg, rev, glm, runtime, dist, nuts (the multi-chain front end:
	# diagnostics against ArviZ, known posteriors); a module per topic), plus
	# host_interop (faer and ndarray, both directions): each binary links the
	# whole library, so new tests join a module instead of adding a binary.
	# The runs below pick modules with libtest filters (`-- module::`) and
	# reuse this run's binaries.
	# Cases too slow for CI run smaller unless FUSION_SOAK=1 (today
	# rev_proptest's random trees and dist's larger sizes; CONTRIBUTING.md's
	# testing section lists them).
	$(TESTS)
	# The GPUs' tiled GEMM kernel on this device too (the CPU default is the direct one).
	# (All of linalg: gemm, cholesky, triangular, adjoints.)
	FUSION_GEMM=32,8,32 $(TESTS) --test linalg
	# Read-backs on their own queue, as on GPUs (CPUs keep one queue by default);
	# a kernel's read-backs share one marker behind the in-order queue (ReadBatch).
	# (`glm::` also matches `golden_glm::`: skipped here and below, as before.)
	FUSION_TRANSFER_QUEUE=1 $(TESTS) --test glm --test ops --test runtime --test dist -- glm:: glm_errors:: ops_reductions:: buffer_pool:: checks:: --skip golden_glm::
	# The same on an out-of-order queue, where read-backs wait for their writers' events.
	FUSION_QUEUE=out-of-order FUSION_TRANSFER_QUEUE=1 $(TESTS) --test dist --test glm -- checks:: glm_errors::
	# The other staging layouts: the GLMs' xᵀ·d always in their kernel (rows
	# shared by work items, blocks prefetched) or never; rows split finer.
	FUSION_GLM_ONE_PASS=2 FUSION_STAGED_PER_WORK_ITEM=4 $(TESTS) --test glm --test ops -- glm:: ops_transpose_product:: --skip golden_glm::
	FUSION_GLM_ONE_PASS=0 FUSION_ROW_BLOCK_PREFETCH=0 FUSION_ROW_BLOCK_GROUP_SIZE=64 $(TESTS) --test glm --test ops -- glm:: ops_transpose_product:: --skip golden_glm::
	# xᵀ·v's groups' sums added up by its kernel's last group, on by default
	# only on GPUs (PoCL builds the ending's barriers slowly): its unit test,
	# the products, two GLMs and two likelihoods reading products inline
	# (every GLM and inline product with FUSION_SOAK=1; cold on a 2-core
	# machine, 2026-11-29: 221 s as here, 457 s all of them).
	FUSION_LAST_GROUP_SUMS=1 $(TESTS) --lib --test ops --test glm --test rev -- transpose_product $(LAST_GROUP_CASES) --skip golden_glm::
	# Sweeps (small launches run as one kernel), on by default only on GPUs:
	# the launch-count and reverse-pass tests with them on. (Not every test:
	# PoCL compiles a sweep of large kernels slowly, for minutes: not rev_replay, whose
	# models sweep whole reverse passes; it runs on the GPU, where sweeps are on.)
	FUSION_SWEEPS=1 $(TESTS) --test runtime --test rev -- sweeps:: kernel_cache:: rev_sweep:: rev_inline_products:: rev_nested:: rev_lent_adjoints::
	# Replays and interleaved chains with every matrix a buffer of its own
	# (small ones are sub-buffers of larger ones by default: arena.rs).
	FUSION_ARENA=0 $(TESTS) --test rev --test nuts -- rev_replay:: interleave::
	# Cross-thread ordering on an out-of-order queue too, where only event lists
	# order commands (PoCL's default queue is in order; see QueueMode::Auto).
	FUSION_QUEUE=out-of-order $(TESTS) --test runtime --test rev --test ops -- soundness_threads:: soundness_targets:: rev_structure:: rev_nested:: ops_reductions::
	$(EXAMPLE) user_function
	$(EXAMPLE) glm_composition
	$(EXAMPLE) autodiff_model -- --quick --compare-glm
	# The seeds' workflows at quick sizes; each checks its own answer.
	$(EXAMPLE) logistic_nuts -- --quick
	$(EXAMPLE) gp_nuts -- --quick --cpu-run 0
	$(EXAMPLE) eight_schools -- --quick
	$(EXAMPLE) regression -- --quick
	$(EXAMPLE) mixture_estep -- --quick
	$(EXAMPLE) dp_mixture -- --quick
	cargo run --profile test -p clfuse-bench --bin bench_report -- --quick --out target/bench-quick
