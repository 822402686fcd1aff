// RUN: rope-opt %s --rope-decompose-attention="query-tile=32 key-tile=64" -split-input-file | FileCheck %s

// Causal GQA prefill with RoPE inside, S = 256. After decomposition:
// - the S×S scores tensor ([1, 2, 4, 256, 256]) is gone; only tiles exist;
// - (kv head, query tile) pairs are an scf.forall (independent blocks of the
//   output; kv heads keep decode parallel), key tiles an scf.for carrying the
//   running max, sum and accumulator;
// - a causal key tile is skipped (scf.if) when its smallest position is past
//   the query tile's largest;
// - the cos/sin tables are built once, outside the loops, and sliced per
//   tile; Q and K share them (same positions);
// - the online-softmax correction exp(m - m') rescales sum and accumulator.
// CHECK-LABEL: func.func @causal_gqa_rotary
// CHECK-NOT: 256x256xf32
// CHECK: math.cos
// CHECK-NOT: math.cos
// CHECK: scf.forall (%[[KH:.+]], %[[QI:.+]]) = (0, 0) to (2, 256) step (1, 32) shared_outs(
// CHECK: arith.minsi
// CHECK: scf.for %[[KJ:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[M:.+]] = %{{.+}}, %[[L:.+]] = %{{.+}}, %[[ACC:.+]] = %{{.+}}) -> (tensor<1x1x4x?xf32>, tensor<1x1x4x?xf32>, tensor<1x1x4x?x32xf32>)
// CHECK: %[[VISIBLE:.+]] = arith.cmpi sle
// CHECK: scf.if %[[VISIBLE]]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: } else {
// CHECK-NEXT: scf.yield %[[M]], %[[L]], %[[ACC]]
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice
// CHECK: tensor.collapse_shape {{.*}} into tensor<1x8x256x32xf32>
// CHECK-NOT: rope.attention
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

// Masks are sliced per tile along the query and key dims that are not
// broadcast.
// CHECK-LABEL: func.func @mask_tiles
// CHECK: scf.for
// CHECK: tensor.extract_slice %{{.+}}[%{{.+}}, %{{.+}}] [%{{.+}}, %{{.+}}] [1, 1] : tensor<128x128xi1> to tensor<?x?xi1>
func.func @mask_tiles(%q: tensor<1x2x128x16xf32>, %k: tensor<1x2x128x16xf32>, %v: tensor<1x2x128x16xf32>, %m: tensor<128x128xi1>) -> tensor<1x2x128x16xf32> {
  %o = rope.attention %q, %k, %v mask(%m : tensor<128x128xi1>) : tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>
  return %o : tensor<1x2x128x16xf32>
}

// -----

// Bad tile sizes are rejected with a message.
// RUN: not rope-opt %s --rope-decompose-attention=key-tile=-1 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: query-tile and key-tile must be positive, got 64 and -1
