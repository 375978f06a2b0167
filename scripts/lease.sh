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
