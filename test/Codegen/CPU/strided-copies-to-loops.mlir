// RUN: rope-opt %s --split-input-file --rope-strided-copies-to-loops | FileCheck %s
// RUN: rope-opt %s --split-input-file --rope-strided-copies-to-loops --convert-linalg-to-loops | FileCheck %s --check-prefix=LOOPS

// A decode step's KV cache, as bufferization writes tensor.concat: the old
// cache into a strided slice of the new one. Without the pass the LLVM
// conversion calls memrefCopy (one element per memcpy); with it the copy is
// a linalg.copy, then loops whose innermost one runs along the contiguous dim.
// CHECK-LABEL: func.func @cache_into_longer_cache
// CHECK-SAME:    (%[[OLD:.+]]: memref<1x8x?x128xf32>, %[[NEW:.+]]: memref<1x8x?x128xf32>)
// CHECK:         %[[SLICE:.+]] = memref.subview %[[NEW]]
// CHECK-NOT:     memref.copy
// CHECK:         linalg.copy ins(%[[OLD]] : memref<1x8x?x128xf32>) outs(%[[SLICE]] : memref<1x8x?x128xf32, strided<[?, ?, 128, 1]>>)
// LOOPS-LABEL: func.func @cache_into_longer_cache
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
