// RUN: rope-opt %s --rope-decompose-online-attention | FileCheck %s

// One online-softmax step over the op's keys, every rule in the logits
// generic in this order: scale, soft-cap (c·tanh(s/c)), causal and window
// visibility from the positions, ALiBi −slope·|p_q − p_k| with the slope of
// the row's head, T5's bucket of p_k − p_q (bidirectional: +16 after the
// query; log buckets from max_exact 8, in f32, clamped to 15) read from the
// table at (bucket, kv head, group), then −inf where not visible. Q and K
// (f16) are rotated in f32 as they are loaded (interleaved, 8 of 16 dims).
// Then m' = max(m, rowmax), p = exp(s − m'), c = exp(m − m') (0 while m' is
// −inf), l' = c·l + rowsum(p), acc' = c·acc + p·V (m' and c from one
// generic), each updated in place in the op's outs.
// CHECK-LABEL: func.func @decompose
// CHECK-SAME: %[[V:[^:]+]]: tensor<1x2x12x16xf16>, %[[QP:[^:]+]]: tensor<8xi64>, %[[KP:[^:]+]]: tensor<12xi64>, %[[A:[^:]+]]: tensor<2x2xf32>, %[[T:[^:]+]]: tensor<32x2x2xf32>
// CHECK-SAME: %[[ACC:[^:]+]]: tensor<1x2x2x8x16xf32>, %[[M:[^:]+]]: tensor<1x2x2x8xf32>, %[[L:[^:]+]]: tensor<1x2x2x8xf32>)
// CHECK: linalg.generic {{.+}} ins(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : tensor<1x2x2x8x4x2xf16>, tensor<1x2x2x8x4x2xf16>, tensor<8x4xf32>, tensor<8x4xf32>)
// CHECK: linalg.generic {{.+}} ins(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : tensor<1x2x12x4x2xf16>, tensor<1x2x12x4x2xf16>, tensor<12x4xf32>, tensor<12x4xf32>)
// CHECK: %[[S:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK: %[[LOGITS:.+]] = linalg.generic {{.+}} ins(%[[S]], %[[QP]], %[[KP]], %[[A]] : tensor<1x2x2x8x12xf32>, tensor<8xi64>, tensor<12xi64>, tensor<2x2xf32>)
// CHECK-NEXT: ^bb0(%[[X:[^:]+]]: f32, %[[PQ:[^:]+]]: i64, %[[PK:[^:]+]]: i64, %[[SLOPE:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK: %[[SCALED:.+]] = arith.mulf %[[X]], %{{.+}} : f32
// CHECK: %[[OVERC:.+]] = arith.mulf %[[SCALED]], %{{.+}} : f32
// CHECK: %[[TANH:.+]] = math.tanh %[[OVERC]] : f32
// CHECK: %[[CAPPED:.+]] = arith.mulf %[[TANH]], %{{.+}} : f32
// CHECK: %[[CAUSAL:.+]] = arith.cmpi sle, %[[PK]], %[[PQ]] : i64
// CHECK: %[[D:.+]] = arith.subi %[[PQ]], %[[PK]] : i64
// CHECK: %[[INWIN:.+]] = arith.cmpi slt, %[[D]], %{{.+}} : i64
// CHECK: %[[VISIBLE:.+]] = arith.andi %[[CAUSAL]], %[[INWIN]] : i1
// CHECK: %[[ABS:.+]] = math.absi %{{.+}} : i64
// CHECK: %[[NEGSLOPE:.+]] = arith.negf %[[SLOPE]] : f32
// CHECK: %[[ALIBI:.+]] = arith.addf %[[CAPPED]], %{{.+}} : f32
// CHECK: %[[REL:.+]] = arith.subi %[[PK]], %[[PQ]] : i64
// CHECK: math.log
// CHECK: %[[BUCKET:.+]] = arith.index_cast %{{.+}} : i64 to index
// CHECK: %[[KH:.+]] = linalg.index 1 : index
// CHECK: %[[G:.+]] = linalg.index 2 : index
// CHECK: %[[BIAS:.+]] = tensor.extract %[[T]][%[[BUCKET]], %[[KH]], %[[G]]] : tensor<32x2x2xf32>
// CHECK: %[[BIASED:.+]] = arith.addf %[[ALIBI]], %[[BIAS]] : f32
// CHECK: %[[OUT:.+]] = arith.select %[[VISIBLE]], %[[BIASED]], %{{.+}} : f32
// CHECK: linalg.yield %[[OUT]] : f32
// CHECK: %[[TILEMAX:.+]] = linalg.generic {{.+}} ins(%[[LOGITS]] : {{.+}})
// CHECK: %[[STEP:.+]]:2 = linalg.generic {{.+}} ins(%[[TILEMAX]] : {{.+}}) outs(%[[M]], %{{.+}} :
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: %[[P:.+]] = linalg.generic {{.+}} ins(%[[LOGITS]], %[[STEP]]#0 :
// CHECK: math.exp
// CHECK: %[[PSUM:.+]] = linalg.generic {{.+}} ins(%[[P]] :
// CHECK: %[[LNEW:.+]] = linalg.generic {{.+}} ins(%[[STEP]]#1, %[[PSUM]] : {{.+}}) outs(%[[L]] :
// CHECK: %[[SACC:.+]] = linalg.generic {{.+}} ins(%[[STEP]]#1 : {{.+}}) outs(%[[ACC]] :
// CHECK: %[[ACCNEW:.+]] = linalg.generic {{.+}} ins(%[[P]], %[[V]] : tensor<1x2x2x8x12xf32>, tensor<1x2x12x16xf16>) outs(%[[SACC]] :
// CHECK: return %[[ACCNEW]], %[[STEP]]#0, %[[LNEW]]
// CHECK-NOT: rope.online_attention
func.func @decompose(%q: tensor<1x2x2x8x16xf16>, %k: tensor<1x2x12x16xf16>, %v: tensor<1x2x12x16xf16>,
                     %qp: tensor<8xi64>, %kp: tensor<12xi64>, %a: tensor<2x2xf32>, %t: tensor<32x2x2xf32>,
                     %qc: tensor<8x4xf32>, %qs: tensor<8x4xf32>, %kc: tensor<12x4xf32>, %ks: tensor<12x4xf32>,
                     %acc: tensor<1x2x2x8x16xf32>, %m: tensor<1x2x2x8xf32>, %l: tensor<1x2x2x8xf32>)
    -> (tensor<1x2x2x8x16xf32>, tensor<1x2x2x8xf32>, tensor<1x2x2x8xf32>) {
  %r:3 = rope.online_attention %q, %k, %v positions(%qp, %kp : tensor<8xi64>, tensor<12xi64>) rotary(#rope.pairs<dims = 8, layout = interleaved>)
      query_tables(%qc, %qs : tensor<8x4xf32>, tensor<8x4xf32>) key_tables(%kc, %ks : tensor<12x4xf32>, tensor<12x4xf32>)
      causal window = 3 softcap = 20.0 scale = 0.25 alibi(%a : tensor<2x2xf32>)
      relative_bias(%t : tensor<32x2x2xf32>) buckets(#rope.buckets<num_buckets = 32, max_distance = 128>)
      outs(%acc, %m, %l : tensor<1x2x2x8x16xf32>, tensor<1x2x2x8xf32>, tensor<1x2x2x8xf32>)
      : tensor<1x2x2x8x16xf16>, tensor<1x2x12x16xf16>, tensor<1x2x12x16xf16>
      -> tensor<1x2x2x8x16xf32>, tensor<1x2x2x8xf32>, tensor<1x2x2x8xf32>
  return %r#0, %r#1, %r#2 : tensor<1x2x2x8x16xf32>, tensor<1x2x2x8xf32>, tensor<1x2x2x8xf32>
}
