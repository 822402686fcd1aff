// RUN: rope-opt %s --rope-decompose-attention-rows -split-input-file --canonicalize | FileCheck %s
// RUN: not rope-opt %s --rope-decompose-attention-rows=key-tile=0 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: rope-decompose-attention-rows: key-tile must be positive, got 0

// The GPU rows configuration of rope.attention: the op becomes
// rope.online_attention, tiled with one tile per (batch, kv head, group
// head, query row), an scf.forall that becomes one GPU thread per row; the
// row's query is rotated once, before its key loop; the key loop takes one
// key per step, skips the keys the row cannot see (causal, window), and
// decomposes each step with the op's own rules (here window and sinks: the
// running max starts at the sink, the sum at 1).
// CHECK-LABEL: func.func @causal_window_sinks_gqa_rotary
//   CHECK-NOT: 256x256xf32
//       CHECK: %[[COS:.+]], %[[SIN:.+]] = rope.table
//   CHECK-NOT: rope.table
//       CHECK: scf.forall (%[[KH:.+]], %[[G:.+]], %[[I:.+]]) in (2, 4, 256) shared_outs(
//       CHECK:   tensor.extract_slice %[[COS]][%[[I]], 0] [1, 16] [1, 1] : tensor<256x16xf32> to tensor<1x16xf32>
//       CHECK:   tensor.insert_slice {{.+}} : tensor<1x1x1x1x16xf32> into tensor<1x1x1x1x32xf32>
//       CHECK:   tensor.insert_slice {{.+}} : tensor<1x1x1x1x16xf32> into tensor<1x1x1x1x32xf32>
//       CHECK:   scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args({{.+}}) -> (tensor<1x1x1x1x32xf32>, tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32>)
//       CHECK:     tensor.extract_slice %{{.+}}[0, 0, %[[J]], 0] [1, 1, 1, 32]
//       CHECK:     %[[VISIBLE:.+]] = arith.andi
//       CHECK:     scf.if %[[VISIBLE]]
//       CHECK:       arith.maximumf
//       CHECK:       math.exp
//       CHECK:   scf.forall.in_parallel
//       CHECK: tensor.collapse_shape {{.*}} into tensor<1x8x256x32xf32>
//   CHECK-NOT: rope.attention
//   CHECK-NOT: rope.online_attention
func.func @causal_window_sinks_gqa_rotary(%q: tensor<1x8x256x32xf32>, %k: tensor<1x2x256x32xf32>,
                                          %v: tensor<1x2x256x32xf32>, %s: tensor<8xf32>) -> tensor<1x8x256x32xf32> {
  %r = rope.attention %q, %k, %v rotary(#rope.spec<>) causal window = 16 sinks(%s : tensor<8xf32>)
      : tensor<1x8x256x32xf32>, tensor<1x2x256x32xf32>, tensor<1x2x256x32xf32>
  return %r : tensor<1x8x256x32xf32>
}

// -----

// Empty head rows have nothing to stream: left to the plain lowering.
// CHECK-LABEL: func.func @empty_value_rows
//       CHECK:   rope.attention
//   CHECK-NOT:   scf.forall
func.func @empty_value_rows(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x5x8xf32>,
                            %v: tensor<1x2x5x0xf32>) -> tensor<1x2x3x0xf32> {
  %r = rope.attention %q, %k, %v : tensor<1x2x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x0xf32>
  return %r : tensor<1x2x3x0xf32>
}
