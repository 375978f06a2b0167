# Sourced by the GPU scripts: registers NVIDIA's OpenCL driver, selects it,
# moves into .gpu/ and defines `run_test_binaries`, which runs every test
# binary copied into .gpu/tests/ and prints each one's verdict.
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
