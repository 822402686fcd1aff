// RUN: rope-opt %s --rope-lower-runtime-checks --split-input-file | FileCheck %s

// A rope.assert becomes a branch to the rope runtime's report, with its
// message as a constant string and its values in a stack array of i64.
// CHECK-LABEL: func.func @rope_assert
// CHECK-SAME: (%[[OK:.+]]: i1, %[[A:.+]]: index, %[[B:.+]]: i32)
// CHECK: %[[FAILED:.+]] = arith.xori %[[OK]], %{{.+}} : i1
// CHECK: scf.if %[[FAILED]] {
// CHECK:   %[[MSG:.+]] = llvm.mlir.addressof @__rope_check_message_0 : !llvm.ptr
// CHECK:   %[[N:.+]] = llvm.mlir.constant(2 : i64) : i64
// CHECK:   %[[VALUES:.+]] = llvm.alloca %[[N]] x i64
// CHECK:   %[[A64:.+]] = arith.index_cast %[[A]] : index to i64
// CHECK:   llvm.store %[[A64]]
// CHECK:   %[[B64:.+]] = arith.extsi %[[B]] : i32 to i64
// CHECK:   llvm.store %[[B64]]
// CHECK:   llvm.call @ropeRuntimeError(%[[MSG]], %[[N]], %[[VALUES]])
// CHECK: }
// CHECK-NOT: rope.assert
// CHECK: return
// CHECK: llvm.func @ropeRuntimeError(!llvm.ptr, i64, !llvm.ptr) attributes {passthrough = ["noreturn"]}
// CHECK: llvm.mlir.global private constant @__rope_check_message_0("got {0} and {1}\00")
func.func @rope_assert(%ok: i1, %a: index, %b: i32) {
  rope.assert %ok, "got {0} and {1}" (%a, %b : index, i32)
  return
}

// -----

// cf.assert (e.g. from upstream's runtime verification) reports the same
// way, with no values; equal messages share one string.
// CHECK-LABEL: func.func @cf_assert
// CHECK-COUNT-2: llvm.call @ropeRuntimeError(%{{.+}}, %{{.+}}, %{{.+}}) : (!llvm.ptr, i64, !llvm.ptr) -> ()
// CHECK-NOT: cf.assert
// CHECK: llvm.mlir.global private constant @__rope_check_message_0("out of bounds\00")
// CHECK-NOT: llvm.mlir.global
func.func @cf_assert(%ok: i1, %also: i1) {
  cf.assert %ok, "out of bounds"
  cf.assert %also, "out of bounds"
  return
}

// -----

// Device code keeps its asserts for upstream's GPU lowering.
// CHECK-LABEL: gpu.module @kernels
// CHECK: cf.assert
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @kernel(%ok: i1) kernel {
      cf.assert %ok, "device"
      gpu.return
    }
  }
}
