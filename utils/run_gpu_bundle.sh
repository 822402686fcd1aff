#!/usr/bin/env bash
# Runs the GPU numerical tests, the GPU benchmarks and (where the machine has
# them) compute-sanitizer and ncu from a bundle made by
# `make gpu-bundle`, on a machine with an NVIDIA driver and python3 + numpy
# (+ PyTorch for the benchmark baselines), and no LLVM:
#   bash utils/run_gpu_bundle.sh [BUNDLE (build/gpu-bundle)] [RESULTS (benchmarks/results)]
# Exit status: non-zero if any test case, the benchmark or a checker failed.
set -u
cd "$(dirname "$0")/.."
BUNDLE=$(realpath "${1:-build/gpu-bundle}")
RESULTS=${2:-benchmarks/results}
mkdir -p "$RESULTS"
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
# The cooperative kernels under NVIDIA's checkers, where the machine has
# them: out-of-bounds and misaligned accesses, shared-memory races, barriers.
if command -v compute-sanitizer > /dev/null; then
  for tool in memcheck racecheck synccheck; do
    echo "== compute-sanitizer --tool $tool tensor_core_attention.py"
    compute-sanitizer --tool "$tool" --error-exitcode 1 --print-limit 5 \
      "$PYTHON" test/Integration/GPU/tensor_core_attention.py > "$RESULTS/gpu-$tool.log" 2>&1 \
      || { status=1; echo "FAILED (see $RESULTS/gpu-$tool.log)"; }
    grep -E "SUMMARY|case\(s\) failed" "$RESULTS/gpu-$tool.log"
  done
fi
# Where the attention kernel's time goes (one call of the largest GQA case).
if command -v ncu > /dev/null; then
  echo "== ncu: attention bf16 32/8 S=8192"
  ncu --clock-control none -k regex:attention -c 3 --section SpeedOfLight \
    --section Occupancy --section LaunchStats --section WarpStateStats \
    --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    "$PYTHON" benchmarks/gpu.py --case "attention bf16 32/8 S=8192" > "$RESULTS/gpu-ncu.txt" 2>&1 \
    || echo "ncu failed (see $RESULTS/gpu-ncu.txt)"
fi
echo "run_gpu_bundle: $([ $status = 0 ] && echo all passed || echo FAILURES)"
exit $status
