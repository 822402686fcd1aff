// RUN: rope-opt %s --rope-decompose-attention-rows -split-input-file | FileCheck %s

// Causal GQA prefill with RoPE inside (default positions). After the rewrite:
// - rows are an scf.forall over (batch, kv head, group head, query row);
// - the query row is read once as a vector, rotated with shuffles (half
//   layout: lanes 0..15 and 16..31) and scaled;
// - the key loop stops at the row's last visible key, min(Sk, Sk − Sq + i + 1):
//   causal keys in the future are never read;
// - the running max and sum are f32 scalars, the accumulator a vector<32xf32>;
// - no scores tensor and no tile tensor exists.
// CHECK-LABEL: func.func @causal_gqa_rotary
//   CHECK-NOT: 256x256xf32
//       CHECK: math.cos
//   CHECK-NOT: math.cos
//       CHECK: scf.forall (%[[B:.+]], %[[KH:.+]], %[[G:.+]], %[[I:.+]]) in (1, 2, 4, 256) shared_outs(
//       CHECK:   %[[Q:.+]] = vector.transfer_read %{{.+}}[%[[B]], %[[KH]], %[[G]], %[[I]], %{{.+}}], {{.+}} : tensor<1x2x4x256x32xf32>, vector<32xf32>
//       CHECK:   vector.shuffle %[[Q]], %[[Q]] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
//       CHECK:   vector.shuffle %[[Q]], %[[Q]] [16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31]
//       CHECK:   %[[END:.+]] = arith.minsi
//       CHECK:   scf.for %[[J:.+]] = %{{.+}} to %[[END]] step %{{.+}} iter_args(%[[M:.+]] = %{{.+}}, %[[L:.+]] = %{{.+}}, %[[ACC:.+]] = %{{.+}}) -> (f32, f32, vector<32xf32>)
//       CHECK:     vector.transfer_read %{{.+}}[%[[B]], %[[KH]], %[[J]], %{{.+}}]
//       CHECK:     vector.reduction <add>
//       CHECK:     arith.maximumf %[[M]]
//       CHECK:     math.exp
//       CHECK:     math.exp
//       CHECK:     vector.fma
//       CHECK:   scf.forall.in_parallel
//  CHECK-NEXT:     tensor.parallel_insert_slice
//       CHECK: tensor.collapse_shape {{.*}} into tensor<1x8x256x32xf32>
//   CHECK-NOT: rope.attention
func.func @causal_gqa_rotary(%q: tensor<1x8x256x32xf32>, %k: tensor<1x2x256x32xf32>,
                             %v: tensor<1x2x256x32xf32>) -> tensor<1x8x256x32xf32> {
  %r = rope.attention %q, %k, %v rotary(#rope.spec<>) causal
      : tensor<1x8x256x32xf32>, tensor<1x2x256x32xf32>, tensor<1x2x256x32xf32>
  return %r : tensor<1x8x256x32xf32>
}

// -----

// Explicit positions: every key is visited and compared with the row's
// position; an i1 mask selects −inf; interleaved pairs are even/odd lanes;
// f16 rows are extended on load and truncated on store.
// CHECK-LABEL: func.func @positions_mask_interleaved_f16
//       CHECK: scf.forall
//       CHECK:   vector.shuffle %{{.+}}, %{{.+}} [0, 2, 4, 6]
//       CHECK:   vector.shuffle %{{.+}}, %{{.+}} [1, 3, 5, 7]
//       CHECK:   %[[QP:.+]] = tensor.extract %{{.+}}[%{{.+}}] : tensor<3xi64>
//       CHECK:   scf.for
//       CHECK:     arith.extf {{.+}} : vector<8xf16> to vector<8xf32>
//       CHECK:     %[[ALLOWED:.+]] = tensor.extract %{{.+}}[%{{.+}}, %{{.+}}] : tensor<3x5xi1>
//       CHECK:     %[[KP:.+]] = tensor.extract %{{.+}}[%{{.+}}] : tensor<5xi64>
//       CHECK:     %[[CAUSAL:.+]] = arith.cmpi sle, %[[KP]], %[[QP]]
//       CHECK:     %[[VISIBLE:.+]] = arith.andi %[[ALLOWED]], %[[CAUSAL]]
//       CHECK:     arith.select %[[VISIBLE]]
//       CHECK:   arith.truncf {{.+}} : vector<8xf32> to vector<8xf16>
func.func @positions_mask_interleaved_f16(%q: tensor<1x2x3x8xf16>, %k: tensor<1x2x5x8xf16>,
                                          %v: tensor<1x2x5x8xf16>, %m: tensor<3x5xi1>,
                                          %qp: tensor<3xi64>, %kp: tensor<5xi64>) -> tensor<1x2x3x8xf16> {
  %r = rope.attention %q, %k, %v mask(%m : tensor<3x5xi1>) positions(%qp, %kp : tensor<3xi64>, tensor<5xi64>)
      rotary(#rope.spec<layout = interleaved>) causal
      : tensor<1x2x3x8xf16>, tensor<1x2x5x8xf16>, tensor<1x2x5x8xf16>
  return %r : tensor<1x2x3x8xf16>
}

// -----

// Empty head rows cannot be vectors: left to the plain lowering.
// CHECK-LABEL: func.func @empty_value_rows
//       CHECK:   rope.attention
//   CHECK-NOT:   scf.forall
func.func @empty_value_rows(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x5x8xf32>,
                            %v: tensor<1x2x5x0xf32>) -> tensor<1x2x3x0xf32> {
  %r = rope.attention %q, %k, %v : tensor<1x2x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x0xf32>
  return %r : tensor<1x2x3x0xf32>
}
