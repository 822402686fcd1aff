#!/usr/bin/env bash
# Runs the GPU numerical tests and the GPU benchmarks from a bundle made by
# `make gpu-bundle`, on a machine with an NVIDIA driver and python3 + numpy
# (+ PyTorch for the benchmark baselines), and no LLVM:
#   bash utils/run_gpu_bundle.sh [BUNDLE (build/gpu-bundle)] [RESULTS (benchmarks/results)]
# Exit status: non-zero if any test case or the benchmark failed.
set -u
cd "$(dirname "$0")/.."
BUNDLE=$(realpath "${1:-build/gpu-bundle}")
RESULTS=${2:-benchmarks/results}
export ROPE_KERNEL_CACHE="$BUNDLE" ROPE_PREBUILT_ONLY=1 PYTHONPATH=python:test/lib/python PYTHONUNBUFFERED=1
PYTHON=${PYTHON:-python3}

command -v nvidia-smi > /dev/null && nvidia-smi -L
status=0
for test in test/Integration/GPU/*.py; do
  echo "== $test"
  "$PYTHON" "$test" || status=1
done
echo "== benchmarks/gpu.py"
"$PYTHON" benchmarks/gpu.py "$RESULTS" || status=1
echo "run_gpu_bundle: $([ $status = 0 ] && echo all passed || echo FAILURES)"
exit $status
