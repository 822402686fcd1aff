// RUN: rope-opt %s --rope-decompose-attention="query-tile=32 key-tile=64" --canonicalize -split-input-file | FileCheck %s

// Causal GQA prefill with RoPE inside, S = 256: rope.attention to
// rope.online_attention, tiled, guarded, decomposed. After it:
// - the S×S scores tensor ([1, 2, 4, 256, 256]) is gone; only tiles exist;
// - (kv head, query tile) pairs are an scf.forall (independent blocks of the
//   output; kv heads keep decode parallel), key tiles an scf.for carrying the
//   accumulator, running max and sum;
// - one cos/sin table (Q and K share their positions); K and Q rotated once,
//   whole, before the tiles (each of the 8 query tiles sweeps every key: in
//   the tiles, each key would be rotated 8 times), each by one generic over
//   its pair view [.., 2, 16] (both members of a pair), so no tile rotates;
// - a causal key tile is skipped (scf.if) when its smallest position is past
//   the query tile's largest; one that runs is a copy without the causal
//   rule (no position compare and select) when its largest position is not
//   past the query tile's smallest;
// - the online-softmax correction exp(m - m') rescales sum and accumulator.
// CHECK-LABEL: func.func @causal_gqa_rotary
// CHECK-NOT: 256x256xf32
// CHECK: rope.table
// CHECK-NOT: rope.table
// CHECK: linalg.generic {{.+}} outs(%{{.+}} : tensor<1x2x256x2x16xf32>)
// CHECK: tensor.collapse_shape {{.+}} into tensor<1x2x256x32xf32>
// CHECK: linalg.generic {{.+}} outs(%{{.+}} : tensor<1x2x4x256x2x16xf32>)
// CHECK: tensor.collapse_shape {{.+}} into tensor<1x2x4x256x32xf32>
// CHECK-NOT: tensor.insert_slice
// CHECK: scf.forall (%[[KH:.+]], %[[QI:.+]]) = (0, 0) to (2, 256) step (1, 32) shared_outs(
// CHECK-NOT: tensor.insert_slice
// CHECK: scf.for %[[KJ:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %{{.+}}, %[[M:.+]] = %{{.+}}, %[[L:.+]] = %{{.+}}) -> (tensor<1x1x4x32x32xf32>, tensor<1x1x4x32xf32>, tensor<1x1x4x32xf32>)
// CHECK: %[[VISIBLE:.+]] = arith.cmpi sle
// CHECK: scf.if %[[VISIBLE]]
// CHECK-NEXT: %[[EVERY:.+]] = arith.cmpi sle
// CHECK-NEXT: scf.if %[[EVERY]]
// CHECK-NOT: arith.cmpi
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]
// CHECK-NOT: arith.cmpi
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: } else {
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]
// CHECK: arith.cmpi sle
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: } else {
// CHECK-NEXT: scf.yield %[[ACC]], %[[M]], %[[L]]
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice
// CHECK: tensor.collapse_shape {{.*}} into tensor<1x8x256x32xf32>
// CHECK-NOT: rope.attention
// CHECK-NOT: rope.online_attention
func.func @causal_gqa_rotary(%q: tensor<1x8x256x32xf32>, %k: tensor<1x2x256x32xf32>, %v: tensor<1x2x256x32xf32>, %p: tensor<256xi64>) -> tensor<1x8x256x32xf32> {
  %o = rope.attention %q, %k, %v positions(%p, %p : tensor<256xi64>, tensor<256xi64>) rotary(#rope.spec<>) causal : tensor<1x8x256x32xf32>, tensor<1x2x256x32xf32>, tensor<1x2x256x32xf32>
  return %o : tensor<1x8x256x32xf32>
}

// -----

// Non-causal: no tile is skipped, so there is no scf.if.
// CHECK-LABEL: func.func @non_causal
// CHECK: scf.forall
// CHECK: scf.for
// CHECK-NOT: scf.if
// CHECK: scf.forall.in_parallel
func.func @non_causal(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32> {
  %o = rope.attention %q, %k, %v : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>
  return %o : tensor<1x2x?x16xf32>
}

// -----

// Keys of dynamic length: the key loop is peeled, so that every key tile but
// the last has a static extent (64 keys: the shape the CPU micro-kernels take)
// and the last, partial one runs once after the loop, guarded as well. A
// query length known only at run time gets no unmasked copy of the tiles
// (compile time).
// CHECK-LABEL: func.func @peeled_dynamic_keys
// CHECK: scf.forall
// CHECK: %[[FULL:.+]] = affine.apply
// CHECK: %[[STATE:.+]]:3 = scf.for %{{.+}} = %c0 to %[[FULL]] step %c64
// CHECK: scf.if
// CHECK-NEXT: tensor.empty
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%{{.+}}, %{{.+}} : tensor<1x1x4x?x32xf32>, tensor<1x1x64x32xf32>)
// CHECK: scf.for %{{.+}} = %[[FULL]] to %{{.+}} step %c64 iter_args(%{{.+}} = %[[STATE]]#0, %{{.+}} = %[[STATE]]#1, %{{.+}} = %[[STATE]]#2)
// CHECK: scf.if
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%{{.+}}, %{{.+}} : tensor<1x1x4x?x32xf32>, tensor<1x1x?x32xf32>)
// CHECK: scf.forall.in_parallel
func.func @peeled_dynamic_keys(%q: tensor<1x8x?x32xf32>, %k: tensor<1x2x?x32xf32>, %v: tensor<1x2x?x32xf32>) -> tensor<1x8x?x32xf32> {
  %o = rope.attention %q, %k, %v causal : tensor<1x8x?x32xf32>, tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32>
  return %o : tensor<1x8x?x32xf32>
}

// -----

// Masks are sliced per tile along the query and key dims that are not
// broadcast (the rank-5 mask's unit dims stay whole).
// CHECK-LABEL: func.func @mask_tiles
// CHECK: scf.forall
// CHECK: tensor.extract_slice %{{.+}}[0, 0, 0, %{{.+}}, 0] [1, 1, 1, 32, 128] [1, 1, 1, 1, 1] : tensor<1x1x1x128x128xi1> to tensor<1x1x1x32x128xi1>
// CHECK: scf.for
// CHECK: tensor.extract_slice %{{.+}}[0, 0, 0, 0, %{{.+}}] [1, 1, 1, 32, 64] [1, 1, 1, 1, 1] : tensor<1x1x1x32x128xi1> to tensor<1x1x1x32x64xi1>
func.func @mask_tiles(%q: tensor<1x2x128x16xf32>, %k: tensor<1x2x128x16xf32>, %v: tensor<1x2x128x16xf32>, %m: tensor<128x128xi1>) -> tensor<1x2x128x16xf32> {
  %o = rope.attention %q, %k, %v mask(%m : tensor<128x128xi1>) : tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>
  return %o : tensor<1x2x128x16xf32>
}

// -----

// Bad tile sizes are rejected with a message.
// RUN: not rope-opt %s --rope-decompose-attention=key-tile=-1 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: query-tile and key-tile must be positive, split-keys -1 (automatic) or more and rows-rotating-keys-in-scores 0 or more, got 64, -1, -1 and 8

// -----

// Decode with one kv head: kv heads × query tiles (1) are too few to keep the
// cores busy, so the keys are split (split-K, 4 partial states computed in
// parallel, then merged).
// CHECK-LABEL: func.func @decode_split_keys
// CHECK: scf.forall (%{{.+}}) = (0) to (4096) step (1024) shared_outs(
// CHECK: scf.for
// CHECK: scf.forall.in_parallel
// CHECK: linalg.generic {{.+}} ins(%{{.+}} : tensor<4x1x1x8x1xf32>)
// CHECK: arith.maximumf
func.func @decode_split_keys(%q: tensor<1x8x1x64xf32>, %k: tensor<1x1x4096x64xf32>, %v: tensor<1x1x4096x64xf32>) -> tensor<1x8x1x64xf32> {
  %o = rope.attention %q, %k, %v causal : tensor<1x8x1x64xf32>, tensor<1x1x4096x64xf32>, tensor<1x1x4096x64xf32>
  return %o : tensor<1x8x1x64xf32>
}
