// RUN: rope-opt %s --rope-privatize-thread-buffers -split-input-file | FileCheck %s

// A temporary of static shape inside a parallel loop (one GPU thread per
// iteration) becomes a memref.alloca at the start of the outermost loop's
// body, out of the thread's inner key loop; its dealloc goes. A buffer
// outside any parallel loop and one of dynamic shape stay heap allocations.
// CHECK-LABEL: func.func @row_temporaries
//       CHECK:   memref.alloc() : memref<8xf32>
//       CHECK:   scf.parallel
//  CHECK-NEXT:     %[[T:.+]] = memref.alloca() {alignment = 64 : i64} : memref<1x32xf32>
//       CHECK:     scf.parallel
//       CHECK:       scf.for
//   CHECK-NOT:         memref.alloca
//       CHECK:         linalg.fill ins(%{{.+}} : f32) outs(%[[T]] : memref<1x32xf32>)
//       CHECK:         memref.alloc(%{{.+}}) : memref<?xf32>
//   CHECK-NOT: memref.dealloc %[[T]]
func.func @row_temporaries(%n: index, %out: memref<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %host = memref.alloc() : memref<8xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    scf.parallel (%j) = (%c0) to (%c4) step (%c1) {
      scf.for %k = %c0 to %n step %c1 {
        %t = memref.alloc() {alignment = 64 : i64} : memref<1x32xf32>
        linalg.fill ins(%zero : f32) outs(%t : memref<1x32xf32>)
        %d = memref.alloc(%n) : memref<?xf32>
        memref.dealloc %d : memref<?xf32>
        memref.dealloc %t : memref<1x32xf32>
      }
      scf.reduce
    }
    scf.reduce
  }
  memref.dealloc %host : memref<8xf32>
  return
}
