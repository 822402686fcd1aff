// RUN: rope-opt %s --convert-rope-to-linalg -split-input-file | FileCheck %s

// rope.attention becomes the reference (materialised-scores) form: its online
// form (rope.online_attention) over all keys at once, decomposed, over the
// loop nest [b, kh, g, i, j] (batch, kv head, query head within the group,
// query, key): queries are split [B, Hq, ..] -> [B, Hkv, G, ..] with
// tensor.expand_shape, then scores = Q·Kᵀ, logits = scale·scores (+ mask,
// -inf where masked/causally invisible), row max, the online update from the
// empty state (max −inf, sum 0), P·V, divide (0 for a fully masked row), and
// the result heads are collapsed back.

// CHECK-DAG: #[[QK_Q:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>
// CHECK-DAG: #[[QK_K:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5)>
// CHECK-DAG: #[[QK_S:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[ALL5:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x2x8x16xf32>, %[[K:[^:]+]]: tensor<1x2x8x16xf32>, %[[V:[^:]+]]: tensor<1x2x8x32xf32>)
// CHECK-DAG: %[[NEG_INF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 2.500000e-01 : f32
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT: math.roundeven
// CHECK: %[[Q5:.+]] = tensor.expand_shape %[[Q]] {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 1, 8, 16] : tensor<1x2x8x16xf32> into tensor<1x2x1x8x16xf32>
// CHECK: %[[SINIT:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.+}} : tensor<1x2x1x8x8xf32>)
// CHECK: %[[SCORES:.+]] = linalg.generic {indexing_maps = [#[[QK_Q]], #[[QK_K]], #[[QK_S]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[Q5]], %[[K]] : tensor<1x2x1x8x16xf32>, tensor<1x2x8x16xf32>) outs(%[[SINIT]] : tensor<1x2x1x8x8xf32>)
// CHECK: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK: %[[LOGITS:.+]] = linalg.generic {indexing_maps = [#[[ALL5]], #[[ALL5]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[SCORES]] : {{.+}}) outs(%[[SCORES]] : {{.+}})
// CHECK-NEXT: ^bb0(%[[L:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[SL:.+]] = arith.mulf %[[L]], %[[SCALE]] : f32
// CHECK-NEXT: linalg.yield %[[SL]] : f32
// CHECK: %[[MINIT:.+]] = linalg.fill ins(%[[NEG_INF]] : f32) outs(%{{.+}} : tensor<1x2x1x8xf32>)
// CHECK: %[[MAX:.+]] = linalg.generic {indexing_maps = [#[[ALL5]], #[[ROW]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[LOGITS]] : {{.+}}) outs(%[[MINIT]] : {{.+}})
// CHECK: arith.maximumf
// The state is updated in its own tensors (m, l and acc read their outputs):
// m' and the correction c = exp(m − m') come from one generic over the old m.
// CHECK: %[[MNEW:.+]]:2 = linalg.generic {indexing_maps = [#[[ROW4:.+]], #[[ROW4]], #[[ROW4]]], {{.+}} ins(%[[MAX]] : {{.+}}) outs(%{{.+}}, %{{.+}} : {{.+}})
// CHECK-NEXT: ^bb0(%[[TM:[^:]+]]: f32, %[[MOLD:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[MN:.+]] = arith.maximumf %[[MOLD]], %[[TM]] : f32
// CHECK: %[[PROBS:.+]] = linalg.generic {indexing_maps = [#[[ALL5]], #[[ROW]], #[[ALL5]]], {{.+}} ins(%[[LOGITS]], %[[MNEW]]#0 : {{.+}})
// CHECK-NEXT: ^bb0(%[[X:[^:]+]]: f32, %[[M:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[ALL_MASKED:.+]] = arith.cmpf oeq, %[[M]], %[[NEG_INF]] : f32
// CHECK-NEXT: %[[D:.+]] = arith.subf %[[X]], %[[M]] : f32
// CHECK-NEXT: %[[E:.+]] = math.exp %[[D]] : f32
// CHECK-NEXT: %[[P:.+]] = arith.select %[[ALL_MASKED]], %[[ZERO]], %[[E]] : f32
// CHECK: %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[ALL5]], #[[ROW]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[PROBS]] : {{.+}})
// CHECK: arith.addf
// CHECK: %[[LNEW:.+]] = linalg.generic {{.+}} ins(%[[MNEW]]#1, %[[SUM]] : {{.+}})
// The accumulator is rescaled in place and P·V adds to it.
// CHECK: %[[SCALED:.+]] = linalg.generic {{.+}} ins(%[[MNEW]]#1 : {{.+}}) outs(%{{.+}} : tensor<1x2x1x8x32xf32>)
// CHECK: %[[ACC:.+]] = linalg.generic {{.+}} iterator_types = [{{.*}}"reduction"{{.*}}]}
// CHECK-SAME: ins(%[[PROBS]], %[[V]] : tensor<1x2x1x8x8xf32>, tensor<1x2x8x32xf32>) outs(%[[SCALED]] : tensor<1x2x1x8x32xf32>)
// CHECK: %[[OUT:.+]] = linalg.generic {indexing_maps = [#[[ALL5]], #[[ROW]], #[[ALL5]]], {{.+}} ins(%[[ACC]], %[[LNEW]] : {{.+}})
// CHECK-NEXT: ^bb0(%[[A:[^:]+]]: f32, %[[S:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[EMPTY_ROW:.+]] = arith.cmpf oeq, %[[S]], %[[ZERO]] : f32
// CHECK-NEXT: %[[DIV:.+]] = arith.divf %[[A]], %[[S]] : f32
// CHECK-NEXT: %[[O:.+]] = arith.select %[[EMPTY_ROW]], %[[ZERO]], %[[DIV]] : f32
// CHECK-NEXT: linalg.yield %[[O]] : f32
// CHECK: %[[R:.+]] = tensor.collapse_shape %[[OUT]] {{\[}}[0], [1, 2], [3], [4]] : tensor<1x2x1x8x32xf32> into tensor<1x2x8x32xf32>
// CHECK-NEXT: return %[[R]]
func.func @attention(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x32xf32>) -> tensor<1x2x8x32xf32> {
  %0 = rope.attention %q, %k, %v : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x32xf32>
  return %0 : tensor<1x2x8x32xf32>
}

// -----

// GQA: 8 query heads over 2 kv heads. The query heads are split [2, 4] so
// that every loop index is a plain loop dim; the result is collapsed back.
// CHECK-LABEL: func.func @attention_gqa
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x8x4x16xf32>, %[[K:[^:]+]]: tensor<2x2x6x16xf32>, %[[V:[^:]+]]: tensor<2x2x6x16xf32>)
// CHECK: %[[Q5:.+]] = tensor.expand_shape %[[Q]] {{\[}}[0], [1, 2], [3], [4]] output_shape [2, 2, 4, 4, 16] : tensor<2x8x4x16xf32> into tensor<2x2x4x4x16xf32>
// CHECK: linalg.generic {{.+}} ins(%[[Q5]], %[[K]] : tensor<2x2x4x4x16xf32>, tensor<2x2x6x16xf32>) outs(%{{.+}} : tensor<2x2x4x4x6xf32>)
// CHECK: linalg.generic {{.+}} ins(%{{.+}}, %[[V]] : tensor<2x2x4x4x6xf32>, tensor<2x2x6x16xf32>) outs(%{{.+}} : tensor<2x2x4x4x16xf32>)
// CHECK: %[[R:.+]] = tensor.collapse_shape %{{.+}} {{\[}}[0], [1, 2], [3], [4]] : tensor<2x2x4x4x16xf32> into tensor<2x8x4x16xf32>
// CHECK-NEXT: return %[[R]]
func.func @attention_gqa(%q: tensor<2x8x4x16xf32>, %k: tensor<2x2x6x16xf32>, %v: tensor<2x2x6x16xf32>) -> tensor<2x8x4x16xf32> {
  %0 = rope.attention %q, %k, %v : tensor<2x8x4x16xf32>, tensor<2x2x6x16xf32>, tensor<2x2x6x16xf32>
  return %0 : tensor<2x8x4x16xf32>
}

// -----

// An explicit scale replaces 1/sqrt(D).
// CHECK-LABEL: func.func @attention_scale
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 1.250000e-01 : f32
// CHECK-NOT: arith.constant 2.500000e-01 : f32
// CHECK: arith.mulf %{{.+}}, %[[SCALE]] : f32
func.func @attention_scale(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %0 = rope.attention %q, %k, %v scale = 0.125 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

// Causal without positions (decode convention): keys at 0..Sk-1, queries at
// Sk-Sq..Sk-1 = 4..7; query i sees key j iff p_k(j) <= p_q(i).
// CHECK-DAG: #[[IOTA:.+]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[QMAP:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d3)>
// CHECK-DAG: #[[KMAP:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d4)>
// CHECK-DAG: #[[ALL5:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// CHECK-LABEL: func.func @attention_causal_default_positions
// CHECK-DAG: %[[NEG_INF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[OFFSET:.+]] = arith.constant 4 : i64
// CHECK: %[[QPOS:.+]] = linalg.generic {indexing_maps = [#[[IOTA]]], iterator_types = ["parallel"]} outs(%{{.+}} : tensor<4xi64>)
// CHECK: %[[QI:.+]] = linalg.index 0 : index
// CHECK-NEXT: %[[QI64:.+]] = arith.index_cast %[[QI]] : index to i64
// CHECK-NEXT: %[[QP:.+]] = arith.addi %[[QI64]], %[[OFFSET]] : i64
// CHECK-NEXT: linalg.yield %[[QP]] : i64
// CHECK: %[[KPOS:.+]] = linalg.generic {indexing_maps = [#[[IOTA]]], iterator_types = ["parallel"]} outs(%{{.+}} : tensor<8xi64>)
// CHECK: linalg.generic {indexing_maps = [#[[ALL5]], #[[QMAP]], #[[KMAP]], #[[ALL5]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%{{.+}}, %[[QPOS]], %[[KPOS]] : tensor<1x2x1x4x8xf32>, tensor<4xi64>, tensor<8xi64>)
// CHECK-NEXT: ^bb0(%{{[^:]+}}: f32, %[[IQ:[^:]+]]: i64, %[[IK:[^:]+]]: i64, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[SL:.+]] = arith.mulf
// CHECK-NEXT: %[[VISIBLE:.+]] = arith.cmpi sle, %[[IK]], %[[IQ]] : i64
// CHECK-NEXT: %[[L:.+]] = arith.select %[[VISIBLE]], %[[SL]], %[[NEG_INF]] : f32
// CHECK-NEXT: linalg.yield %[[L]] : f32
func.func @attention_causal_default_positions(%q: tensor<1x2x4x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x4x16xf32> {
  %0 = rope.attention %q, %k, %v causal : tensor<1x2x4x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x4x16xf32>
}

// -----

// Causal with per-sequence positions [B, S]: compared at (b, i) and (b, j).
// CHECK-DAG: #[[QMAP:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3)>
// CHECK-DAG: #[[KMAP:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d4)>
// CHECK-LABEL: func.func @attention_causal_batch_positions
// CHECK-SAME: %[[QP:[^:]+]]: tensor<2x1xi32>, %[[KP:[^:]+]]: tensor<2x8xi32>
// CHECK-NOT: linalg.index
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[QMAP]], #[[KMAP]], #{{.+}}]
// CHECK-SAME: ins(%{{.+}}, %[[QP]], %[[KP]] : tensor<2x2x1x1x8xf32>, tensor<2x1xi32>, tensor<2x8xi32>)
// CHECK-NEXT: ^bb0(%{{[^:]+}}: f32, %[[IQ:[^:]+]]: i32, %[[IK:[^:]+]]: i32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[IQ64:.+]] = arith.extsi %[[IQ]] : i32 to i64
// CHECK-NEXT: %[[IK64:.+]] = arith.extsi %[[IK]] : i32 to i64
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.cmpi sle, %[[IK64]], %[[IQ64]] : i64
func.func @attention_causal_batch_positions(%q: tensor<2x2x1x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>, %qp: tensor<2x1xi32>, %kp: tensor<2x8xi32>) -> tensor<2x2x1x16xf32> {
  %0 = rope.attention %q, %k, %v positions(%qp, %kp : tensor<2x1xi32>, tensor<2x8xi32>) causal : tensor<2x2x1x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
  return %0 : tensor<2x2x1x16xf32>
}

// -----

// Positions without causal or rotary are not read.
// CHECK-LABEL: func.func @attention_positions_unused
// CHECK-NOT: arith.cmpi sle
// CHECK: return
func.func @attention_positions_unused(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %p: tensor<8xi64>) -> tensor<1x2x8x16xf32> {
  %0 = rope.attention %q, %k, %v positions(%p, %p : tensor<8xi64>, tensor<8xi64>) : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

// A boolean [Sq, Sk] mask: true = may attend; read at (i, j) as a rank-5
// mask whose broadcast dims are static 1s read at 0.
// CHECK-DAG: #[[MASK:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (0, 0, 0, d3, d4)>
// CHECK-LABEL: func.func @attention_mask_i1_rank2
// CHECK-SAME: %[[M:[^:]+]]: tensor<8x8xi1>
// CHECK-DAG: %[[NEG_INF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[MASK]], #{{.+}}]
// CHECK-SAME: ins(%{{.+}}, %{{.+}} : tensor<1x2x1x8x8xf32>, tensor<1x1x1x8x8xi1>)
// CHECK-NEXT: ^bb0(%{{[^:]+}}: f32, %[[KEEP:[^:]+]]: i1, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[SL:.+]] = arith.mulf
// CHECK-NEXT: %[[L:.+]] = arith.select %[[KEEP]], %[[SL]], %[[NEG_INF]] : f32
// CHECK-NEXT: linalg.yield %[[L]] : f32
func.func @attention_mask_i1_rank2(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %m: tensor<8x8xi1>) -> tensor<1x2x8x16xf32> {
  %0 = rope.attention %q, %k, %v mask(%m : tensor<8x8xi1>) : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

// A boolean rank-4 mask with a broadcast head dim, together with causal: the
// unit head dim is expanded to [1, 1] and read at 0, and both conditions must
// hold.
// CHECK-DAG: #[[MASK:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, 0, 0, d3, d4)>
// CHECK-LABEL: func.func @attention_mask_i1_rank4_and_causal
// CHECK-SAME: %[[M:[^:]+]]: tensor<2x1x8x8xi1>
// CHECK: %[[MS:.+]] = tensor.expand_shape %[[M]] {{\[}}[0], [1, 2], [3], [4]] output_shape [2, 1, 1, 8, 8] : tensor<2x1x8x8xi1> into tensor<2x1x1x8x8xi1>
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[MASK]], #{{.+}}, #{{.+}}, #{{.+}}]
// CHECK-SAME: ins(%{{.+}}, %[[MS]], %{{.+}}, %{{.+}} : tensor<2x4x1x8x8xf32>, tensor<2x1x1x8x8xi1>, tensor<8xi64>, tensor<8xi64>)
// CHECK-NEXT: ^bb0(%{{[^:]+}}: f32, %[[KEEP:[^:]+]]: i1,
// CHECK: %[[VISIBLE:.+]] = arith.cmpi sle
// CHECK-NEXT: %[[BOTH:.+]] = arith.andi %[[KEEP]], %[[VISIBLE]] : i1
// CHECK-NEXT: arith.select %[[BOTH]]
func.func @attention_mask_i1_rank4_and_causal(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>, %m: tensor<2x1x8x8xi1>) -> tensor<2x4x8x16xf32> {
  %0 = rope.attention %q, %k, %v mask(%m : tensor<2x1x8x8xi1>) causal : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

// An additive f32 mask [B, 1, 1, Sk] (padding mask) is added to the logits.
// CHECK-DAG: #[[MASK:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, 0, 0, 0, d4)>
// CHECK-LABEL: func.func @attention_mask_f32_padding
// CHECK-SAME: %[[M:[^:]+]]: tensor<2x1x1x8xf32>
// CHECK: %[[MS:.+]] = tensor.expand_shape %[[M]] {{\[}}[0], [1, 2], [3], [4]] output_shape [2, 1, 1, 1, 8] : tensor<2x1x1x8xf32> into tensor<2x1x1x1x8xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[MASK]], #{{.+}}]
// CHECK-SAME: ins(%{{.+}}, %[[MS]] : tensor<2x2x1x4x8xf32>, tensor<2x1x1x1x8xf32>)
// CHECK-NEXT: ^bb0(%{{[^:]+}}: f32, %[[ADD:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[SL:.+]] = arith.mulf
// CHECK-NEXT: %[[L:.+]] = arith.addf %[[SL]], %[[ADD]] : f32
// CHECK-NEXT: linalg.yield %[[L]] : f32
func.func @attention_mask_f32_padding(%q: tensor<2x2x4x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>, %m: tensor<2x1x1x8xf32>) -> tensor<2x2x4x16xf32> {
  %0 = rope.attention %q, %k, %v mask(%m : tensor<2x1x1x8xf32>) : tensor<2x2x4x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
  return %0 : tensor<2x2x4x16xf32>
}

// -----

// A per-head f16 mask with GQA: the mask's head dim is split like the
// queries' ([8] -> [2, 4]) and read at (kh, g, i, j); f16 is extended.
// CHECK-DAG: #[[MASK:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (0, d1, d2, d3, d4)>
// CHECK-LABEL: func.func @attention_mask_f16_per_head_gqa
// CHECK-SAME: %[[M:[^:]+]]: tensor<1x8x4x4xf16>
// CHECK: %[[MX:.+]] = tensor.expand_shape %[[M]] {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 4, 4, 4] : tensor<1x8x4x4xf16> into tensor<1x2x4x4x4xf16>
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[MASK]], #{{.+}}]
// CHECK-SAME: ins(%{{.+}}, %[[MX]] : tensor<2x2x4x4x4xf32>, tensor<1x2x4x4x4xf16>)
// CHECK-NEXT: ^bb0(%{{[^:]+}}: f32, %[[ADD:[^:]+]]: f16, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[SL:.+]] = arith.mulf
// CHECK-NEXT: %[[ADD32:.+]] = arith.extf %[[ADD]] : f16 to f32
// CHECK-NEXT: arith.addf %[[SL]], %[[ADD32]] : f32
func.func @attention_mask_f16_per_head_gqa(%q: tensor<2x8x4x16xf16>, %k: tensor<2x2x4x16xf16>, %v: tensor<2x2x4x16xf16>, %m: tensor<1x8x4x4xf16>) -> tensor<2x8x4x16xf16> {
  %0 = rope.attention %q, %k, %v mask(%m : tensor<1x8x4x4xf16>) : tensor<2x8x4x16xf16>, tensor<2x2x4x16xf16>, tensor<2x2x4x16xf16>
  return %0 : tensor<2x8x4x16xf16>
}

// -----

// f16 storage: products are formed in f32, the output truncated to f16.
// CHECK-LABEL: func.func @attention_f16
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[A:[^:]+]]: f16, %[[B:[^:]+]]: f16, %[[ACC:[^:]+]]: f32):
// CHECK-NEXT: %[[A32:.+]] = arith.extf %[[A]] : f16 to f32
// CHECK-NEXT: %[[B32:.+]] = arith.extf %[[B]] : f16 to f32
// CHECK-NEXT: %[[AB:.+]] = arith.mulf %[[A32]], %[[B32]]{{.*}} : f32
// CHECK-NEXT: arith.addf %[[ACC]], %[[AB]]{{.*}} : f32
// CHECK: arith.divf
// CHECK: %[[O:.+]] = arith.select
// CHECK-NEXT: %[[O16:.+]] = arith.truncf %[[O]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[O16]] : f16
// CHECK: tensor.collapse_shape %{{.+}} : tensor<1x2x1x8x16xf16> into tensor<1x2x8x16xf16>
func.func @attention_f16(%q: tensor<1x2x8x16xf16>, %k: tensor<1x2x8x16xf16>, %v: tensor<1x2x8x16xf16>) -> tensor<1x2x8x16xf16> {
  %0 = rope.attention %q, %k, %v : tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16>
  return %0 : tensor<1x2x8x16xf16>
}

// -----

// Rotary inside attention with the same positions for Q and K: ONE cos/sin
// table feeds both rotations (Q rotated after the head split, at seq dim 3).
// CHECK-DAG: #[[QTAB:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d3, d4)>
// CHECK-DAG: #[[KTAB:.+]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-LABEL: func.func @attention_rotary_shared_table
// CHECK-SAME: %[[P:[^:]+]]: tensor<8xi64>
// CHECK: %[[T:.+]]:2 = linalg.generic {{.+}} ins(%[[P]], %{{.+}} : tensor<8xi64>, tensor<8xf64>)
// CHECK-COUNT-1: math.roundeven
// CHECK-NOT: math.roundeven
// CHECK: %[[QROT:.+]] = linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}, #[[QTAB]], #[[QTAB]], #{{.+}}]
// CHECK-SAME: ins(%{{.+}}, %{{.+}}, %[[T]]#0, %[[T]]#1 : tensor<1x2x2x8x2x8xf32>, tensor<1x2x2x8x2x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>)
// CHECK: %[[QR:.+]] = tensor.insert_slice %[[QROT]] into %{{.+}}[0, 0, 0, 0, 0] [1, 2, 2, 8, 8] [1, 1, 1, 1, 1] : tensor<1x2x2x8x8xf32> into tensor<1x2x2x8x16xf32>
// CHECK: %[[QROT2:.+]] = linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}, #[[QTAB]], #[[QTAB]], #{{.+}}]
// CHECK: %[[QM:.+]] = tensor.insert_slice %[[QROT2]] into %[[QR]][0, 0, 0, 0, 8] [1, 2, 2, 8, 8]
// CHECK-NOT: math.roundeven
// CHECK: %[[KROT:.+]] = linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}, #[[KTAB]], #[[KTAB]], #{{.+}}]
// CHECK-SAME: ins(%{{.+}}, %{{.+}}, %[[T]]#0, %[[T]]#1 : tensor<1x2x8x2x8xf32>, tensor<1x2x8x2x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>)
// CHECK: %[[KR:.+]] = tensor.insert_slice %[[KROT]] into %{{.+}}[0, 0, 0, 0] [1, 2, 8, 8] [1, 1, 1, 1] : tensor<1x2x8x8xf32> into tensor<1x2x8x16xf32>
// CHECK: %[[KROT2:.+]] = linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}, #[[KTAB]], #[[KTAB]], #{{.+}}]
// CHECK: %[[KM:.+]] = tensor.insert_slice %[[KROT2]] into %[[KR]][0, 0, 0, 8] [1, 2, 8, 8]
// CHECK-NOT: math.roundeven
// CHECK: linalg.generic {{.+}} ins(%[[QM]], %[[KM]] : tensor<1x2x2x8x16xf32>, tensor<1x2x8x16xf32>)
func.func @attention_rotary_shared_table(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %p: tensor<8xi64>) -> tensor<1x4x8x16xf32> {
  %0 = rope.attention %q, %k, %v positions(%p, %p : tensor<8xi64>, tensor<8xi64>) rotary(#rope.spec<>) : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return %0 : tensor<1x4x8x16xf32>
}

// -----

// Rotary with distinct query and key positions: one table each.
// CHECK-LABEL: func.func @attention_rotary_two_tables
// CHECK-SAME: %[[QP:[^:]+]]: tensor<1xi64>, %[[KP:[^:]+]]: tensor<8xi64>
// CHECK: linalg.generic {{.+}} ins(%[[QP]], %{{.+}} : tensor<1xi64>, tensor<8xf64>)
// CHECK: linalg.generic {{.+}} ins(%[[KP]], %{{.+}} : tensor<8xi64>, tensor<8xf64>)
func.func @attention_rotary_two_tables(%q: tensor<1x4x1x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>, %qp: tensor<1xi64>, %kp: tensor<8xi64>) -> tensor<1x4x1x16xf32> {
  %0 = rope.attention %q, %k, %v positions(%qp, %kp : tensor<1xi64>, tensor<8xi64>) rotary(#rope.spec<>) causal : tensor<1x4x1x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>
  return %0 : tensor<1x4x1x16xf32>
}

// -----

// Rotary without positions rotates Q at Sk-Sq.. and K at 0.. (default iotas).
// CHECK-LABEL: func.func @attention_rotary_default_positions
// CHECK: %[[QPOS:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<2xi64>)
// CHECK: %[[KPOS:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<6xi64>)
// CHECK: linalg.generic {{.+}} ins(%[[QPOS]], %{{.+}} : tensor<2xi64>, tensor<8xf64>)
// CHECK: linalg.generic {{.+}} ins(%[[KPOS]], %{{.+}} : tensor<6xi64>, tensor<8xf64>)
func.func @attention_rotary_default_positions(%q: tensor<1x2x2x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x16xf32>) -> tensor<1x2x2x16xf32> {
  %0 = rope.attention %q, %k, %v rotary(#rope.spec<>) : tensor<1x2x2x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x16xf32>
  return %0 : tensor<1x2x2x16xf32>
}

// -----

// Partial rotary on f16 data: Q and K are rotated in f32, so the pass-through
// dims are first converted to f32.
// CHECK-LABEL: func.func @attention_rotary_partial_f16
// CHECK: %[[QF32:.+]] = linalg.generic {{.+}} ins(%{{.+}} : tensor<1x2x1x4x16xf16>) outs(%{{.+}} : tensor<1x2x1x4x16xf32>)
// CHECK: arith.extf %{{.+}} : f16 to f32
// CHECK: tensor.extract_slice %{{.+}}[0, 0, 0, 0, 0] [1, 2, 1, 4, 8] [1, 1, 1, 1, 1] : tensor<1x2x1x4x16xf16> to tensor<1x2x1x4x8xf16>
// CHECK: arith.extf %{{.+}} : f16 to f32
// CHECK: tensor.insert_slice %{{.+}} into %[[QF32]][0, 0, 0, 0, 0] [1, 2, 1, 4, 4] [1, 1, 1, 1, 1] : tensor<1x2x1x4x4xf32> into tensor<1x2x1x4x16xf32>
func.func @attention_rotary_partial_f16(%q: tensor<1x2x4x16xf16>, %k: tensor<1x2x4x16xf16>, %v: tensor<1x2x4x16xf16>) -> tensor<1x2x4x16xf16> {
  %0 = rope.attention %q, %k, %v rotary(#rope.spec<dims = 8>) : tensor<1x2x4x16xf16>, tensor<1x2x4x16xf16>, tensor<1x2x4x16xf16>
  return %0 : tensor<1x2x4x16xf16>
}

// -----

// Length-dependent frequencies (dynamic NTK) see the largest position of
// both Q and K: one table over both position sets, split after.
// CHECK-LABEL: func.func @attention_rotary_dynamic_scaling
// CHECK-SAME: %[[QP:[^:]+]]: tensor<4xi64>, %[[KP:[^:]+]]: tensor<8xi64>
// CHECK: %[[BOTH:.+]] = tensor.concat dim(0) %[[QP]], %[[KP]] : (tensor<4xi64>, tensor<8xi64>) -> tensor<12xi64>
// CHECK: %[[MAXT:.+]] = linalg.generic {{.+}} ins(%[[BOTH]] : tensor<12xi64>) outs(%{{.+}} : tensor<i64>)
// CHECK: %[[MAX:.+]] = tensor.extract %[[MAXT]][]
// CHECK: arith.addi %[[MAX]], %{{.+}} : i64
// CHECK: math.log
// CHECK: tensor.extract_slice %{{.+}}[0, 0] [4, 8] [1, 1] : tensor<12x8xf32> to tensor<4x8xf32>
// CHECK: tensor.extract_slice %{{.+}}[4, 0] [8, 8] [1, 1] : tensor<12x8xf32> to tensor<8x8xf32>
func.func @attention_rotary_dynamic_scaling(%q: tensor<1x2x4x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %qp: tensor<4xi64>, %kp: tensor<8xi64>) -> tensor<1x2x4x16xf32> {
  %0 = rope.attention %q, %k, %v positions(%qp, %kp : tensor<4xi64>, tensor<8xi64>) rotary(#rope.spec<scaling = #rope.dynamic<factor = 2.0, original_max_position_embeddings = 16>>) : tensor<1x2x4x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x4x16xf32>
}

// -----

// Dynamic batch and sequence lengths: sizes come from tensor.dim.
// CHECK-LABEL: func.func @attention_dynamic
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<?x2x?x16xf32>, %[[K:[^:]+]]: tensor<?x2x?x16xf32>, %[[V:[^:]+]]: tensor<?x2x?x8xf32>)
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C2:.+]] = arith.constant 2 : index
// CHECK-DAG: %[[B:.+]] = tensor.dim %[[Q]], %[[C0]]
// CHECK-DAG: %[[SQ:.+]] = tensor.dim %[[Q]], %[[C2]]
// CHECK: tensor.expand_shape %[[Q]] {{\[}}[0], [1, 2], [3], [4]] output_shape [%{{.+}}, 2, 1, %{{.+}}, 16] : tensor<?x2x?x16xf32> into tensor<?x2x1x?x16xf32>
// CHECK: linalg.generic {{.+}} outs(%{{.+}} : tensor<?x2x1x?x?xf32>)
// CHECK: %[[R:.+]] = tensor.collapse_shape %{{.+}} {{\[}}[0], [1, 2], [3], [4]] : tensor<?x2x1x?x8xf32> into tensor<?x2x?x8xf32>
// CHECK-NEXT: return %[[R]] : tensor<?x2x?x8xf32>
func.func @attention_dynamic(%q: tensor<?x2x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32> {
  %0 = rope.attention %q, %k, %v : tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32>
  return %0 : tensor<?x2x?x8xf32>
}
