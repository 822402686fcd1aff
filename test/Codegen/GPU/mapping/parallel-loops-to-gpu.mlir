// RUN: rope-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(rope-parallel-loops-to-gpu{block-size=128},canonicalize,cse))' --verify-diagnostics | FileCheck %s

// A 2-d loop becomes one launch: the iteration space is linearised (last
// dimension fastest), cut into blocks of 128 threads, bounds-checked, and
// delinearised back into the induction variables.
// CHECK-LABEL: func.func @two_d
//  CHECK-SAME:   (%[[M:.+]]: memref<?x48xf32>, %[[N:.+]]: index)
//   CHECK-DAG:   %[[C0:.+]] = arith.constant 0 : index
//   CHECK-DAG:   %[[C48:.+]] = arith.constant 48 : index
//   CHECK-DAG:   %[[C128:.+]] = arith.constant 128 : index
//       CHECK:   %[[ROWS:.+]] = arith.maxsi %[[N]], %[[C0]]
//       CHECK:   %[[TOTAL:.+]] = arith.muli %[[ROWS]], %[[C48]]
//       CHECK:   %[[NONEMPTY:.+]] = arith.cmpi sgt, %[[TOTAL]], %[[C0]]
//       CHECK:   scf.if %[[NONEMPTY]] {
//       CHECK:     %[[BLOCKS:.+]] = arith.ceildivsi %[[TOTAL]], %[[C128]]
//       CHECK:     gpu.launch blocks(%[[BX:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %[[BLOCKS]], %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) threads(%[[TX:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %[[C128]],
//       CHECK:       %[[BASE:.+]] = arith.muli %[[BX]], %[[C128]]
//       CHECK:       %[[LIN:.+]] = arith.addi %[[BASE]], %[[TX]]
//       CHECK:       %[[IN:.+]] = arith.cmpi slt, %[[LIN]], %[[TOTAL]]
//       CHECK:       scf.if %[[IN]] {
//       CHECK:         %[[J:.+]] = arith.remui %[[LIN]], %[[C48]]
//       CHECK:         %[[I:.+]] = arith.divui %[[LIN]], %[[C48]]
//       CHECK:         memref.store %{{.+}}, %[[M]][%[[I]], %[[J]]] : memref<?x48xf32>
//       CHECK:       gpu.terminator
//   CHECK-NOT:   scf.parallel
func.func @two_d(%m: memref<?x48xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c48 = arith.constant 48 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c48) step (%c1, %c1) {
    memref.store %f, %m[%i, %j] : memref<?x48xf32>
    scf.reduce
  }
  return
}

// -----

// Work that touches buffers outside any parallel loop (a reduction with no
// parallel dimension) runs as a one-thread kernel, in one warp: a static
// loop gets no bigger block than it needs.
// CHECK-LABEL: func.func @serial_reduction
//       CHECK:   %[[C32:.+]] = arith.constant 32 : index
//       CHECK:   gpu.launch {{.+}} threads({{.+}}) in (%{{.+}} = %[[C32]],
//       CHECK:     memref.store %{{.+}}, %[[ACC:.+]][] : memref<i64>
//       CHECK:   gpu.launch
//       CHECK:     scf.for
//       CHECK:       memref.load
//       CHECK:       arith.maxsi
//       CHECK:       memref.store
//   CHECK-NOT:   gpu.launch
//       CHECK:   return
func.func @serial_reduction(%p: memref<9xi64>, %acc: memref<i64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c9 = arith.constant 9 : index
  %min = arith.constant -9223372036854775808 : i64
  memref.store %min, %acc[] : memref<i64>
  scf.for %i = %c0 to %c9 step %c1 {
    %x = memref.load %p[%i] : memref<9xi64>
    %a = memref.load %acc[] : memref<i64>
    %m = arith.maxsi %x, %a : i64
    memref.store %m, %acc[] : memref<i64>
  }
  return
}

// -----

// A 0-d copy is a load and a store with no loop: both go into the kernel.
// CHECK-LABEL: func.func @scalar_copy
//  CHECK-SAME:   (%[[SRC:.+]]: memref<i64>, %[[DST:.+]]: memref<i64>)
//       CHECK:   gpu.launch
//       CHECK:     %[[V:.+]] = memref.load %[[SRC]][] : memref<i64>
//       CHECK:     memref.store %[[V]], %[[DST]][] : memref<i64>
//       CHECK:     gpu.terminator
//  CHECK-NEXT:   }
//  CHECK-NEXT:   return
func.func @scalar_copy(%src: memref<i64>, %dst: memref<i64>) {
  %v = memref.load %src[] : memref<i64>
  memref.store %v, %dst[] : memref<i64>
  return
}

// -----

func.func @reduction_results(%m: memref<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{'scf.parallel' op with reductions cannot be mapped to GPU threads by rope-parallel-loops-to-gpu}}
  %sum = scf.parallel (%i) = (%c0) to (%c8) step (%c1) init (%zero) -> f32 {
    %x = memref.load %m[%i] : memref<8xf32>
    scf.reduce(%x : f32) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  }
  return %sum : f32
}

// -----

func.func @host_load(%m: memref<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'memref.load' op accesses GPU memory from host code: the computation it belongs to was not lowered to a parallel loop}}
  %x = memref.load %m[%c0] : memref<8xf32>
  return %x : f32
}
