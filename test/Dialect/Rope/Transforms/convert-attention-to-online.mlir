// RUN: rope-opt %s --rope-convert-attention-to-online -split-input-file | FileCheck %s

// Everything explicit: the default positions of a prefill (one iota, shared
// by Q and K, so one cos/sin table), the query heads split [8] -> [2, 4], the
// rank-2 mask as rank 5 [1, 1, 1, Sq, Sk], ALiBi slopes as [Hkv, G], the
// scale 1/sqrt(32), and the sinks as the initial state: max = sink of the
// row's head, sum = 1. Then acc / sum, stored as f16, heads collapsed.
// CHECK-DAG: #[[HEADS:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, d2)>
// CHECK-LABEL: func.func @everything
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x8x16x32xf16>, %[[K:[^:]+]]: tensor<2x2x16x32xf16>, %[[V:[^:]+]]: tensor<2x2x16x32xf16>, %[[M:[^:]+]]: tensor<16x16xi1>, %[[S:[^:]+]]: tensor<8xf32>, %[[A:[^:]+]]: tensor<8xf32>)
// CHECK: %[[POS:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<16xi64>)
// CHECK: %[[COS:.+]], %[[SIN:.+]] = rope.table %[[POS]] rotary(#rope.spec<>) head_dim = 32
// CHECK-NOT: rope.table
// CHECK: %[[Q5:.+]] = tensor.expand_shape %[[Q]] {{\[}}[0], [1, 2], [3], [4]] output_shape [2, 2, 4, 16, 32]
// CHECK: %[[M4:.+]] = tensor.expand_shape %[[M]] {{\[}}[0, 1, 2], [3]] output_shape [1, 1, 16, 16]
// CHECK: %[[M5:.+]] = tensor.expand_shape %[[M4]] {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 1, 1, 16, 16]
// CHECK: %[[A2:.+]] = tensor.expand_shape %[[A]] {{\[}}[0, 1]] output_shape [2, 4]
// CHECK: %[[ACC0:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<2x2x4x16x32xf32>)
// CHECK: %[[S2:.+]] = tensor.expand_shape %[[S]] {{\[}}[0, 1]] output_shape [2, 4]
// CHECK: %[[MAX0:.+]] = linalg.generic {indexing_maps = [#[[HEADS]], #{{.+}}], {{.+}} ins(%[[S2]] : tensor<2x4xf32>)
// CHECK: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[SUM0:.+]] = linalg.fill ins(%[[ONE]] : f32)
// CHECK: %[[R:.+]]:3 = rope.online_attention %[[Q5]], %[[K]], %[[V]] mask(%[[M5]] : tensor<1x1x1x16x16xi1>)
// CHECK-SAME: positions(%[[POS]], %[[POS]] : tensor<16xi64>, tensor<16xi64>) rotary(#rope.pairs<>)
// CHECK-SAME: query_tables(%[[COS]], %[[SIN]] : {{[^)]+}}) key_tables(%[[COS]], %[[SIN]] : {{[^)]+}})
// CHECK-SAME: causal window = 4 softcap = 3.000000e+01 scale = 0.17677669529663687 alibi(%[[A2]] : tensor<2x4xf32>)
// CHECK-SAME: outs(%[[ACC0]], %[[MAX0]], %[[SUM0]] :
// CHECK: %[[OUT:.+]] = linalg.generic {{.+}} ins(%[[R]]#0, %[[R]]#2 : tensor<2x2x4x16x32xf32>, tensor<2x2x4x16xf32>)
// CHECK: arith.divf
// CHECK: arith.truncf {{.+}} : f32 to f16
// CHECK: tensor.collapse_shape %[[OUT]] {{\[}}[0], [1, 2], [3], [4]] : tensor<2x2x4x16x32xf16> into tensor<2x8x16x32xf16>
// CHECK-NOT: rope.attention
func.func @everything(%q: tensor<2x8x16x32xf16>, %k: tensor<2x2x16x32xf16>, %v: tensor<2x2x16x32xf16>, %m: tensor<16x16xi1>, %s: tensor<8xf32>, %a: tensor<8xf32>) -> tensor<2x8x16x32xf16> {
  %o = rope.attention %q, %k, %v mask(%m : tensor<16x16xi1>) rotary(#rope.spec<>) causal window = 4 softcap = 30.0 sinks(%s : tensor<8xf32>) alibi(%a : tensor<8xf32>) : tensor<2x8x16x32xf16>, tensor<2x2x16x32xf16>, tensor<2x2x16x32xf16>
  return %o : tensor<2x8x16x32xf16>
}

// -----

// Without sinks the state starts empty (max −inf, sum 0); without a rule
// that reads positions none are made.
// CHECK-LABEL: func.func @plain
// CHECK-NOT: linalg.generic {{.+}} outs(%{{.+}} : tensor<{{.+}}xi64>)
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<1x2x1x?x8xf32>)
// CHECK: %[[NEG_INF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[NEG_INF]] : f32) outs(%{{.+}} : tensor<1x2x1x?xf32>)
// CHECK: rope.online_attention
// CHECK-NOT: positions
// CHECK-SAME: scale = 5.000000e-01
func.func @plain(%q: tensor<1x2x?x4xf32>, %k: tensor<1x2x?x4xf32>, %v: tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32> {
  %o = rope.attention %q, %k, %v : tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>, tensor<1x2x?x8xf32>
  return %o : tensor<1x2x?x8xf32>
}

// -----

// Decode with default positions: the queries sit after the keys (Sk − Sq..),
// the keys at 0..; a T5 table [NB, Hq] becomes [NB, Hkv, G].
// CHECK-LABEL: func.func @decode_t5
// CHECK: %[[QPOS:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<1xi64>)
// CHECK: %[[KPOS:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<9xi64>)
// CHECK: %[[T3:.+]] = tensor.expand_shape %{{.+}} {{\[}}[0], [1, 2]] output_shape [32, 1, 4] : tensor<32x4xf32> into tensor<32x1x4xf32>
// CHECK: rope.online_attention {{.+}} positions(%[[QPOS]], %[[KPOS]] : tensor<1xi64>, tensor<9xi64>)
// CHECK-SAME: relative_bias(%[[T3]] : tensor<32x1x4xf32>) buckets(#rope.buckets<num_buckets = 32, max_distance = 128, bidirectional = false>)
func.func @decode_t5(%q: tensor<1x4x1x8xf32>, %k: tensor<1x1x9x8xf32>, %v: tensor<1x1x9x8xf32>, %t: tensor<32x4xf32>) -> tensor<1x4x1x8xf32> {
  %o = rope.attention %q, %k, %v causal relative_bias(%t : tensor<32x4xf32>) buckets(#rope.buckets<num_buckets = 32, max_distance = 128, bidirectional = false>) : tensor<1x4x1x8xf32>, tensor<1x1x9x8xf32>, tensor<1x1x9x8xf32>
  return %o : tensor<1x4x1x8xf32>
}

// -----

// Table rotation: the online op reads the tables by row as [S, w] in f32
// (HF's [1, 1, S, D] f16 tables collapsed and widened), and its spec only
// says which dims they rotate. No positions are needed.
// CHECK-LABEL: func.func @rotary_tables
// CHECK-SAME: %[[C:[^:]+]]: tensor<1x1x8x8xf16>, %[[S:[^:]+]]: tensor<1x1x8x8xf16>, %[[KC:[^:]+]]: tensor<2x8x4xf32>
// CHECK-DAG: %[[C2:.+]] = tensor.collapse_shape %[[C]] {{\[\[}}0, 1, 2], [3]] : tensor<1x1x8x8xf16> into tensor<8x8xf16>
// CHECK-DAG: %[[S2:.+]] = tensor.collapse_shape %[[S]] {{\[\[}}0, 1, 2], [3]]
// CHECK-DAG: %[[C32:.+]] = linalg.generic {{.*}} ins(%[[C2]] : tensor<8x8xf16>) outs(%{{.+}} : tensor<8x8xf32>)
// CHECK-DAG: %[[S32:.+]] = linalg.generic {{.*}} ins(%[[S2]] : tensor<8x8xf16>) outs(%{{.+}} : tensor<8x8xf32>)
// CHECK: rope.online_attention {{.*}} rotary(#rope.pairs<layout = interleaved>) query_tables(%[[C32]], %[[S32]] : tensor<8x8xf32>, tensor<8x8xf32>) key_tables(%[[KC]], %[[KC]] : tensor<2x8x4xf32>, tensor<2x8x4xf32>) scale =
func.func @rotary_tables(%q: tensor<2x2x8x8xf16>, %k: tensor<2x2x8x8xf16>, %v: tensor<2x2x8x8xf16>, %c: tensor<1x1x8x8xf16>, %s: tensor<1x1x8x8xf16>, %kc: tensor<2x8x4xf32>) -> tensor<2x2x8x8xf16> {
  %0 = rope.attention %q, %k, %v rotary_tables(%c, %s, %kc, %kc : tensor<1x1x8x8xf16>, tensor<1x1x8x8xf16>, tensor<2x8x4xf32>, tensor<2x8x4xf32>) rotary_layout<interleaved> : tensor<2x2x8x8xf16>, tensor<2x2x8x8xf16>, tensor<2x2x8x8xf16>
  return %0 : tensor<2x2x8x8xf16>
}
