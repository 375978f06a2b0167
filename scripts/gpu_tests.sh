# Sourced by the GPU scripts: registers NVIDIA's OpenCL driver, selects it,
# moves into .gpu/ and defines `run_test_binaries`, which runs every test
# binary copied into .gpu/tests/ and prints each one's verdict, and
# `tensor_then_portable`, which runs a bench_report suite with tensor cores
# and with FUSION_GEMM=portable, then cuBLAS / cuSOLVER through PyTorch.
echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export FUSION_DEVICE=nvidia
cd "$(dirname "${BASH_SOURCE[0]}")/../.gpu" || exit 1

run_test_binaries() {
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  for t in tests/*; do
    echo "== $t"
    timeout 240 "$t" --test-threads=2 2>&1 | grep -E "test result|panicked|Error|assert" | tail -6
  done
}

# tensor_then_portable SUITE TIMEOUT [ARGS OF THE TENSOR-CORE RUN...]:
# reports in $OUT/tensor and $OUT/portable, the peers in $OUT/cublas.json.
tensor_then_portable() {
  local suite=$1 limit=$2
  shift 2
  echo "== $suite suite, tensor cores (default)"
  timeout "$limit" ./bench_report --suite "$suite" "$@" --out /tmp/tc 2>&1 | tail -1
  mkdir -p "$OUT/tensor" && cp /tmp/tc/*.md "$OUT/tensor/"
  echo "== $suite suite, FUSION_GEMM=portable"
  # Timed without profiling, whatever the tensor-core run had.
  FUSION_GEMM=portable env -u FUSION_PROFILING timeout "$limit" ./bench_report --suite "$suite" --out /tmp/portable 2>&1 | tail -1
  mkdir -p "$OUT/portable" && cp /tmp/portable/report.md "$OUT/portable/"
  echo "== PyTorch (cuBLAS / cuSOLVER)"
  timeout 200 python3 ../scripts/linalg_reference.py "$OUT/cublas.json" 2>&1 | tail -9
}
