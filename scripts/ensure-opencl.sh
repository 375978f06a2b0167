#!/usr/bin/env bash
# Makes sure an OpenCL runtime exists: the ICD loader (libOpenCL.so.1) and at
# least one vendor driver (/etc/OpenCL/vendors/*.icd). When either is missing,
# installs PoCL, the portable CPU implementation, with the system package manager.
set -euo pipefail

have_loader() { { ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null; } | grep -q 'libOpenCL\.so\.1'; }
have_driver() { compgen -G '/etc/OpenCL/vendors/*.icd' >/dev/null || [ -n "${OCL_ICD_VENDORS:-}" ]; }

if have_loader && have_driver; then
  exit 0
fi

echo "fusion: no OpenCL runtime found; installing PoCL (pocl-opencl-icd, ocl-icd-libopencl1)." >&2
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo_cmd=(sudo)
  else
    echo "fusion: not root and no sudo; install pocl-opencl-icd and ocl-icd-libopencl1 yourself." >&2
    exit 1
  fi
fi

if command -v apt-get >/dev/null 2>&1; then
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq pocl-opencl-icd ocl-icd-libopencl1 clinfo
elif command -v dnf >/dev/null 2>&1; then
  "${sudo_cmd[@]}" dnf install -y pocl ocl-icd clinfo
elif command -v pacman >/dev/null 2>&1; then
  "${sudo_cmd[@]}" pacman -S --noconfirm pocl ocl-icd clinfo
else
  echo "fusion: unknown package manager; install PoCL and an OpenCL ICD loader yourself." >&2
  exit 1
fi
echo "fusion: PoCL installed." >&2
