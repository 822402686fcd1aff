// RUN: rope-opt %s --split-input-file --rope-lower-tile-products --cse | FileCheck %s

#a = affine_map<(mt, nt, m, n, kt, kp, k1) -> (mt, kt, m, kp, k1)>
#b = affine_map<(mt, nt, m, n, kt, kp, k1) -> (nt, kt, kp, n, k1)>
#c = affine_map<(mt, nt, m, n, kt, kp, k1) -> (mt, nt, m, n)>

// Two row panels × three column panels, K = 32 · 24: the slices of K are 12
// steps (the largest divisor of 24 up to 16), unrolled; each block loads its
// four accumulators, then per step two tiles of A's row panel and two of
// B's VNNI panel (its second one 16 columns on, element 32 of a 64-element
// row) for four products, and stores the accumulators.
// CHECK-LABEL: func.func @product
// CHECK: %[[A:.*]] = memref.collapse_shape %{{.*}} {{\[}}[0], [1], [2], [3, 4]] : memref<2x24x32x16x2xbf16> into memref<2x24x32x32xbf16>
// CHECK: %[[B:.*]] = memref.collapse_shape %{{.*}} {{\[}}[0], [1], [2], [3, 4]] : memref<3x24x16x32x2xbf16> into memref<3x24x16x64xbf16>
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C24:.*]] = arith.constant 24 : index
// CHECK: scf.for %[[PANEL:.*]] = %[[C0]] to %{{.*}} step %[[C8]] {
// CHECK: %[[C12:.*]] = arith.constant 12 : index
// CHECK: scf.for %[[SLICE:.*]] = %[[C0]] to %[[C24]] step %[[C12]] {
// CHECK: scf.for %[[I:.*]] = %[[C0]] to %{{.*}} step %[[C1]] {
// CHECK: scf.for %[[J:.*]] = %[[PANEL]] to %{{.*}} step %[[C1]] {
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK: %[[ACC:.*]] = amx.tile_load %[[CMEM:.*]][%[[I]], %[[J]], %[[C0]], %[[C0]]] : memref<2x3x32x32xf32> into !amx.tile<16x16xf32>
// CHECK: amx.tile_load %[[CMEM]][%[[I]], %[[J]], %[[C0]], %[[C16]]]
// CHECK: amx.tile_load %[[CMEM]][%[[I]], %[[J]], %[[C16]], %[[C0]]]
// CHECK: amx.tile_load %[[CMEM]][%[[I]], %[[J]], %[[C16]], %[[C16]]]
// CHECK: %[[K:.*]] = arith.addi %[[SLICE]], %[[C0]] : index
// CHECK: %[[A0:.*]] = amx.tile_load %[[A]][%[[I]], %[[K]], %[[C0]], %[[C0]]] : memref<2x24x32x32xbf16> into !amx.tile<16x32xbf16>
// CHECK: %[[A1:.*]] = amx.tile_load %[[A]][%[[I]], %[[K]], %[[C16]], %[[C0]]]
// CHECK: %[[B0:.*]] = amx.tile_load %[[B]][%[[J]], %[[K]], %[[C0]], %[[C0]]] : memref<3x24x16x64xbf16> into !amx.tile<16x32xbf16>
// CHECK: %[[B1:.*]] = amx.tile_load %[[B]][%[[J]], %[[K]], %[[C0]], %[[C32]]]
// CHECK: amx.tile_mulf %[[A0]], %[[B0]], %[[ACC]]
// CHECK: amx.tile_mulf %[[A0]], %[[B1]]
// CHECK: amx.tile_mulf %[[A1]], %[[B0]]
// CHECK: amx.tile_mulf %[[A1]], %[[B1]]
// CHECK-COUNT-44: amx.tile_mulf
// CHECK-NOT: amx.tile_mulf
// CHECK: amx.tile_store %[[CMEM]][%[[I]], %[[J]], %[[C0]], %[[C0]]]
// CHECK-COUNT-3: amx.tile_store
// CHECK-NOT: linalg.generic
func.func @product(%a: memref<2x24x32x16x2xbf16>, %b: memref<3x24x16x32x2xbf16>, %c: memref<2x3x32x32xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%a, %b : memref<2x24x32x16x2xbf16>, memref<3x24x16x32x2xbf16>) outs(%c : memref<2x3x32x32xf32>)
      attrs = {rope.tile_product} {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %0 = arith.extf %x : bf16 to f32
    %1 = arith.extf %y : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

#a = affine_map<(mt, nt, m, n, kt, kp, k1) -> (mt, kt, m, kp, k1)>
#b = affine_map<(mt, nt, m, n, kt, kp, k1) -> (nt, kt, kp, n, k1)>
#c = affine_map<(mt, nt, m, n, kt, kp, k1) -> (mt, nt, m, n)>

// Unmarked generics are left alone.
// CHECK-LABEL: func.func @unmarked
// CHECK: linalg.generic
// CHECK-NOT: amx.
func.func @unmarked(%a: memref<2x24x32x16x2xbf16>, %b: memref<3x24x16x32x2xbf16>, %c: memref<2x3x32x32xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%a, %b : memref<2x24x32x16x2xbf16>, memref<3x24x16x32x2xbf16>) outs(%c : memref<2x3x32x32xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %0 = arith.extf %x : bf16 to f32
    %1 = arith.extf %y : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}
