// RUN: rope-opt %s --rope-set-kernel-min-blocks-per-sm | FileCheck %s
// RUN: rope-opt %s --rope-set-kernel-min-blocks-per-sm=min-blocks=2 | FileCheck %s --check-prefix=TWO
// RUN: not rope-opt %s --rope-set-kernel-min-blocks-per-sm=min-blocks=0 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: min-blocks must be in [1, 64], got 0

// Kernels get the minimum unless they state one; device functions that are
// not kernels are left alone.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @plain
    // CHECK-SAME:    nvvm.minctasm = 1 : i32
    // TWO-LABEL: gpu.func @plain
    // TWO-SAME:    nvvm.minctasm = 2 : i32
    gpu.func @plain() kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      gpu.return
    }
    // CHECK-LABEL: gpu.func @stated
    // CHECK-SAME:    nvvm.minctasm = 3 : i32
    gpu.func @stated() kernel attributes {nvvm.minctasm = 3 : i32} {
      gpu.return
    }
    // CHECK-LABEL: gpu.func @helper
    // CHECK-NOT:     nvvm.minctasm
    gpu.func @helper() {
      gpu.return
    }
  }
}
