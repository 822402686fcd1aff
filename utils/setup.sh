#!/usr/bin/env bash
# Installs what rope-mlir needs from Debian's package registry. Idempotent: when
# every package is already present it does nothing (and needs no network).
#
#   setup.sh              the build and the lit suite
#   setup.sh --bench      also the benchmark baselines
#   setup.sh --frontends  also the frontend test tier's Python environment
#                         (utils/setup_frontends.sh: torch, torch-mlir and
#                         transformers from PyPI in a venv outside the checkout)
set -euo pipefail

PACKAGES=(
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools clang-22 lld-22 libomp-22-dev
  libclang-rt-22-dev
  clang-format-22
  cmake ninja-build ccache python3 python3-numpy
  # lit kills a test that runs past its time limit (test/lit.cfg.py) with psutil
  python3-psutil
  # venv + pip: the test that installs the Python package into a fresh venv
  python3-venv python3-pip
)

# `setup.sh --bench` adds the benchmark baselines (numpy on OpenBLAS, PyTorch
# CPU) and matplotlib for the plot.
if [ "${1:-}" = "--bench" ]; then
  PACKAGES+=(libopenblas0-pthread python3-torch python3-matplotlib)
fi

finish() {
  if [ "${1:-}" = "--frontends" ]; then
    exec bash "$(dirname "$0")/setup_frontends.sh"
  fi
  exit 0
}

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  finish "${1:-}"
fi

echo "setup: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
if ! $SUDO apt-get update -qq; then
  echo "setup: 'apt-get update' failed; cannot reach Debian's package registry" >&2
  exit 1
fi
if ! $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/tmp/rope-setup.log 2>&1; then
  tail -20 /tmp/rope-setup.log >&2
  echo "setup: failed to install: ${missing[*]} (full log: /tmp/rope-setup.log)" >&2
  exit 1
fi
echo "setup: done"
finish "${1:-}"
