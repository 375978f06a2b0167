# Sourced by the lease scripts (scripts/*_gpu.sh) first: registers NVIDIA's
# OpenCL driver, sets $here (scripts/), $bin (the release binaries in .gpu/)
# and $S (the summary in $OUT), and heads the summary with the date, the
# GPU, its driver and the host's cores.
echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
here=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
bin="$here/../.gpu"
S=$OUT/summary.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } >> "$S"
