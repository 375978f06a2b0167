# The two commands of the README's Quick start. Both first make sure an
# OpenCL runtime exists (installing PoCL when none is found).

.PHONY: demo test opencl

opencl:
	@bash scripts/ensure-opencl.sh

demo: opencl
	cargo run --release --example demo

# POCL_KERNEL_CACHE=0: PoCL 3.1 (Debian 12) sometimes aborts with "Failed to
# create kernel compiler pass" when a process loads programs from its on-disk
# kernel cache; building from source every time avoids it (see README).
test: opencl
	POCL_KERNEL_CACHE=0 cargo test --workspace
	POCL_KERNEL_CACHE=0 cargo run --release --example bench_report -- --quick --out target/bench-quick
