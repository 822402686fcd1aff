// RUN: rope-opt %s --split-input-file --rope-strided-copies-to-loops | FileCheck %s
// RUN: rope-opt %s --split-input-file --rope-strided-copies-to-loops --convert-linalg-to-loops | FileCheck %s --check-prefix=LOOPS

// A decode step's KV cache, as bufferization writes tensor.concat: the old
// cache into a strided slice of the new one. Without the pass the LLVM
// conversion calls memrefCopy (one element per memcpy); with it the copy is
// a linalg.copy, then loops whose innermost one runs along the contiguous dim.
// Its size is not known to be small: the kv heads are split across the
// cores, one head's slice per iteration.
// CHECK-LABEL: func.func @cache_into_longer_cache
// CHECK-SAME:    (%[[OLD:.+]]: memref<1x8x?x128xf32>, %[[NEW:.+]]: memref<1x8x?x128xf32>)
// CHECK:         %[[SLICE:.+]] = memref.subview %[[NEW]]
// CHECK-NOT:     memref.copy
// CHECK:         scf.forall (%[[H:.+]]) in (8)
// CHECK-DAG:       %[[FROM:.+]] = memref.subview %[[OLD]][0, %[[H]], 0, 0] [1, 1, %{{.+}}, 128] [1, 1, 1, 1]
// CHECK-DAG:       %[[TO:.+]] = memref.subview %[[SLICE]][0, %[[H]], 0, 0] [1, 1, %{{.+}}, 128] [1, 1, 1, 1]
// CHECK:           linalg.copy ins(%[[FROM]] : memref<1x1x?x128xf32, {{.+}}>) outs(%[[TO]] : memref<1x1x?x128xf32, {{.+}}>)
// LOOPS-LABEL: func.func @cache_into_longer_cache
// LOOPS:         scf.forall
// LOOPS-COUNT-4: scf.for
// LOOPS:         memref.load
// LOOPS-NEXT:    memref.store
// LOOPS-NOT:     memref.copy
// LOOPS:         return
func.func @cache_into_longer_cache(%old: memref<1x8x?x128xf32>, %new: memref<1x8x?x128xf32>) {
  %c2 = arith.constant 2 : index
  %n = memref.dim %old, %c2 : memref<1x8x?x128xf32>
  %slice = memref.subview %new[0, 0, 0, 0] [1, 8, %n, 128] [1, 1, 1, 1] : memref<1x8x?x128xf32> to memref<1x8x?x128xf32, strided<[?, ?, 128, 1]>>
  memref.copy %old, %slice : memref<1x8x?x128xf32> to memref<1x8x?x128xf32, strided<[?, ?, 128, 1]>>
  return
}

// -----

// Copies the LLVM conversion makes one memcpy stay: identity layouts on both
// sides, a static contiguous slice, and unranked buffers (no loop nest).
// CHECK-LABEL: func.func @memcpy_copies_stay
// CHECK-COUNT-3: memref.copy
// CHECK-NOT:     linalg.copy
func.func @memcpy_copies_stay(%a: memref<4x8xf32>, %b: memref<4x8xf32>, %big: memref<16x8xf32>,
                              %ua: memref<*xf32>, %ub: memref<*xf32>) {
  memref.copy %a, %b : memref<4x8xf32> to memref<4x8xf32>
  %rows = memref.subview %big[4, 0] [4, 8] [1, 1] : memref<16x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 32>>
  memref.copy %a, %rows : memref<4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 32>>
  memref.copy %ua, %ub : memref<*xf32> to memref<*xf32>
  return
}

// -----

// A strided copy that its static shape shows to be small (8 KiB) stays one
// loop nest on one core.
// CHECK-LABEL: func.func @small_copy_stays_serial
// CHECK-NOT:     scf.forall
// CHECK:         linalg.copy ins(%{{.+}} : memref<16x128xf32>) outs(%{{.+}} : memref<16x128xf32, strided<[256, 1]>>)
func.func @small_copy_stays_serial(%a: memref<16x128xf32>, %b: memref<16x256xf32>) {
  %half = memref.subview %b[0, 0] [16, 128] [1, 1] : memref<16x256xf32> to memref<16x128xf32, strided<[256, 1]>>
  memref.copy %a, %half : memref<16x128xf32> to memref<16x128xf32, strided<[256, 1]>>
  return
}
