# The two commands of the README's Quick start. Both first make sure an
# OpenCL runtime exists (installing PoCL when none is found).

.PHONY: demo test opencl

opencl:
	@bash scripts/ensure-opencl.sh

demo: opencl
	cargo run --release --example demo

test: opencl
	# Every dependency in the lock file, optional ones too: trybuild's
	# compile-fail projects resolve the whole workspace offline.
	cargo fetch
	# The library's crates; the benchmark report's member (plotters, faer,
	# criterion) is built once, below, for its quick run. The integration
	# tests are five binaries, one per area (tests/<area>/main.rs: ops,
	# linalg, rev, glm, runtime; a module per topic), plus host_interop
	# below: each binary links the whole library, so a few large ones build
	# far faster than one per file. The runs below pick modules with libtest
	# filters (`-- module::`). Cases too slow for CI run smaller unless
	# FUSION_SOAK=1 (today rev_proptest: 25 random-tree cases, 50 soaked;
	# CONTRIBUTING.md's testing section lists them).
	cargo test --workspace --exclude clfuse-bench
	# Host interop with faer and ndarray (optional features, both directions;
	# its own small binary, so that the features rebuild nothing else).
	cargo test --features faer,ndarray --test host_interop
	cargo test -p clfuse-core --features faer,ndarray --doc _conv
	# The GPUs' tiled GEMM kernel on this device too (the CPU default is the direct one).
	# (All of linalg: gemm, cholesky, triangular, adjoints.)
	FUSION_GEMM=32,8,32 cargo test --test linalg
	# Read-backs on their own queue, as on GPUs (CPUs keep one queue by default).
	# (`glm::` also matches `golden_glm::`: skipped here and below, as before.)
	FUSION_TRANSFER_QUEUE=1 cargo test --test glm --test ops --test runtime -- glm:: glm_errors:: ops_reductions:: buffer_pool:: --skip golden_glm::
	# The other staging layouts: the GLMs' xᵀ·d always in their kernel (rows
	# shared by work items, blocks prefetched) or never; rows split finer.
	FUSION_GLM_ONE_PASS=2 FUSION_STAGED_PER_WORK_ITEM=4 cargo test --test glm --test ops -- glm:: ops_transpose_product:: --skip golden_glm::
	FUSION_GLM_ONE_PASS=0 FUSION_ROW_BLOCK_PREFETCH=0 FUSION_ROW_BLOCK_GROUP_SIZE=64 cargo test --test glm --test ops -- glm:: ops_transpose_product:: --skip golden_glm::
	# Cross-thread ordering on an in-order queue too (the default run above is out of order).
	FUSION_QUEUE=in-order cargo test --test runtime --test rev -- soundness_threads:: rev_structure:: rev_nested::
	cargo run --example user_function
	cargo run --example glm_composition
	cargo run --example autodiff_model -- --quick --compare-glm
	# The seeds' workflows at quick sizes; each checks its own answer.
	cargo test --features nuts --doc nuts
	cargo run --features nuts --example logistic_nuts -- --quick
	cargo run --features nuts --example gp_nuts -- --quick
	cargo run --example mixture_estep -- --quick
	cargo run --release -p clfuse-bench --bin bench_report -- --quick --out target/bench-quick
