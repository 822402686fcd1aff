# The two commands of the README:
#   make demo   set up, build, compile and run the bundled Llama-3.1-8B block
#   make check  set up, build, run the whole lit suite (with the random
#               differential test); also sets up the frontend tests' venv
#               (torch, torch-mlir, transformers; without network those tests
#               are UNSUPPORTED)
# and, for reliability work (docs/reliability.md):
#   make check-sanitize  the lit suite less its numerical sweeps, with a bounded
#                        libFuzzer run, on an ASan+UBSan build (build-asan/)
#   make fuzz            a longer libFuzzer run (FUZZ_SECONDS, default 600) in
#                        that build
# and, for GPU work (docs/gpu.md):
#   make gpu-bundle      compile the GPU tests and benchmarks ahead of time into
#                        $(BUILD)/gpu-bundle, for a GPU machine without LLVM
#                        (run there: bash utils/run_gpu_bundle.sh)
SHELL    := /bin/bash
BUILD    ?= build
LLVM_DIR ?= /usr/lib/llvm-22
PYTHON   ?= /usr/bin/python3

CMAKE_FLAGS = -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DMLIR_DIR=$(LLVM_DIR)/lib/cmake/mlir \
  -DLLVM_EXTERNAL_LIT=$(LLVM_DIR)/bin/lit \
  -DCMAKE_C_COMPILER=$(LLVM_DIR)/bin/clang -DCMAKE_CXX_COMPILER=$(LLVM_DIR)/bin/clang++ \
  -DLLVM_ENABLE_LLD=ON $(CCACHE_LAUNCHER)
# ccache and precompiled headers (CMakeLists.txt): ccache caches a compile
# that uses a precompiled header only with this sloppiness.
CCACHE := $(shell command -v ccache)
CCACHE_SLOPPINESS := pch_defines,time_macros,include_file_mtime,include_file_ctime
CCACHE_LAUNCHER = $(if $(CCACHE),"-DCMAKE_CXX_COMPILER_LAUNCHER=env;CCACHE_SLOPPINESS=$(CCACHE_SLOPPINESS);$(CCACHE)")

# The default build is what the demo and `make check` need: no fuzzer (it is
# built in the sanitizer tree, whose code is instrumented already).
BUILD_FLAGS = $(CMAKE_FLAGS)
ASAN_BUILD ?= build-asan
# -O1, as the sanitizers' documentation advises: it compiles in about half
# the time of -O3 (CI builds this tree from scratch after the default one).
# This tree also builds tools/rope-fuzz (ROPE_ENABLE_FUZZER follows
# ROPE_ENABLE_SANITIZERS), linking the same instrumented libraries.
ASAN_FLAGS  = $(CMAKE_FLAGS) -DROPE_ENABLE_SANITIZERS=ON \
  -DCMAKE_CXX_FLAGS_RELEASE=-O1 -DCMAKE_C_FLAGS_RELEASE=-O1
# allow_user_poisoning=0: see test/lit.cfg.py (mixed instrumented/uninstrumented
# LLVM allocators); libMLIR.so itself is not instrumented.
SANITIZER_ENV = ASAN_OPTIONS=allow_user_poisoning=0:halt_on_error=1:print_stacktrace=1:detect_leaks=1 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
FUZZ_SECONDS ?= 600

.PHONY: setup frontends configure build demo check check-sanitize fuzz bench gpu-bundle clean

setup:
	@bash utils/setup.sh

$(BUILD)/build.ninja: | setup
	cmake -S . -B $(BUILD) $(BUILD_FLAGS)

configure: setup $(BUILD)/build.ninja

# The frontend test tier's venv (utils/setup_frontends.sh), outside the checkout;
# a no-op once installed. Never fails `check`: without it the lit suite reports
# the tests that need torch as UNSUPPORTED.
frontends:
	@bash utils/setup.sh --frontends || echo "make: continuing without the frontend environment"

build: configure
	cmake --build $(BUILD)

demo: build
	PYTHONPATH=$(abspath $(BUILD))/python_packages ROPE_BUILD_DIR=$(abspath $(BUILD)) $(PYTHON) examples/demo.py

# lit prints its own report; the last line is the plain `N passed, N failed`.
check: build frontends
	@set -o pipefail; cmake --build $(BUILD) --target check-rope 2>&1 | tee $(BUILD)/check.log; \
	  status=$$?; $(PYTHON) utils/lit_summary.py $(BUILD)/check.log; exit $$status

# The lit suite (less the numerical sweeps that say UNSUPPORTED: asan;
# docs/reliability.md) with our code (libraries, rope-opt, plugin) built with
# ASan+UBSan and assertions; ends with `N passed, N failed` like `check`.
check-sanitize: setup
	cmake -S . -B $(ASAN_BUILD) $(ASAN_FLAGS)
	cmake --build $(ASAN_BUILD)
	@set -o pipefail; $(SANITIZER_ENV) cmake --build $(ASAN_BUILD) --target check-rope 2>&1 \
	  | tee $(ASAN_BUILD)/check.log; \
	  status=$$?; $(PYTHON) utils/lit_summary.py $(ASAN_BUILD)/check.log; exit $$status

# A longer fuzzing run than the bounded one in `check-sanitize`, on the whole
# seed corpus. The corpus grows in $(FUZZ_DIR)/corpus across runs; crashes
# land in $(FUZZ_DIR)/artifacts. FUZZ_MUTATE=tokens: the token mode
# (MLIR-aware edits; docs/reliability.md).
FUZZ_DIR     ?= $(ASAN_BUILD)/fuzz
FUZZ_MUTATE  ?=
fuzz: setup
	cmake -S . -B $(ASAN_BUILD) $(ASAN_FLAGS)
	cmake --build $(ASAN_BUILD) --target rope-fuzz RopePythonPackage
	@mkdir -p $(FUZZ_DIR)/corpus $(FUZZ_DIR)/artifacts
	$(PYTHON) tools/rope-fuzz/make-corpus.py $(FUZZ_DIR)/seeds
	PYTHONPATH=$(abspath $(ASAN_BUILD))/python_packages:$(abspath test/lib/python) $(PYTHON) test/Integration/CPU/differential_random.py \
	  --emit-seeds $(FUZZ_DIR)/seeds --cases 200
	@set -o pipefail; $(SANITIZER_ENV) ROPE_FUZZ_MUTATE=$(FUZZ_MUTATE) $(ASAN_BUILD)/bin/rope-fuzz $(FUZZ_DIR)/corpus $(FUZZ_DIR)/seeds \
	  -dict=tools/rope-fuzz/rope.dict -max_total_time=$(FUZZ_SECONDS) -max_len=4096 \
	  -timeout=30 -rss_limit_mb=4096 -print_final_stats=1 \
	  -artifact_prefix=$(FUZZ_DIR)/artifacts/ 2>&1 | tee $(FUZZ_DIR)/fuzz.log | tail -25

# Benchmarks against numpy/OpenBLAS, PyTorch CPU and a plain copy; writes
# benchmarks/results/ (table + plot), then the Hugging Face family sweep
# (benchmarks/results/hf-families.md). Never part of `check`.
bench: build frontends
	@bash utils/setup.sh --bench
	PYTHONPATH=$(abspath $(BUILD))/python_packages ROPE_BUILD_DIR=$(abspath $(BUILD)) $(PYTHON) benchmarks/run.py
	$(PYTHON) benchmarks/gpu_static.py || echo "make: gpu_static.py needs ptxas and the frontend environment (torch, cuobjdump)"
	PYTHONPATH=$(abspath $(BUILD))/python_packages "$${ROPE_FRONTENDS_VENV:-$$HOME/.cache/rope-mlir/venv-frontends}/bin/python" benchmarks/torch_backend.py \
	  || echo "make: torch_backend.py needs the frontend environment (torch, torch-mlir, transformers)"
	PYTHONPATH=$(abspath $(BUILD))/python_packages "$${ROPE_FRONTENDS_VENV:-$$HOME/.cache/rope-mlir/venv-frontends}/bin/python" benchmarks/hf_family_sweep.py \
	  || echo "make: hf_family_sweep.py needs the frontend environment (torch, torch-mlir, transformers)"

# Every GPU test case and benchmark module compiled for GPU_CHIP into one
# folder of small shared libraries plus libRopeCudaRuntime.so and
# libRopeRuntime.so (a few MiB):
# what a GPU machine with only the NVIDIA driver needs, besides this checkout.
GPU_CHIP   ?= sm_90
GPU_BUNDLE ?= $(BUILD)/gpu-bundle
gpu-bundle: build
	@rm -rf $(GPU_BUNDLE); mkdir -p $(GPU_BUNDLE)
	@set -e; for f in test/Integration/GPU/*.py benchmarks/gpu.py; do \
	  ROPE_GPU_COMPILE_ONLY=1 ROPE_GPU_CHIP=$(GPU_CHIP) ROPE_KERNEL_CACHE=$(abspath $(GPU_BUNDLE)) \
	  PYTHONPATH=$(abspath $(BUILD))/python_packages:$(abspath test/lib/python) $(PYTHON) $$f > /dev/null; done
	@echo "$(GPU_BUNDLE): $$(ls $(GPU_BUNDLE) | wc -l) files, $$(du -sh $(GPU_BUNDLE) | cut -f1)"

clean:
	rm -rf $(BUILD)
