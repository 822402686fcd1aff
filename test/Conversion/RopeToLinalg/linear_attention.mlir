// RUN: rope-opt %s --convert-rope-to-linalg -split-input-file | FileCheck %s

// rope.linear_attention (RoFormer eq. 19): φ(x) = elu(x) + 1; numerator
// Σ_n (R_m φq_m)ᵀ(R_n φk_n) v_n, denominator Σ_n φq_mᵀ φk_n (unrotated).
// Non-causal: the linear-cost form kv = Σ_n φk_n v_nᵀ, ksum = Σ_n φk_n.
// Causal: the masked quadratic form, n <= m compared on loop indices.

// CHECK-DAG: #[[ID4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[KV_K:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d2)>
// CHECK-DAG: #[[KV_V:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
// CHECK-DAG: #[[KV_OUT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[NUM_Q:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[KSUM_K:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[DEN_KSUM:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-LABEL: func.func @linear_attention
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x2x8x16xf32>, %[[K:[^:]+]]: tensor<1x2x8x16xf32>, %[[V:[^:]+]]: tensor<1x2x8x32xf32>)
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT: math.roundeven
// CHECK: %[[PHIQ:.+]] = linalg.generic {indexing_maps = [#[[ID4]], #[[ID4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[Q]] : tensor<1x2x8x16xf32>)
// CHECK-NEXT: ^bb0(%[[X:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[POS:.+]] = arith.cmpf ogt, %[[X]], %[[ZERO]] : f32
// CHECK-NEXT: %[[XP1:.+]] = arith.addf %[[X]], %[[ONE]] : f32
// CHECK-NEXT: %[[EX:.+]] = math.exp %[[X]] : f32
// CHECK-NEXT: %[[PHI:.+]] = arith.select %[[POS]], %[[XP1]], %[[EX]] : f32
// CHECK-NEXT: linalg.yield %[[PHI]] : f32
// CHECK: %[[PHIK:.+]] = linalg.generic {{.+}} ins(%[[K]] : tensor<1x2x8x16xf32>)
// CHECK: %[[KV:.+]] = linalg.generic {indexing_maps = [#[[KV_K]], #[[KV_V]], #[[KV_OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[PHIK]], %[[V]] : tensor<1x2x8x16xf32>, tensor<1x2x8x32xf32>) outs(%{{.+}} : tensor<1x2x16x32xf32>)
// CHECK: %[[NUM:.+]] = linalg.generic {indexing_maps = [#[[NUM_Q]], #[[KV_V]], #[[KV_OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[PHIQ]], %[[KV]] : tensor<1x2x8x16xf32>, tensor<1x2x16x32xf32>) outs(%{{.+}} : tensor<1x2x8x32xf32>)
// CHECK: %[[KSUM:.+]] = linalg.generic {indexing_maps = [#[[KSUM_K]], #[[ROW]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[PHIK]] : tensor<1x2x8x16xf32>) outs(%{{.+}} : tensor<1x2x16xf32>)
// CHECK: %[[DEN:.+]] = linalg.generic {indexing_maps = [#[[ID4]], #[[DEN_KSUM]], #[[ROW]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[PHIQ]], %[[KSUM]] : tensor<1x2x8x16xf32>, tensor<1x2x16xf32>) outs(%{{.+}} : tensor<1x2x8xf32>)
// CHECK: %[[OUT:.+]] = linalg.generic {indexing_maps = [#[[ID4]], #[[ROW]], #[[ID4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[NUM]], %[[DEN]] : tensor<1x2x8x32xf32>, tensor<1x2x8xf32>) outs(%{{.+}} : tensor<1x2x8x32xf32>)
// CHECK-NEXT: ^bb0(%[[N:[^:]+]]: f32, %[[D:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[O:.+]] = arith.divf %[[N]], %[[D]] : f32
// CHECK-NEXT: linalg.yield %[[O]] : f32
// CHECK: return %[[OUT]]
func.func @linear_attention(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x32xf32>) -> tensor<1x2x8x32xf32> {
  %0 = rope.linear_attention %q, %k, %v : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x32xf32>
  return %0 : tensor<1x2x8x32xf32>
}

// -----

// With rotary and no positions: positions 0..S-1, ONE table shared by the
// rotations of φq and φk; the numerator uses the rotated features, the
// denominator the unrotated ones.
// CHECK-LABEL: func.func @linear_attention_rotary
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x2x8x16xf32>, %[[K:[^:]+]]: tensor<1x2x8x16xf32>, %[[V:[^:]+]]: tensor<1x2x8x16xf32>)
// CHECK: %[[PHIQ:.+]] = linalg.generic {{.+}} ins(%[[Q]] :
// CHECK: %[[PHIK:.+]] = linalg.generic {{.+}} ins(%[[K]] :
// CHECK: %[[POS:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<8xi64>)
// CHECK: %[[I:.+]] = linalg.index 0 : index
// CHECK-NEXT: %[[I64:.+]] = arith.index_cast %[[I]] : index to i64
// CHECK-NEXT: linalg.yield %[[I64]] : i64
// CHECK: %[[T:.+]]:2 = linalg.generic {{.+}} ins(%[[POS]], %{{.+}} : tensor<8xi64>, tensor<8xf64>)
// CHECK-COUNT-1: math.roundeven
// CHECK-NOT: math.roundeven
// CHECK: tensor.expand_shape %[[PHIQ]]
// CHECK: %[[RQ:.+]] = linalg.generic {{.+}} ins(%{{.+}}, %{{.+}}, %[[T]]#0, %[[T]]#1 :
// CHECK: %[[RQC:.+]] = tensor.collapse_shape %[[RQ]]
// CHECK: tensor.expand_shape %[[PHIK]]
// CHECK: %[[RK:.+]] = linalg.generic {{.+}} ins(%{{.+}}, %{{.+}}, %[[T]]#0, %[[T]]#1 :
// CHECK: %[[RKC:.+]] = tensor.collapse_shape %[[RK]]
// CHECK-NOT: math.roundeven
// CHECK: %[[KV:.+]] = linalg.generic {{.+}} ins(%[[RKC]], %[[V]] :
// CHECK: linalg.generic {{.+}} ins(%[[RQC]], %[[KV]] :
// CHECK: %[[KSUM:.+]] = linalg.generic {{.+}} ins(%[[PHIK]] :
// CHECK: linalg.generic {{.+}} ins(%[[PHIQ]], %[[KSUM]] :
func.func @linear_attention_rotary(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %0 = rope.linear_attention %q, %k, %v rotary(#rope.spec<>) : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

// Per-sequence positions [B, S]: the table is [B, S, h], read at (b, s, t).
// CHECK-DAG: #[[TMAP:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d4)>
// CHECK-LABEL: func.func @linear_attention_rotary_batch_positions
// CHECK-SAME: %[[P:[^:]+]]: tensor<2x8xi32>
// CHECK-NOT: linalg.index
// CHECK: %[[T:.+]]:2 = linalg.generic {{.+}} ins(%[[P]], %{{.+}} : tensor<2x8xi32>, tensor<4xf64>) outs(%{{.+}}, %{{.+}} : tensor<2x8x4xf32>, tensor<2x8x4xf32>)
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}, #[[TMAP]], #[[TMAP]], #{{.+}}]
// CHECK-SAME: %[[T]]#0, %[[T]]#1 : tensor<2x2x8x4x2xf32>, tensor<2x2x8x4x2xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>
func.func @linear_attention_rotary_batch_positions(%q: tensor<2x2x8x8xf32>, %k: tensor<2x2x8x8xf32>, %v: tensor<2x2x8x8xf32>, %p: tensor<2x8xi32>) -> tensor<2x2x8x8xf32> {
  %0 = rope.linear_attention %q, %k, %v positions(%p : tensor<2x8xi32>) rotary(#rope.spec<layout = interleaved>) : tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>
  return %0 : tensor<2x2x8x8xf32>
}

// -----

// Positions without rotary are not read.
// CHECK-LABEL: func.func @linear_attention_positions_without_rotary
// CHECK-NOT: math.roundeven
// CHECK: return
func.func @linear_attention_positions_without_rotary(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %p: tensor<8xi64>) -> tensor<1x2x8x16xf32> {
  %0 = rope.linear_attention %q, %k, %v positions(%p : tensor<8xi64>) : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

// Causal: scores a = φq·φk (rotated, numerator) and w (unrotated,
// denominator) over [m, n], then sums restricted to n <= m.
// CHECK-DAG: #[[S_Q:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[S_K:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
// CHECK-DAG: #[[S_OUT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[V_MAP:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
// CHECK-DAG: #[[ID4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @linear_attention_causal
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x2x8x16xf32>, %[[K:[^:]+]]: tensor<1x2x8x16xf32>, %[[V:[^:]+]]: tensor<1x2x8x16xf32>)
// CHECK: %[[PHIQ:.+]] = linalg.generic {{.+}} ins(%[[Q]] :
// CHECK: %[[PHIK:.+]] = linalg.generic {{.+}} ins(%[[K]] :
// CHECK: %[[A:.+]] = linalg.generic {indexing_maps = [#[[S_Q]], #[[S_K]], #[[S_OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[PHIQ]], %[[PHIK]] : {{.+}}) outs(%{{.+}} : tensor<1x2x8x8xf32>)
// CHECK: %[[W:.+]] = linalg.generic {indexing_maps = [#[[S_Q]], #[[S_K]], #[[S_OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[PHIQ]], %[[PHIK]] : {{.+}}) outs(%{{.+}} : tensor<1x2x8x8xf32>)
// CHECK: %[[NUM:.+]] = linalg.generic {indexing_maps = [#[[S_Q]], #[[V_MAP]], #[[S_OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[A]], %[[V]] :
// CHECK-NEXT: ^bb0(%[[AV:[^:]+]]: f32, %[[VV:[^:]+]]: f32, %[[ACC:[^:]+]]: f32):
// CHECK-NEXT: %[[M:.+]] = linalg.index 2 : index
// CHECK-NEXT: %[[N:.+]] = linalg.index 4 : index
// CHECK-NEXT: %[[VIS:.+]] = arith.cmpi ule, %[[N]], %[[M]] : index
// CHECK-NEXT: %[[T:.+]] = arith.mulf %[[AV]], %[[VV]]{{.*}} : f32
// CHECK-NEXT: %[[SUM:.+]] = arith.addf %[[ACC]], %[[T]]{{.*}} : f32
// CHECK-NEXT: %[[R:.+]] = arith.select %[[VIS]], %[[SUM]], %[[ACC]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK: %[[DEN:.+]] = linalg.generic {indexing_maps = [#[[ID4]], #[[ROW]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[W]] :
// CHECK-NEXT: ^bb0(%[[WV:[^:]+]]: f32, %[[DACC:[^:]+]]: f32):
// CHECK-NEXT: %[[DM:.+]] = linalg.index 2 : index
// CHECK-NEXT: %[[DN:.+]] = linalg.index 3 : index
// CHECK-NEXT: %[[DVIS:.+]] = arith.cmpi ule, %[[DN]], %[[DM]] : index
// CHECK: linalg.generic {{.+}} ins(%[[NUM]], %[[DEN]] :
// CHECK: arith.divf
func.func @linear_attention_causal(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %0 = rope.linear_attention %q, %k, %v causal : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

// Causal with rotary on f16: the rotated φq, φk feed the numerator scores,
// the unrotated ones the denominator; the output is truncated to f16.
// CHECK-LABEL: func.func @linear_attention_causal_rotary_f16
// CHECK: %[[PHIQ:.+]] = linalg.generic {{.+}} ins(%{{.+}} : tensor<1x2x8x16xf16>) outs(%{{.+}} : tensor<1x2x8x16xf32>)
// CHECK: arith.extf %{{.+}} : f16 to f32
// CHECK: %[[PHIK:.+]] = linalg.generic {{.+}} ins(%{{.+}} : tensor<1x2x8x16xf16>) outs(%{{.+}} : tensor<1x2x8x16xf32>)
// CHECK: %[[T:.+]]:2 = linalg.generic
// CHECK: %[[RQ:.+]] = tensor.collapse_shape
// CHECK: %[[RK:.+]] = tensor.collapse_shape
// CHECK: linalg.generic {{.+}} ins(%[[RQ]], %[[RK]] :
// CHECK: linalg.generic {{.+}} ins(%[[PHIQ]], %[[PHIK]] :
// CHECK: %[[O:.+]] = arith.divf
// CHECK-NEXT: %[[O16:.+]] = arith.truncf %[[O]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[O16]] : f16
func.func @linear_attention_causal_rotary_f16(%q: tensor<1x2x8x16xf16>, %k: tensor<1x2x8x16xf16>, %v: tensor<1x2x8x16xf16>, %p: tensor<8xi64>) -> tensor<1x2x8x16xf16> {
  %0 = rope.linear_attention %q, %k, %v positions(%p : tensor<8xi64>) rotary(#rope.spec<>) causal : tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16>
  return %0 : tensor<1x2x8x16xf16>
}

// -----

// Dynamic batch and sequence: sizes from tensor.dim.
// CHECK-LABEL: func.func @linear_attention_dynamic
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<?x2x?x16xf32>, %{{[^:]+}}: tensor<?x2x?x16xf32>, %[[V:[^:]+]]: tensor<?x2x?x8xf32>)
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C2:.+]] = arith.constant 2 : index
// CHECK-DAG: %[[B:.+]] = tensor.dim %[[Q]], %[[C0]]
// CHECK-DAG: %[[S:.+]] = tensor.dim %[[Q]], %[[C2]]
// CHECK: tensor.empty(%[[B]], %[[S]]) : tensor<?x2x?x8xf32>
// CHECK: arith.divf
// CHECK: } -> tensor<?x2x?x8xf32>
// CHECK-NEXT: return %{{.+}} : tensor<?x2x?x8xf32>
func.func @linear_attention_dynamic(%q: tensor<?x2x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32> {
  %0 = rope.linear_attention %q, %k, %v : tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32>
  return %0 : tensor<?x2x?x8xf32>
}
