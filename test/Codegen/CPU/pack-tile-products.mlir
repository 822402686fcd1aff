// The features are given (the default, host, must not decide what this test
// checks): bf16 products go to the tiles only where amx-bf16 is named, f16
// ones only with amx-fp16; without tiles, bf16 products go to AVX-512 BF16
// dot products on the same layout where avx512bf16 is named (with
// avx512f), and stay as they are without either.
// RUN: rope-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(rope-pack-tile-products{cpu-features=amx-tile,amx-bf16}),canonicalize,cse)' | FileCheck %s
// RUN: rope-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(rope-pack-tile-products{cpu-features=avx512f,avx512bf16}),canonicalize,cse)' | FileCheck %s --check-prefix=DOT
// RUN: rope-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(rope-pack-tile-products{cpu-features=avx512f}))' | FileCheck %s --check-prefix=NOAMX
// RUN: rope-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(rope-pack-tile-products{cpu-features=avx512bf16}))' | FileCheck %s --check-prefix=NOAMX
// RUN: rope-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(rope-pack-tile-products{cpu-features=amx-tile,amx-bf16,amx-fp16}))' | FileCheck %s --check-prefix=FP16
// RUN: rope-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(rope-pack-tile-products{cpu-features=amx-tile,+amx-bf16,-amx-bf16}))' | FileCheck %s --check-prefix=NOAMX

// A projection over a run-time row count, W [out, in] read through the
// transpose: A and C keep their row-major layout, their rows padded to a
// multiple of 32; only W is packed, straight into the VNNI layout: its
// panels of 32 rows split over the cores, each a transposition of 32-bit
// words (a k pair of a row) in 16 × 16 blocks of registers (16 rows read,
// shuffled, 16 rows of the panel written), two blocks per 16 k pairs; the
// product is split over the cores by column panels, the padded rows dropped.
// CHECK-LABEL: func.func @projection
// CHECK-SAME: (%[[X:.*]]: tensor<?x256xbf16>, %[[W:.*]]: tensor<128x256xbf16>)
// CHECK: %[[PAD:.*]] = tensor.pad %[[X]] low[0, 0] high[%{{.*}}, 0]
// CHECK: %[[A:.*]] = tensor.expand_shape %[[PAD]] {{\[}}[0, 1], [2, 3, 4]] {{.*}} into tensor<?x32x8x16x2xbf16>
// CHECK: %[[CEXP:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2, 3]] {{.*}} into tensor<?x32x4x32xf32>
// CHECK: %[[C:.*]] = linalg.fill {{.*}} outs(%[[CEXP]] : tensor<?x32x4x32xf32>)
// CHECK: %[[WROWS:.*]] = tensor.expand_shape %[[W]] {{\[}}[0, 1], [2]] {{.*}} into tensor<4x32x256xbf16>
// CHECK: %[[BP:.*]] = scf.forall (%[[PANEL:.*]]) in (4) shared_outs(%[[PACK:.*]] = %{{.*}}) -> (tensor<4x128x64xbf16>)
// CHECK: %[[ROWS:.*]] = tensor.extract_slice %[[WROWS]][%[[PANEL]], 0, 0] [1, 32, 256] [1, 1, 1] : tensor<4x32x256xbf16> to tensor<32x256xbf16>
// CHECK: %[[OUT:.*]] = tensor.extract_slice %[[PACK]][%[[PANEL]], 0, 0] [1, 128, 64] [1, 1, 1] : tensor<4x128x64xbf16> to tensor<128x64xbf16>
// CHECK: %[[STEPS:.*]] = scf.for %[[KP:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[OUT]]) -> (tensor<128x64xbf16>)
// CHECK: %[[K:.*]] = arith.muli %[[KP]], %{{.*}} : index
// CHECK: vector.transfer_read %[[ROWS]][%{{.*}}, %[[K]]], %{{.*}} {in_bounds = [true]} : tensor<32x256xbf16>, vector<32xbf16>
// CHECK: vector.bitcast %{{.*}} : vector<32xbf16> to vector<16xi32>
// CHECK-COUNT-15: vector.transfer_read %[[ROWS]]
// CHECK-COUNT-64: vector.shuffle {{.*}} : vector<16xi32>, vector<16xi32>
// CHECK: vector.bitcast %{{.*}} : vector<16xi32> to vector<32xbf16>
// CHECK: vector.transfer_write %{{.*}}, %{{.*}}[%[[KP]], %{{.*}}] {in_bounds = [true]} : vector<32xbf16>, tensor<128x64xbf16>
// CHECK-COUNT-15: vector.transfer_write
// CHECK-COUNT-16: vector.transfer_read %[[ROWS]]
// CHECK-COUNT-64: vector.shuffle
// CHECK-COUNT-16: vector.transfer_write
// CHECK-NOT: vector.transfer_write
// CHECK: tensor.parallel_insert_slice %[[STEPS]] into %[[PACK]][%[[PANEL]], 0, 0] [1, 128, 64]
// CHECK: %[[B:.*]] = tensor.expand_shape %[[BP]] {{\[}}[0], [1, 2], [3, 4]] {{.*}} into tensor<4x8x16x32x2xbf16>
// CHECK: %[[P:.*]] = scf.forall (%[[T:.*]]) in (4) shared_outs(%[[OUT:.*]] = %[[C]]) -> (tensor<?x32x4x32xf32>)
// CHECK: %[[AS:.*]] = tensor.extract_slice %[[A]][0, 0, 0, 0, 0]
// CHECK: %[[BS:.*]] = tensor.extract_slice %[[B]][%[[T]], 0, 0, 0, 0] [1, 8, 16, 32, 2]
// CHECK: %[[CS:.*]] = tensor.extract_slice %[[OUT]][0, 0, %[[T]], 0] [%{{.*}}, 32, 1, 32]
// CHECK: linalg.generic
// CHECK-SAME: ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]
// CHECK-SAME: ins(%[[AS]], %[[BS]] : tensor<?x32x8x16x2xbf16>, tensor<1x8x16x32x2xbf16>) outs(%[[CS]] : tensor<?x32x1x32xf32>) attrs = {rope.tile_product = "amx"}
// CHECK: arith.extf
// CHECK: arith.extf
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[ROWS:.*]] = tensor.collapse_shape %[[P]] {{\[}}[0, 1], [2, 3]] : tensor<?x32x4x32xf32> into tensor<?x128xf32>
// CHECK: %[[R:.*]] = tensor.extract_slice %[[ROWS]][0, 0] [%{{.*}}, 128] [1, 1]
// CHECK-NOT: linalg.copy
// CHECK: return %[[R]]
// DOT-LABEL: func.func @projection
// DOT: scf.forall {{.*}} -> (tensor<4x128x64xbf16>)
// DOT: vector.shuffle
// DOT: scf.forall
// DOT: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x32x8x16x2xbf16>, tensor<1x8x16x32x2xbf16>) outs(%{{.*}} : tensor<?x32x1x32xf32>) attrs = {rope.tile_product = "avx512bf16"}
// NOAMX-LABEL: func.func @projection
// NOAMX-NOT: rope.tile_product
// NOAMX: linalg.matmul
func.func @projection(%x: tensor<?x256xbf16>, %w: tensor<128x256xbf16>) -> tensor<?x128xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %s = tensor.dim %x, %c0 : tensor<?x256xbf16>
  %e = tensor.empty(%s) : tensor<?x128xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x128xf32>) -> tensor<?x128xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(s, o, i) -> (s, i)>, affine_map<(s, o, i) -> (o, i)>, affine_map<(s, o, i) -> (s, o)>]
      ins(%x, %w : tensor<?x256xbf16>, tensor<128x256xbf16>) outs(%z : tensor<?x128xf32>) -> tensor<?x128xf32>
  return %r : tensor<?x128xf32>
}

// -----

// A batch_matmul with B [b, k, n] and an accumulator that is not a fill:
// A and the accumulator are only viewed in tiles (64 rows need no padding),
// B's pack moves k pairs innermost (its outer dims permuted), and the
// product is split by batch entry and column panel, in place in the
// accumulator.
// CHECK-LABEL: func.func @batched
// CHECK-SAME: (%[[A:.*]]: tensor<2x64x64xbf16>, %[[B:.*]]: tensor<2x64x64xbf16>, %[[ACC:.*]]: tensor<2x64x64xf32>)
// CHECK: tensor.expand_shape %[[A]] {{\[}}[0], [1, 2], [3, 4, 5]] {{.*}} into tensor<2x2x32x2x16x2xbf16>
// CHECK: %[[C:.*]] = tensor.expand_shape %[[ACC]] {{\[}}[0], [1, 2], [3, 4]] {{.*}} into tensor<2x2x32x2x32xf32>
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x32x2x2x32xbf16>) {{.*}} permutation = [0, 3, 1, 4, 2]
// CHECK: %[[P:.*]] = scf.forall (%{{.*}}, %{{.*}}) in (2, 2) shared_outs(%{{.*}} = %[[C]])
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x32x1x32xf32>) attrs = {rope.tile_product = "amx"}
// CHECK: %[[R:.*]] = tensor.collapse_shape %[[P]] {{\[}}[0], [1, 2], [3, 4]] : tensor<2x2x32x2x32xf32> into tensor<2x64x64xf32>
// CHECK-NEXT: return %[[R]]
// DOT-LABEL: func.func @batched
// DOT: linalg.generic {{.*}} attrs = {rope.tile_product = "avx512bf16"}
// NOAMX-LABEL: func.func @batched
// NOAMX-NOT: rope.tile_product
func.func @batched(%a: tensor<2x64x64xbf16>, %b: tensor<2x64x64xbf16>, %c: tensor<2x64x64xf32>) -> tensor<2x64x64xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x64x64xbf16>, tensor<2x64x64xbf16>) outs(%c : tensor<2x64x64xf32>) -> tensor<2x64x64xf32>
  return %r : tensor<2x64x64xf32>
}

// -----

// Left to the FMA strategies: f16 without amx-fp16, fewer static rows than
// a tile's (a decode step: dot products read W once as stored), K or N off
// the 32 grid, f32 inputs, a product inside a loop (an attention tile).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: rope.tile_product
// CHECK: return
// DOT-LABEL: func.func @left_alone
// DOT-NOT: rope.tile_product
// DOT: return
// FP16-LABEL: func.func @left_alone
// FP16-COUNT-1: rope.tile_product
// FP16-NOT: rope.tile_product
// FP16: return
func.func @left_alone(%h: tensor<64x64xf16>, %one: tensor<1x64xbf16>, %k48: tensor<64x48xbf16>,
                      %w: tensor<64x64xbf16>, %f: tensor<64x64xf32>, %acc: tensor<64x64xf32>,
                      %acc1: tensor<1x64xf32>, %acc48: tensor<64x64xf32>)
    -> (tensor<64x64xf32>, tensor<1x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) {
  %0 = linalg.matmul ins(%h, %h : tensor<64x64xf16>, tensor<64x64xf16>) outs(%acc : tensor<64x64xf32>) -> tensor<64x64xf32>
  %1 = linalg.matmul ins(%one, %w : tensor<1x64xbf16>, tensor<64x64xbf16>) outs(%acc1 : tensor<1x64xf32>) -> tensor<1x64xf32>
  %k48t = tensor.empty() : tensor<48x64xbf16>
  %2 = linalg.matmul ins(%k48, %k48t : tensor<64x48xbf16>, tensor<48x64xbf16>) outs(%acc48 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %3 = linalg.matmul ins(%f, %f : tensor<64x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<64x64xf32>) -> tensor<64x64xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %4 = scf.for %i = %c0 to %c2 step %c1 iter_args(%t = %acc) -> (tensor<64x64xf32>) {
    %m = linalg.matmul ins(%w, %w : tensor<64x64xbf16>, tensor<64x64xbf16>) outs(%t : tensor<64x64xf32>) -> tensor<64x64xf32>
    scf.yield %m : tensor<64x64xf32>
  }
  return %0, %1, %2, %3, %4 : tensor<64x64xf32>, tensor<1x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>
}

// -----

// A weight read through the transpose is packed with its static shape: one
// whose batch dim is only known at run time (A's is static) is left to the
// FMA strategies.
// CHECK-LABEL: func.func @weights_dynamic_batch
// CHECK-NOT: rope.tile_product
// DOT-LABEL: func.func @weights_dynamic_batch
// DOT-NOT: rope.tile_product
func.func @weights_dynamic_batch(%x: tensor<2x40x64xbf16>, %w: tensor<?x96x64xbf16>, %acc: tensor<2x40x96xf32>) -> tensor<2x40x96xf32> {
  %r = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%x, %w : tensor<2x40x64xbf16>, tensor<?x96x64xbf16>) outs(%acc : tensor<2x40x96xf32>) -> tensor<2x40x96xf32>
  return %r : tensor<2x40x96xf32>
}
