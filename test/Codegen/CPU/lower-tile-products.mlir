// RUN: rope-opt %s --split-input-file --rope-lower-tile-products --cse | FileCheck %s

#a = affine_map<(mt, nt, m, n, kt, kp, k1) -> (mt, m, kt, kp, k1)>
#b = affine_map<(mt, nt, m, n, kt, kp, k1) -> (nt, kt, kp, n, k1)>
#c = affine_map<(mt, nt, m, n, kt, kp, k1) -> (mt, m, nt, n)>

// Two row panels × three column panels, K = 32 · 24: A and C row-major
// (their rows of 32 as they are), B in VNNI panels. A slice of K is all 24
// steps (the largest divisor of 24 up to 64), unrolled; each block loads
// its four accumulators, then per step two tiles of A's row panel (16 rows
// at A's stride, 32 k apart per step) and two of B's panel (its second one
// 16 columns on, element 32 of a 64-element row) for four products, with
// seven prefetches of the lines the next block reads (its accumulators'
// 64, and 4 rows × 24 steps of the next row panel's A); then stores. The
// function first checks that the host has the tiles (bf16 ones: 0).
// CHECK: llvm.func @ropeRequireCpuTiles(i8)
// CHECK-LABEL: func.func @product
// CHECK-NEXT: %[[BF16:.*]] = arith.constant 0 : i8
// CHECK-NEXT: llvm.call @ropeRequireCpuTiles(%[[BF16]]) : (i8) -> ()
// CHECK: %[[A:.*]] = memref.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3, 4]] : memref<2x32x24x16x2xbf16> into memref<2x32x768xbf16>
// CHECK: %[[B:.*]] = memref.collapse_shape %{{.*}} {{\[}}[0], [1], [2], [3, 4]] : memref<3x24x16x32x2xbf16> into memref<3x24x16x64xbf16>
// CHECK: %[[CMEM:.*]] = memref.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : memref<2x32x3x32xf32> into memref<2x32x96xf32>
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C24:.*]] = arith.constant 24 : index
// CHECK: scf.for %[[PANEL:.*]] = %[[C0]] to %{{.*}} step %[[C8]] {
// CHECK: scf.for %[[SLICE:.*]] = %[[C0]] to %[[C24]] step %[[C24]] {
// CHECK: scf.for %[[I:.*]] = %[[C0]] to %{{.*}} step %[[C1]] {
// CHECK: scf.for %[[J:.*]] = %[[PANEL]] to %{{.*}} step %[[C1]] {
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK: %[[COL:.*]] = arith.muli %[[J]], %[[C32]] : index
// CHECK: %[[COL16:.*]] = arith.addi %[[COL]], %[[C16]] : index
// CHECK: %[[ACC:.*]] = amx.tile_load %[[CMEM]][%[[I]], %[[C0]], %[[COL]]] : memref<2x32x96xf32> into !amx.tile<16x16xf32>
// CHECK: amx.tile_load %[[CMEM]][%[[I]], %[[C0]], %[[COL16]]]
// CHECK: amx.tile_load %[[CMEM]][%[[I]], %[[C16]], %[[COL]]]
// CHECK: amx.tile_load %[[CMEM]][%[[I]], %[[C16]], %[[COL16]]]
// CHECK-COUNT-7: memref.prefetch
// CHECK: %[[A0:.*]] = amx.tile_load %[[A]][%[[I]], %[[C0]], %[[KCOL:.*]]] : memref<2x32x768xbf16> into !amx.tile<16x32xbf16>
// CHECK: %[[A1:.*]] = amx.tile_load %[[A]][%[[I]], %[[C16]], %[[KCOL]]]
// CHECK: %[[B0:.*]] = amx.tile_load %[[B]][%[[J]], %[[K:.*]], %[[C0]], %[[C0]]] : memref<3x24x16x64xbf16> into !amx.tile<16x32xbf16>
// CHECK: %[[B1:.*]] = amx.tile_load %[[B]][%[[J]], %[[K]], %[[C0]], %[[C32]]]
// CHECK: amx.tile_mulf %[[A0]], %[[B0]], %[[ACC]]
// CHECK: amx.tile_mulf %[[A0]], %[[B1]]
// CHECK: amx.tile_mulf %[[A1]], %[[B0]]
// CHECK: amx.tile_mulf %[[A1]], %[[B1]]
// CHECK-COUNT-92: amx.tile_mulf
// CHECK-NOT: amx.tile_mulf
// CHECK: amx.tile_store %[[CMEM]][%[[I]], %[[C0]], %[[COL]]]
// CHECK-COUNT-3: amx.tile_store
// CHECK-NOT: linalg.generic
func.func @product(%a: memref<2x32x24x16x2xbf16>, %b: memref<3x24x16x32x2xbf16>, %c: memref<2x32x3x32xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%a, %b : memref<2x32x24x16x2xbf16>, memref<3x24x16x32x2xbf16>) outs(%c : memref<2x32x3x32xf32>)
      attrs = {rope.tile_product = "amx"} {
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

#a = affine_map<(mt, nt, m, n, kt, kp, k1) -> (mt, m, kt, kp, k1)>
#b = affine_map<(mt, nt, m, n, kt, kp, k1) -> (nt, kt, kp, n, k1)>
#c = affine_map<(mt, nt, m, n, kt, kp, k1) -> (mt, m, nt, n)>

// Unmarked generics are left alone, and need no check.
// CHECK-LABEL: func.func @unmarked
// CHECK-NOT: ropeRequireCpuTiles
// CHECK: linalg.generic
// CHECK-NOT: amx.
func.func @unmarked(%a: memref<2x32x24x16x2xbf16>, %b: memref<3x24x16x32x2xbf16>, %c: memref<2x32x3x32xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%a, %b : memref<2x32x24x16x2xbf16>, memref<3x24x16x32x2xbf16>) outs(%c : memref<2x32x3x32xf32>) {
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

#a = affine_map<(mt, nt, m, n, kt, kp, k1) -> (mt, m, kt, kp, k1)>
#b = affine_map<(mt, nt, m, n, kt, kp, k1) -> (nt, kt, kp, n, k1)>
#c = affine_map<(mt, nt, m, n, kt, kp, k1) -> (mt, m, nt, n)>

// f16 tiles (tdpfp16ps): the check asks for amx-fp16 too (1).
// CHECK-LABEL: func.func @half
// CHECK-NEXT: %[[FP16:.*]] = arith.constant 1 : i8
// CHECK-NEXT: llvm.call @ropeRequireCpuTiles(%[[FP16]]) : (i8) -> ()
// CHECK: amx.tile_mulf {{.*}} : !amx.tile<16x32xf16>, !amx.tile<16x32xf16>, !amx.tile<16x16xf32>
func.func @half(%a: memref<1x32x1x16x2xf16>, %b: memref<1x1x16x32x2xf16>, %c: memref<1x32x1x32xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%a, %b : memref<1x32x1x16x2xf16>, memref<1x1x16x32x2xf16>) outs(%c : memref<1x32x1x32xf32>)
      attrs = {rope.tile_product = "amx"} {
  ^bb0(%x: f16, %y: f16, %acc: f32):
    %0 = arith.extf %x : f16 to f32
    %1 = arith.extf %y : f16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

#a = affine_map<(mt, nt, m, n, kt, kp, k1) -> (mt, m, kt, kp, k1)>
#b = affine_map<(mt, nt, m, n, kt, kp, k1) -> (nt, kt, kp, n, k1)>
#c = affine_map<(mt, nt, m, n, kt, kp, k1) -> (mt, m, nt, n)>

// AVX-512 BF16 dot products on the same layout: the same panels and
// slices (all 24 steps: the largest divisor up to 32); a block's 32 rows
// eight at a time, their 16 accumulators (8 rows × two registers of 16
// columns) loaded, carried through a loop over the slice's k pairs (B as
// [panels, K / 2, 64]: a pair's 32 columns are two registers), each row's
// pair of A broadcast to every lane and multiplying both, then stored.
// The function first checks that the host has the dot products.
// CHECK: llvm.func @ropeRequireCpuDotProducts()
// CHECK-LABEL: func.func @dot_products
// CHECK-NEXT: llvm.call @ropeRequireCpuDotProducts() : () -> ()
// CHECK-NOT: ropeRequireCpuTiles
// CHECK: %[[A:.*]] = memref.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3, 4]] : memref<2x32x24x16x2xbf16> into memref<2x32x768xbf16>
// CHECK: %[[BROWS:.*]] = memref.collapse_shape %{{.*}} {{\[}}[0], [1], [2], [3, 4]] : memref<3x24x16x32x2xbf16> into memref<3x24x16x64xbf16>
// CHECK: %[[B:.*]] = memref.collapse_shape %[[BROWS]] {{\[}}[0], [1, 2], [3]] : memref<3x24x16x64xbf16> into memref<3x384x64xbf16>
// CHECK: %[[CMEM:.*]] = memref.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : memref<2x32x3x32xf32> into memref<2x32x96xf32>
// CHECK: scf.for %[[PANEL:.*]] = %{{.*}} to %{{.*}} step %[[C8:.*]] {
// CHECK: scf.for %[[SLICE:.*]] = %{{.*}} to %[[C24:.*]] step %[[C24]] {
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: scf.for %[[J:.*]] = %[[PANEL]] to %{{.*}} step %{{.*}} {
// CHECK: %[[COL:.*]] = arith.muli %[[J]], %{{.*}} : index
// CHECK: %[[COL16:.*]] = arith.addi %[[COL]], %{{.*}} : index
// CHECK: %[[FIRST:.*]] = arith.muli %[[SLICE]], %{{.*}} : index
// CHECK: %[[END:.*]] = arith.addi %[[FIRST]], %{{.*}} : index
// CHECK: scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step %[[C8]] {
// CHECK: %[[ACC:.*]] = vector.load %[[CMEM]][%[[I]], %[[ROW]], %[[COL]]] : memref<2x32x96xf32>, vector<16xf32>
// CHECK: vector.load %[[CMEM]][%[[I]], %[[ROW]], %[[COL16]]] : memref<2x32x96xf32>, vector<16xf32>
// CHECK-COUNT-14: vector.load %[[CMEM]]
// CHECK: %[[SUMS:.*]]:16 = scf.for %[[P:.*]] = %[[FIRST]] to %[[END]] step %{{.*}} iter_args(%[[S0:.*]] = %[[ACC]], %[[S1:[^ ]*]] = %{{.*}}, {{.*}}) -> (vector<16xf32>, {{.*}}) {
// CHECK: %[[B0:.*]] = vector.load %[[B]][%[[J]], %[[P]], %{{.*}}] : memref<3x384x64xbf16>, vector<32xbf16>
// CHECK: %[[B1:.*]] = vector.load %[[B]][%[[J]], %[[P]], %{{.*}}] : memref<3x384x64xbf16>, vector<32xbf16>
// CHECK: %[[K:.*]] = arith.muli %[[P]], %{{.*}} : index
// CHECK: %[[PAIR:.*]] = vector.load %[[A]][%[[I]], %[[ROW]], %[[K]]] : memref<2x32x768xbf16>, vector<2xbf16>
// CHECK: %[[WORD:.*]] = vector.bitcast %[[PAIR]] : vector<2xbf16> to vector<1xi32>
// CHECK: %[[SCALAR:.*]] = vector.extract %[[WORD]][0] : i32 from vector<1xi32>
// CHECK: %[[LANES:.*]] = vector.broadcast %[[SCALAR]] : i32 to vector<16xi32>
// CHECK: %[[X:.*]] = vector.bitcast %[[LANES]] : vector<16xi32> to vector<32xbf16>
// CHECK: x86vector.avx512.dot %[[S0]], %[[X]], %[[B0]] : vector<32xbf16> -> vector<16xf32>
// CHECK: x86vector.avx512.dot %[[S1]], %[[X]], %[[B1]] : vector<32xbf16> -> vector<16xf32>
// CHECK-COUNT-14: x86vector.avx512.dot
// CHECK-NOT: x86vector.avx512.dot
// CHECK: scf.yield
// CHECK: vector.store %[[SUMS]]#0, %[[CMEM]][%[[I]], %[[ROW]], %[[COL]]] : memref<2x32x96xf32>, vector<16xf32>
// CHECK-COUNT-15: vector.store
// CHECK-NOT: amx.
// CHECK-NOT: linalg.generic
func.func @dot_products(%a: memref<2x32x24x16x2xbf16>, %b: memref<3x24x16x32x2xbf16>, %c: memref<2x32x3x32xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%a, %b : memref<2x32x24x16x2xbf16>, memref<3x24x16x32x2xbf16>) outs(%c : memref<2x32x3x32xf32>)
      attrs = {rope.tile_product = "avx512bf16"} {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %0 = arith.extf %x : bf16 to f32
    %1 = arith.extf %y : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}
