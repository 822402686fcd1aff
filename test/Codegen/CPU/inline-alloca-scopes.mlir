// RUN: rope-opt %s --split-input-file --rope-inline-alloca-scopes | FileCheck %s

// The body replaces the scope; the scope's result is what the body returned.
// CHECK-LABEL: func.func @scope_with_result
// CHECK-SAME:    (%[[M:.+]]: memref<4xf32>, %[[I:.+]]: index)
// CHECK-NOT:     memref.alloca_scope
// CHECK:         %[[V:.+]] = memref.load %[[M]][%[[I]]] : memref<4xf32>
// CHECK-NEXT:    return %[[V]] : f32
func.func @scope_with_result(%m: memref<4xf32>, %i: index) -> f32 {
  %r = memref.alloca_scope -> f32 {
    %v = memref.load %m[%i] : memref<4xf32>
    memref.alloca_scope.return %v : f32
  }
  return %r : f32
}

// -----

// A parallel body in a scope, as convert-scf-to-openmp leaves it, with a
// nested scope: both are inlined in place, the loop stays.
// CHECK-LABEL: func.func @nested_in_parallel
// CHECK-SAME:    (%[[M:.+]]: memref<64xf32>)
// CHECK:         scf.parallel (%[[I:.+]]) =
// CHECK-NEXT:      %[[V:.+]] = memref.load %[[M]][%[[I]]]
// CHECK-NEXT:      %[[W:.+]] = arith.addf %[[V]], %[[V]] : f32
// CHECK-NEXT:      memref.store %[[W]], %[[M]][%[[I]]]
// CHECK-NEXT:      scf.reduce
// CHECK-NOT:     memref.alloca_scope
func.func @nested_in_parallel(%m: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    memref.alloca_scope {
      %v = memref.load %m[%i] : memref<64xf32>
      %w = arith.addf %v, %v : f32
      memref.alloca_scope {
        memref.store %w, %m[%i] : memref<64xf32>
      }
    }
    scf.reduce
  }
  return
}

// -----

// No scope: nothing changes, a stack allocation outside any scope included.
// CHECK-LABEL: func.func @no_scope
// CHECK-NEXT:    %[[A:.+]] = memref.alloca() : memref<4xf32>
// CHECK-NEXT:    %[[V:.+]] = memref.load %[[A]][%{{.+}}] : memref<4xf32>
// CHECK-NEXT:    return %[[V]] : f32
func.func @no_scope(%i: index) -> f32 {
  %a = memref.alloca() : memref<4xf32>
  %v = memref.load %a[%i] : memref<4xf32>
  return %v : f32
}
