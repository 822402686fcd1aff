# The two commands of the README:
#   make demo   set up, build, compile and run the bundled Llama-3.1-8B block
#   make check  set up, build, run the whole lit suite
SHELL    := /bin/bash
BUILD    ?= build
LLVM_DIR ?= /usr/lib/llvm-22
PYTHON   ?= /usr/bin/python3

CMAKE_FLAGS = -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DMLIR_DIR=$(LLVM_DIR)/lib/cmake/mlir \
  -DLLVM_EXTERNAL_LIT=$(LLVM_DIR)/bin/lit \
  -DCMAKE_C_COMPILER=$(LLVM_DIR)/bin/clang -DCMAKE_CXX_COMPILER=$(LLVM_DIR)/bin/clang++ \
  -DLLVM_ENABLE_LLD=ON -DCMAKE_CXX_COMPILER_LAUNCHER=$(shell command -v ccache)

.PHONY: setup configure build demo check bench clean

setup:
	@bash utils/setup.sh

$(BUILD)/build.ninja: | setup
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

configure: setup $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD)

demo: build
	PYTHONPATH=python ROPE_BUILD_DIR=$(abspath $(BUILD)) $(PYTHON) examples/demo.py

# lit prints its own report; the last line is the plain `N passed, N failed`.
check: build
	@set -o pipefail; cmake --build $(BUILD) --target check-rope 2>&1 | tee $(BUILD)/check.log; \
	  status=$$?; $(PYTHON) utils/lit_summary.py $(BUILD)/check.log; exit $$status

# Benchmarks against numpy/OpenBLAS, PyTorch CPU and a plain copy; writes
# benchmarks/results/ (table + plot). Never part of `check`.
bench: build
	@bash utils/setup.sh --bench
	PYTHONPATH=python ROPE_BUILD_DIR=$(abspath $(BUILD)) $(PYTHON) benchmarks/run.py

clean:
	rm -rf $(BUILD)
