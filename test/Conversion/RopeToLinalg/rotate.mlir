// RUN: rope-opt %s --convert-rope-to-linalg -split-input-file | FileCheck %s

// rope.rotate becomes a cos/sin table generic (phase p·inv_freq formed in f64
// and reduced modulo 2π) plus one generic that applies it. The rotated range
// of the head dim is viewed as [2, h] (half: pair (t, h + t)) or [h, 2]
// (interleaved: pair (2t, 2t + 1)) by tensor.expand_shape; the generic reads
// both members of a pair through constant-indexed maps (member 0 / member 1)
// and writes member c at (.., c, t) (half) or (.., t, c) (interleaved).
//
// Expected frequency constants were computed independently in Python with the
// Hugging Face formulas (modeling_rope_utils.py); where the last digit depends
// on the order of floating-point operations the check allows any tail.

// CHECK-DAG: #[[POS:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[FREQ:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[TAB:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[FIRST:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>
// CHECK-DAG: #[[SECOND:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, 1, d3)>
// CHECK-DAG: #[[SEQ:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
// CHECK-DAG: #[[ID4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @rotate_half
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x4x8xf32>, %[[P:[^:]+]]: tensor<4xi64>)
// CHECK-DAG: %[[PIO2_HI:.+]] = arith.constant 1.5707963267948966 : f64
// CHECK-DAG: %[[TWO_OVER_PI:.+]] = arith.constant 0.63661977236758138 : f64
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[INV_FREQ:.+]] = arith.constant dense<[1.000000e+00, 1.000000e-01, 1.000000e-02, 1.000000e-03]> : tensor<4xf64>
// CHECK: %[[TINIT:.+]] = tensor.empty() : tensor<4x4xf32>
// CHECK: %[[T:.+]]:2 = linalg.generic {indexing_maps = [#[[POS]], #[[FREQ]], #[[TAB]], #[[TAB]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[P]], %[[INV_FREQ]] : tensor<4xi64>, tensor<4xf64>) outs(%[[TINIT]], %[[TINIT]] : tensor<4x4xf32>, tensor<4x4xf32>)
// CHECK-NEXT: ^bb0(%[[IP:[^:]+]]: i64, %[[IF:[^:]+]]: f64, %{{[^:]+}}: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[PF:.+]] = arith.sitofp %[[IP]] : i64 to f64
// CHECK-NEXT: %[[PHASE:.+]] = arith.mulf %[[PF]], %[[IF]] : f64
// CHECK-NEXT: %[[QF:.+]] = arith.mulf %[[PHASE]], %[[TWO_OVER_PI]] : f64
// CHECK-NEXT: %[[Q:.+]] = math.roundeven %[[QF]] : f64
// CHECK-NEXT: %[[NEG_Q:.+]] = arith.negf %[[Q]] : f64
// CHECK-NEXT: math.fma %[[NEG_Q]], %[[PIO2_HI]], %[[PHASE]] : f64
// CHECK: arith.fptosi %[[Q]] : f64 to i64
// CHECK: %[[TC:.+]] = arith.truncf %{{.+}} : f64 to f32
// CHECK-NEXT: %[[TS:.+]] = arith.truncf %{{.+}} : f64 to f32
// CHECK-NEXT: linalg.yield %[[TC]], %[[TS]] : f32, f32
// CHECK: %[[DEST:.+]] = tensor.empty() : tensor<2x4x8xf32>
// CHECK-DAG: %[[XP:.+]] = tensor.expand_shape %[[X]] {{\[}}[0], [1], [2, 3]] output_shape [2, 4, 2, 4] : tensor<2x4x8xf32> into tensor<2x4x2x4xf32>
// CHECK-DAG: %[[OP:.+]] = tensor.expand_shape %[[DEST]] {{\[}}[0], [1], [2, 3]] output_shape [2, 4, 2, 4] : tensor<2x4x8xf32> into tensor<2x4x2x4xf32>
// CHECK: %[[ROT:.+]] = linalg.generic {indexing_maps = [#[[FIRST]], #[[SECOND]], #[[SEQ]], #[[SEQ]], #[[ID4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[XP]], %[[XP]], %[[T]]#0, %[[T]]#1 : tensor<2x4x2x4xf32>, tensor<2x4x2x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) outs(%[[OP]] : tensor<2x4x2x4xf32>)
// CHECK-NEXT: ^bb0(%[[A:[^:]+]]: f32, %[[B:[^:]+]]: f32, %[[COS:[^:]+]]: f32, %[[SIN:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[AC:.+]] = arith.mulf %[[A]], %[[COS]] : f32
// CHECK-NEXT: %[[BS:.+]] = arith.mulf %[[B]], %[[SIN]] : f32
// CHECK-NEXT: %[[A2:.+]] = arith.subf %[[AC]], %[[BS]] : f32
// CHECK-NEXT: %[[BC:.+]] = arith.mulf %[[B]], %[[COS]] : f32
// CHECK-NEXT: %[[AS:.+]] = arith.mulf %[[A]], %[[SIN]] : f32
// CHECK-NEXT: %[[B2:.+]] = arith.addf %[[BC]], %[[AS]] : f32
// CHECK-NEXT: %[[MEMBER:.+]] = linalg.index 2 : index
// CHECK-NEXT: %[[IS_FIRST:.+]] = arith.cmpi eq, %[[MEMBER]], %[[C0]] : index
// CHECK-NEXT: %[[V:.+]] = arith.select %[[IS_FIRST]], %[[A2]], %[[B2]] : f32
// CHECK-NEXT: linalg.yield %[[V]] : f32
// CHECK: %[[R:.+]] = tensor.collapse_shape %[[ROT]] {{\[}}[0], [1], [2, 3]] : tensor<2x4x2x4xf32> into tensor<2x4x8xf32>
// CHECK-NEXT: return %[[R]]
func.func @rotate_half(%x: tensor<2x4x8xf32>, %p: tensor<4xi64>) -> tensor<2x4x8xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<2x4x8xf32>, tensor<4xi64>
  return %0 : tensor<2x4x8xf32>
}

// -----

// Interleaved pairs (2t, 2t+1): the head dim is viewed as [h, 2] and the
// pair member is the last index.
// CHECK-DAG: #[[IFIRST:.+]] = affine_map<(d0, d1, d2) -> (d0, d2, 0)>
// CHECK-DAG: #[[ISECOND:.+]] = affine_map<(d0, d1, d2) -> (d0, d2, 1)>
// CHECK-DAG: #[[ITAB:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[IOUT:.+]] = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
// CHECK-LABEL: func.func @rotate_interleaved
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x8xf32>
// CHECK: %[[T:.+]]:2 = linalg.generic
// CHECK: %[[DEST:.+]] = tensor.empty() : tensor<4x8xf32>
// CHECK-DAG: %[[XP:.+]] = tensor.expand_shape %[[X]] {{\[}}[0], [1, 2]] output_shape [4, 4, 2] : tensor<4x8xf32> into tensor<4x4x2xf32>
// CHECK-DAG: %[[OP:.+]] = tensor.expand_shape %[[DEST]] {{\[}}[0], [1, 2]] output_shape [4, 4, 2] : tensor<4x8xf32> into tensor<4x4x2xf32>
// CHECK: %[[ROT:.+]] = linalg.generic {indexing_maps = [#[[IFIRST]], #[[ISECOND]], #[[ITAB]], #[[ITAB]], #[[IOUT]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[XP]], %[[XP]], %[[T]]#0, %[[T]]#1 : {{.*}}) outs(%[[OP]] : tensor<4x4x2xf32>)
// CHECK: linalg.index 1 : index
// CHECK: %[[R:.+]] = tensor.collapse_shape %[[ROT]] {{\[}}[0], [1, 2]] : tensor<4x4x2xf32> into tensor<4x8xf32>
// CHECK-NEXT: return %[[R]]
func.func @rotate_interleaved(%x: tensor<4x8xf32>, %p: tensor<4xi64>) -> tensor<4x8xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<layout = interleaved>) : tensor<4x8xf32>, tensor<4xi64>
  return %0 : tensor<4x8xf32>
}

// -----

// Partial rotary, half layout: dims [4, 12) of 16 rotate, pairs (4+t, 8+t);
// the rotated range is sliced out of the input and inserted back into it, so
// the other dims pass through.
// CHECK-DAG: #[[PFIRST:.+]] = affine_map<(d0, d1, d2) -> (d0, 0, d2)>
// CHECK-DAG: #[[PSECOND:.+]] = affine_map<(d0, d1, d2) -> (d0, 1, d2)>
// CHECK-LABEL: func.func @rotate_partial_half
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x16xf32>
// CHECK: %[[T:.+]]:2 = linalg.generic
// CHECK-SAME: outs(%{{.+}}, %{{.+}} : tensor<4x4xf32>, tensor<4x4xf32>)
// CHECK-NOT: tensor.empty
// CHECK: %[[XS:.+]] = tensor.extract_slice %[[X]][0, 4] [4, 8] [1, 1] : tensor<4x16xf32> to tensor<4x8xf32>
// CHECK: %[[XP:.+]] = tensor.expand_shape %[[XS]] {{\[}}[0], [1, 2]] output_shape [4, 2, 4] : tensor<4x8xf32> into tensor<4x2x4xf32>
// CHECK: %[[OS:.+]] = tensor.extract_slice %[[X]][0, 4] [4, 8] [1, 1] : tensor<4x16xf32> to tensor<4x8xf32>
// CHECK: %[[OP:.+]] = tensor.expand_shape %[[OS]]
// CHECK: %[[ROT:.+]] = linalg.generic {indexing_maps = [#[[PFIRST]], #[[PSECOND]], {{.+}}]
// CHECK-SAME: ins(%[[XP]], %[[XP]], %[[T]]#0, %[[T]]#1 : {{.*}}) outs(%[[OP]] : tensor<4x2x4xf32>)
// CHECK: %[[RS:.+]] = tensor.collapse_shape %[[ROT]] {{\[}}[0], [1, 2]] : tensor<4x2x4xf32> into tensor<4x8xf32>
// CHECK: %[[R:.+]] = tensor.insert_slice %[[RS]] into %[[X]][0, 4] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<4x16xf32>
// CHECK-NEXT: return %[[R]]
func.func @rotate_partial_half(%x: tensor<4x16xf32>, %p: tensor<4xi64>) -> tensor<4x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<dims = 8, offset = 4>) : tensor<4x16xf32>, tensor<4xi64>
  return %0 : tensor<4x16xf32>
}

// -----

// Partial rotary, interleaved: dims [2, 6) of 8, pairs (2+2t, 3+2t).
// CHECK-DAG: #[[PIFIRST:.+]] = affine_map<(d0, d1, d2) -> (d0, d2, 0)>
// CHECK-DAG: #[[PISECOND:.+]] = affine_map<(d0, d1, d2) -> (d0, d2, 1)>
// CHECK-LABEL: func.func @rotate_partial_interleaved
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x8xf32>
// CHECK: %[[XS:.+]] = tensor.extract_slice %[[X]][0, 2] [4, 4] [1, 1] : tensor<4x8xf32> to tensor<4x4xf32>
// CHECK: %[[XP:.+]] = tensor.expand_shape %[[XS]] {{\[}}[0], [1, 2]] output_shape [4, 2, 2] : tensor<4x4xf32> into tensor<4x2x2xf32>
// CHECK: %[[ROT:.+]] = linalg.generic {indexing_maps = [#[[PIFIRST]], #[[PISECOND]], {{.+}}]
// CHECK-SAME: ins(%[[XP]], %[[XP]],
// CHECK: %[[RS:.+]] = tensor.collapse_shape %[[ROT]]
// CHECK: %[[R:.+]] = tensor.insert_slice %[[RS]] into %[[X]][0, 2] [4, 4] [1, 1] : tensor<4x4xf32> into tensor<4x8xf32>
// CHECK-NEXT: return %[[R]]
func.func @rotate_partial_interleaved(%x: tensor<4x8xf32>, %p: tensor<4xi64>) -> tensor<4x8xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<dims = 4, offset = 2, layout = interleaved>) : tensor<4x8xf32>, tensor<4xi64>
  return %0 : tensor<4x8xf32>
}

// -----

// The inverse rotation negates sin in the table; cos is untouched.
// CHECK-LABEL: func.func @rotate_inverse
// CHECK-DAG: %[[NEG:.+]] = arith.constant -1.000000e+00 : f64
// CHECK: linalg.generic
// CHECK: math.roundeven
// CHECK: %[[NS:.+]] = arith.mulf %{{.+}}, %[[NEG]] : f64
// CHECK-NEXT: %[[C:.+]] = arith.truncf %{{.+}} : f64 to f32
// CHECK-NEXT: %[[S:.+]] = arith.truncf %[[NS]] : f64 to f32
// CHECK-NEXT: linalg.yield %[[C]], %[[S]] : f32, f32
func.func @rotate_inverse(%x: tensor<4x8xf32>, %p: tensor<4xi64>) -> tensor<4x8xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<inverse = true>) : tensor<4x8xf32>, tensor<4xi64>
  return %0 : tensor<4x8xf32>
}

// -----

// The attention factor m scales both table entries.
// CHECK-LABEL: func.func @rotate_attention_factor
// CHECK-DAG: %[[M:.+]] = arith.constant 2.500000e+00 : f64
// CHECK: linalg.generic
// CHECK: %[[MC:.+]] = arith.mulf %{{.+}}, %[[M]] : f64
// CHECK-NEXT: %[[MS:.+]] = arith.mulf %{{.+}}, %[[M]] : f64
// CHECK-NEXT: %[[C:.+]] = arith.truncf %[[MC]] : f64 to f32
// CHECK-NEXT: %[[S:.+]] = arith.truncf %[[MS]] : f64 to f32
// CHECK-NEXT: linalg.yield %[[C]], %[[S]] : f32, f32
func.func @rotate_attention_factor(%x: tensor<4x8xf32>, %p: tensor<4xi64>) -> tensor<4x8xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<attention_factor = 2.5>) : tensor<4x8xf32>, tensor<4xi64>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @rotate_inverse_attention_factor
// CHECK-DAG: %[[M:.+]] = arith.constant 1.500000e+00 : f64
// CHECK-DAG: %[[NEG_M:.+]] = arith.constant -1.500000e+00 : f64
// CHECK: linalg.generic
// CHECK: %[[MC:.+]] = arith.mulf %{{.+}}, %[[M]] : f64
// CHECK-NEXT: %[[MS:.+]] = arith.mulf %{{.+}}, %[[NEG_M]] : f64
// CHECK-NEXT: %[[C:.+]] = arith.truncf %[[MC]] : f64 to f32
// CHECK-NEXT: %[[S:.+]] = arith.truncf %[[MS]] : f64 to f32
// CHECK-NEXT: linalg.yield %[[C]], %[[S]] : f32, f32
func.func @rotate_inverse_attention_factor(%x: tensor<4x8xf32>, %p: tensor<4xi64>) -> tensor<4x8xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<attention_factor = 1.5, inverse = true>) : tensor<4x8xf32>, tensor<4xi64>
  return %0 : tensor<4x8xf32>
}

// -----

// Without an attention factor or inverse, no scaling multiply is emitted.
// CHECK-LABEL: func.func @rotate_no_table_scaling
// CHECK: arith.fptosi
// CHECK-NOT: arith.mulf
// CHECK: %[[C:.+]] = arith.truncf %{{.+}} : f64 to f32
// CHECK-NEXT: %[[S:.+]] = arith.truncf %{{.+}} : f64 to f32
// CHECK-NEXT: linalg.yield %[[C]], %[[S]] : f32, f32
func.func @rotate_no_table_scaling(%x: tensor<4x8xf32>, %p: tensor<4xi64>) -> tensor<4x8xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<4x8xf32>, tensor<4xi64>
  return %0 : tensor<4x8xf32>
}

// -----

// [B, S, H, D] with per-sequence positions [B, S]: the table is [B, S, h] and
// the rotation reads it at (b, s, i).
// CHECK-DAG: #[[BPOS:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[BFREQ:.+]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-DAG: #[[BTAB:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[BFIRST:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, 0, d4)>
// CHECK-DAG: #[[BSECOND:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, 1, d4)>
// CHECK-DAG: #[[BSD:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4)>
// CHECK-DAG: #[[ID5:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// CHECK-LABEL: func.func @rotate_batch_positions_seq_dim_1
// CHECK-SAME: %[[P:[^:]+]]: tensor<2x8xi32>
// CHECK: %[[T:.+]]:2 = linalg.generic {indexing_maps = [#[[BPOS]], #[[BFREQ]], #[[BTAB]], #[[BTAB]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[P]], %{{.+}} : tensor<2x8xi32>, tensor<8xf64>) outs(%{{.+}}, %{{.+}} : tensor<2x8x8xf32>, tensor<2x8x8xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[BFIRST]], #[[BSECOND]], #[[BSD]], #[[BSD]], #[[ID5]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%{{.+}}, %{{.+}}, %[[T]]#0, %[[T]]#1 : tensor<2x8x4x2x8xf32>, tensor<2x8x4x2x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32>)
func.func @rotate_batch_positions_seq_dim_1(%x: tensor<2x8x4x16xf32>, %p: tensor<2x8xi32>) -> tensor<2x8x4x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) seq_dim = 1 : tensor<2x8x4x16xf32>, tensor<2x8xi32>
  return %0 : tensor<2x8x4x16xf32>
}

// -----

// i32 positions are sign-extended to i64 before the f64 phase.
// CHECK-LABEL: func.func @rotate_i32_positions
// CHECK: ^bb0(%[[IP:[^:]+]]: i32, %[[IF:[^:]+]]: f64
// CHECK-NEXT: %[[P64:.+]] = arith.extsi %[[IP]] : i32 to i64
// CHECK-NEXT: %[[PF:.+]] = arith.sitofp %[[P64]] : i64 to f64
// CHECK-NEXT: arith.mulf %[[PF]], %[[IF]] : f64
func.func @rotate_i32_positions(%x: tensor<4x8xf32>, %p: tensor<4xi32>) -> tensor<4x8xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<4x8xf32>, tensor<4xi32>
  return %0 : tensor<4x8xf32>
}

// -----

// Dynamic batch and sequence: sizes come from tensor.dim.
// CHECK-LABEL: func.func @rotate_dynamic
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x4x?x16xf32>, %[[P:[^:]+]]: tensor<?xi64>)
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C2:.+]] = arith.constant 2 : index
// CHECK: %[[S:.+]] = tensor.dim %[[P]], %[[C0]] : tensor<?xi64>
// CHECK: %[[TINIT:.+]] = tensor.empty(%[[S]]) : tensor<?x8xf32>
// CHECK: %[[T:.+]]:2 = linalg.generic
// CHECK-SAME: outs(%[[TINIT]], %[[TINIT]] : tensor<?x8xf32>, tensor<?x8xf32>)
// CHECK-DAG: %[[B:.+]] = tensor.dim %[[X]], %[[C0]]
// CHECK-DAG: %[[SX:.+]] = tensor.dim %[[X]], %[[C2]]
// CHECK: tensor.empty(%[[B]], %[[SX]]) : tensor<?x4x?x16xf32>
// CHECK: tensor.expand_shape %[[X]] {{\[}}[0], [1], [2], [3, 4]] output_shape [%[[B]], 4, %[[SX]], 2, 8] : tensor<?x4x?x16xf32> into tensor<?x4x?x2x8xf32>
// CHECK: linalg.generic
// CHECK-SAME: %[[T]]#0, %[[T]]#1 : tensor<?x4x?x2x8xf32>, tensor<?x4x?x2x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
// CHECK: tensor.collapse_shape {{.+}} : tensor<?x4x?x2x8xf32> into tensor<?x4x?x16xf32>
func.func @rotate_dynamic(%x: tensor<?x4x?x16xf32>, %p: tensor<?xi64>) -> tensor<?x4x?x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<?x4x?x16xf32>, tensor<?xi64>
  return %0 : tensor<?x4x?x16xf32>
}

// -----

// f16 data: the rotation computes in f32 and truncates back; the table is f32.
// CHECK-LABEL: func.func @rotate_f16
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.+}}, %{{.+}} : tensor<4x4xf32>, tensor<4x4xf32>)
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[A:[^:]+]]: f16, %[[B:[^:]+]]: f16, %[[COS:[^:]+]]: f32, %[[SIN:[^:]+]]: f32, %{{[^:]+}}: f16):
// CHECK-NEXT: %[[A32:.+]] = arith.extf %[[A]] : f16 to f32
// CHECK-NEXT: %[[B32:.+]] = arith.extf %[[B]] : f16 to f32
// CHECK: %[[V:.+]] = arith.select %{{.+}}, %{{.+}}, %{{.+}} : f32
// CHECK-NEXT: %[[V16:.+]] = arith.truncf %[[V]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[V16]] : f16
func.func @rotate_f16(%x: tensor<4x8xf16>, %p: tensor<4xi64>) -> tensor<4x8xf16> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<4x8xf16>, tensor<4xi64>
  return %0 : tensor<4x8xf16>
}

// -----

// bf16 partial rotary: the pass-through dims come straight from the input.
// CHECK-LABEL: func.func @rotate_bf16_partial
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x8xbf16>
// CHECK: linalg.generic
// CHECK-NOT: tensor.empty() : tensor<4x8xbf16>
// CHECK: ^bb0(%{{[^:]+}}: bf16, %{{[^:]+}}: bf16, %{{[^:]+}}: f32, %{{[^:]+}}: f32, %{{[^:]+}}: bf16):
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: %[[RS:.+]] = tensor.collapse_shape %{{.+}} : tensor<4x2x2xbf16> into tensor<4x4xbf16>
// CHECK: tensor.insert_slice %[[RS]] into %[[X]][0, 0] [4, 4] [1, 1] : tensor<4x4xbf16> into tensor<4x8xbf16>
func.func @rotate_bf16_partial(%x: tensor<4x8xbf16>, %p: tensor<4xi64>) -> tensor<4x8xbf16> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<dims = 4>) : tensor<4x8xbf16>, tensor<4xi64>
  return %0 : tensor<4x8xbf16>
}

//===----------------------------------------------------------------------===//
// Frequencies
//===----------------------------------------------------------------------===//

// -----

// base 100, r = 4: [1, 0.1], divided by the linear factor 2.
// CHECK-LABEL: func.func @rotate_linear_scaling
// CHECK: %[[F:.+]] = arith.constant dense<[5.000000e-01, 5.000000e-02]> : tensor<2xf64>
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.+}}, %[[F]] : tensor<4xi64>, tensor<2xf64>)
func.func @rotate_linear_scaling(%x: tensor<4x4xf32>, %p: tensor<4xi64>) -> tensor<4x4xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<base = 100.0, scaling = #rope.linear<factor = 2.0>>) : tensor<4x4xf32>, tensor<4xi64>
  return %0 : tensor<4x4xf32>
}

// -----

// Llama 3: base 10000, r = 16, factor 8, original context 256: the two
// lowest-wavelength frequencies stay, the middle one is smoothed, the rest
// are divided by 8.
// CHECK-LABEL: func.func @rotate_llama3_scaling
// CHECK: arith.constant dense<[1.000000e+00, 0.31622776601683794, 1.000000e-01, {{0\.00661310631724755[0-9]*}}, 1.250000e-03, {{3\.952847075210474[0-9]*E-4}}, 1.250000e-04, {{3\.952847075210474[0-9]*E-5}}]> : tensor<8xf64>
// CHECK-NOT: arith.constant {{.+}} : f32
// CHECK: linalg.generic
func.func @rotate_llama3_scaling(%x: tensor<4x16xf32>, %p: tensor<4xi64>) -> tensor<4x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.llama3<factor = 8.0, original_max_position_embeddings = 256>>) : tensor<4x16xf32>, tensor<4xi64>
  return %0 : tensor<4x16xf32>
}

// -----

// YaRN, factor 4, original context 2048, r = 16 (correction range [3, 7]);
// attention factor 0.1·ln 4 + 1 = 1.13862944 folded into the table (in f64).
// CHECK-LABEL: func.func @rotate_yarn_scaling
// CHECK-DAG: %[[M:.+]] = arith.constant 1.138629436{{[0-9]*}} : f64
// CHECK-DAG: arith.constant dense<[1.000000e+00, 0.31622776601683794, 1.000000e-01, {{0\.0256935059888680[0-9]*}}, 6.250000e-03, {{0\.00138349647632366[0-9]*}}, 2.500000e-04, {{7\.90569415042094[0-9]*E-5}}]> : tensor<8xf64>
// CHECK: linalg.generic
// CHECK: arith.mulf %{{.+}}, %[[M]] : f64
// CHECK-NEXT: arith.mulf %{{.+}}, %[[M]] : f64
// CHECK-NEXT: arith.truncf
// CHECK-NEXT: arith.truncf
// CHECK-NEXT: linalg.yield
func.func @rotate_yarn_scaling(%x: tensor<4x16xf32>, %p: tensor<4xi64>) -> tensor<4x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.yarn<factor = 4.0, original_max_position_embeddings = 2048>>) : tensor<4x16xf32>, tensor<4xi64>
  return %0 : tensor<4x16xf32>
}

// -----

// YaRN with mscale / mscale_all_dim: m = (0.1·ln 40 + 1) / (0.05·ln 40 + 1);
// no truncation of the correction range, custom betas.
// CHECK-LABEL: func.func @rotate_yarn_mscale
// CHECK-DAG: %[[M:.+]] = arith.constant 1.155721990{{[0-9]*}} : f64
// CHECK-DAG: arith.constant dense<[1.000000e+00, 0.31622776601683794, 1.000000e-01, {{0\.0251029130573448[0-9]*}}, {{0\.00254010496244710[0-9]*}}, {{7\.90569415042094[0-9]*E-5}}, 2.500000e-05, {{7\.90569415042094[0-9]*E-6}}]> : tensor<8xf64>
// CHECK: arith.mulf %{{.+}}, %[[M]] : f64
func.func @rotate_yarn_mscale(%x: tensor<4x16xf32>, %p: tensor<4xi64>) -> tensor<4x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.yarn<factor = 40.0, original_max_position_embeddings = 2048, beta_fast = 16.0, beta_slow = 2.0, mscale = 1.0, mscale_all_dim = 0.5, truncate = false>>) : tensor<4x16xf32>, tensor<4xi64>
  return %0 : tensor<4x16xf32>
}

// -----

// An explicit attention factor overrides the one YaRN implies.
// CHECK-LABEL: func.func @rotate_yarn_explicit_attention_factor
// CHECK-NOT: arith.constant 1.138629436{{[0-9]*}} : f64
// CHECK: %[[M:.+]] = arith.constant 5.000000e-01 : f64
// CHECK-NOT: arith.constant 1.138629436{{[0-9]*}} : f64
func.func @rotate_yarn_explicit_attention_factor(%x: tensor<4x16xf32>, %p: tensor<4xi64>) -> tensor<4x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.yarn<factor = 4.0, original_max_position_embeddings = 2048>, attention_factor = 0.5>) : tensor<4x16xf32>, tensor<4xi64>
  return %0 : tensor<4x16xf32>
}

// -----

// Per-frequency divisors on r = 8 of a 16-dim head, base 100.
// CHECK-LABEL: func.func @rotate_freq_factors
// CHECK: arith.constant dense<[1.000000e+00, {{0\.1581138830084189[0-9]*}}, 2.500000e-02, {{0\.006324555320336757[0-9]*}}]> : tensor<4xf64>
func.func @rotate_freq_factors(%x: tensor<4x16xf32>, %p: tensor<4xi64>) -> tensor<4x16xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<dims = 8, base = 100.0, scaling = #rope.freq_factors<factors = [1.0, 2.0, 4.0, 5.0]>>) : tensor<4x16xf32>, tensor<4xi64>
  return %0 : tensor<4x16xf32>
}

// -----

// Dynamic NTK: the frequencies are computed at run time from the largest
// position, L = max(max_p + 1, L_orig); s = factor·L/L_orig − (factor − 1);
// inv_freq_i = θ^(-2i/r) · exp(-2i/(r-2) · ln s). Here r = 8, factor 2,
// L_orig = 16: factor/L_orig = 0.125, exponents [0, -1/3, -2/3, -1].
// CHECK-DAG: #[[ID1:.+]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[SCALAR:.+]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @rotate_dynamic_scaling
// CHECK-SAME: %[[P:[^:]+]]: tensor<4xi64>
// CHECK-DAG: %[[EXPS:.+]] = arith.constant dense<[-0.000000e+00, -0.33333333333333331, -0.66666666666666663, -1.000000e+00]> : tensor<4xf64>
// CHECK-DAG: %[[BASE_FREQS:.+]] = arith.constant dense<[1.000000e+00, 1.000000e-01, 1.000000e-02, 1.000000e-03]> : tensor<4xf64>
// CHECK-DAG: %[[RATIO:.+]] = arith.constant 1.250000e-01 : f64
// CHECK-DAG: %[[FM1:.+]] = arith.constant 1.000000e+00 : f64
// CHECK-DAG: %[[LORIG:.+]] = arith.constant 16 : i64
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1 : i64
// CHECK-DAG: %[[MIN:.+]] = arith.constant -9223372036854775808 : i64
// CHECK: %[[MINIT:.+]] = linalg.fill ins(%[[MIN]] : i64) outs(%{{.+}} : tensor<i64>)
// CHECK: %[[MAXT:.+]] = linalg.generic {indexing_maps = [#[[ID1]], #[[SCALAR]]], iterator_types = ["reduction"]} ins(%[[P]] : tensor<4xi64>) outs(%[[MINIT]] : tensor<i64>)
// CHECK: arith.maxsi
// CHECK: %[[MAXP:.+]] = tensor.extract %[[MAXT]][] : tensor<i64>
// CHECK: %[[LEN0:.+]] = arith.addi %[[MAXP]], %[[ONE]] : i64
// CHECK: %[[LEN:.+]] = arith.maxsi %[[LEN0]], %[[LORIG]] : i64
// CHECK: %[[LENF:.+]] = arith.sitofp %[[LEN]] : i64 to f64
// CHECK: %[[SCALED:.+]] = arith.mulf %[[LENF]], %[[RATIO]] : f64
// CHECK: %[[S:.+]] = arith.subf %[[SCALED]], %[[FM1]] : f64
// CHECK: %[[LOGS:.+]] = math.log %[[S]] : f64
// CHECK: %[[FREQS:.+]] = linalg.generic {indexing_maps = [#[[ID1]], #[[ID1]], #[[ID1]]], iterator_types = ["parallel"]} ins(%[[BASE_FREQS]], %[[EXPS]] : tensor<4xf64>, tensor<4xf64>)
// CHECK-NEXT: ^bb0(%[[BF:[^:]+]]: f64, %[[E:[^:]+]]: f64, %{{[^:]+}}: f64):
// CHECK-NEXT: %[[EL:.+]] = arith.mulf %[[E]], %[[LOGS]] : f64
// CHECK-NEXT: %[[POW:.+]] = math.exp %[[EL]] : f64
// CHECK-NEXT: %[[F:.+]] = arith.mulf %[[BF]], %[[POW]] : f64
// CHECK-NEXT: linalg.yield %[[F]] : f64
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[P]], %[[FREQS]] : tensor<4xi64>, tensor<4xf64>)
func.func @rotate_dynamic_scaling(%x: tensor<4x8xf32>, %p: tensor<4xi64>) -> tensor<4x8xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.dynamic<factor = 2.0, original_max_position_embeddings = 16>>) : tensor<4x8xf32>, tensor<4xi64>
  return %0 : tensor<4x8xf32>
}

// -----

// LongRoPE: short factors up to the original context (16), long factors
// beyond; selected at run time from the largest position. Attention factor
// sqrt(1 + ln 4 / ln 16) = 1.22474492.
// CHECK-LABEL: func.func @rotate_longrope_scaling
// CHECK-SAME: %[[P:[^:]+]]: tensor<4xi16>
// CHECK-DAG: %[[M:.+]] = arith.constant 1.224744871{{[0-9]*}} : f64
// CHECK-DAG: %[[LAST:.+]] = arith.constant 15 : i64
// CHECK-DAG: %[[LONG:.+]] = arith.constant dense<[1.000000e+00, 5.000000e-02, 2.500000e-03, 1.250000e-04]> : tensor<4xf64>
// CHECK-DAG: %[[SHORT:.+]] = arith.constant dense<[1.000000e+00, 1.000000e-01, 0.0066666666666666671, 5.000000e-04]> : tensor<4xf64>
// CHECK: linalg.generic {{.+}} ins(%[[P]] : tensor<4xi16>) outs(%{{.+}} : tensor<i64>)
// CHECK: arith.extsi %{{.+}} : i16 to i64
// CHECK: arith.maxsi
// CHECK: %[[MAXP:.+]] = tensor.extract
// CHECK: %[[IS_LONG:.+]] = arith.cmpi sgt, %[[MAXP]], %[[LAST]] : i64
// CHECK: %[[FREQS:.+]] = arith.select %[[IS_LONG]], %[[LONG]], %[[SHORT]] : tensor<4xf64>
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[P]], %[[FREQS]] : tensor<4xi16>, tensor<4xf64>)
// CHECK: arith.mulf %{{.+}}, %[[M]] : f64
// CHECK-NEXT: arith.mulf %{{.+}}, %[[M]] : f64
func.func @rotate_longrope_scaling(%x: tensor<4x8xbf16>, %p: tensor<4xi16>) -> tensor<4x8xbf16> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.longrope<short_factor = [1.0, 1.0, 1.5, 2.0], long_factor = [1.0, 2.0, 4.0, 8.0], factor = 4.0, original_max_position_embeddings = 16>>) : tensor<4x8xbf16>, tensor<4xi16>
  return %0 : tensor<4x8xbf16>
}

//===----------------------------------------------------------------------===//
// Table sharing
//===----------------------------------------------------------------------===//

// -----

// Q and K rotated with the same spec and positions read ONE table.
// CHECK-LABEL: func.func @rotate_q_and_k_share_one_table
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x4x8x16xf32>, %[[K:[^:]+]]: tensor<1x2x8x16xf32>, %[[P:[^:]+]]: tensor<8xi64>)
// CHECK: %[[T:.+]]:2 = linalg.generic {{.+}} ins(%[[P]], %{{.+}} : tensor<8xi64>, tensor<8xf64>)
// CHECK-COUNT-1: math.roundeven
// CHECK-NOT: math.roundeven
// CHECK: linalg.generic {{.+}} ins(%{{.+}}, %{{.+}}, %[[T]]#0, %[[T]]#1 : tensor<1x4x8x2x8xf32>, tensor<1x4x8x2x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>)
// CHECK-NOT: math.roundeven
// CHECK: linalg.generic {{.+}} ins(%{{.+}}, %{{.+}}, %[[T]]#0, %[[T]]#1 : tensor<1x2x8x2x8xf32>, tensor<1x2x8x2x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>)
// CHECK-NOT: math.roundeven
// CHECK: return
func.func @rotate_q_and_k_share_one_table(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %p: tensor<8xi64>) -> (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>) {
  %0 = rope.rotate %q, %p rotary(#rope.spec<>) : tensor<1x4x8x16xf32>, tensor<8xi64>
  %1 = rope.rotate %k, %p rotary(#rope.spec<>) : tensor<1x2x8x16xf32>, tensor<8xi64>
  return %0, %1 : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>
}

// -----

// Different positions: one table each.
// CHECK-LABEL: func.func @rotate_different_positions_two_tables
// CHECK-SAME: %[[QP:[^:]+]]: tensor<8xi64>, %[[KP:[^:]+]]: tensor<8xi64>
// CHECK: linalg.generic {{.+}} ins(%[[QP]], %{{.+}} : tensor<8xi64>, tensor<8xf64>)
// CHECK-COUNT-1: math.roundeven
// CHECK: linalg.generic {{.+}} ins(%[[KP]], %{{.+}} : tensor<8xi64>, tensor<8xf64>)
// CHECK-COUNT-1: math.roundeven
// CHECK-NOT: math.roundeven
func.func @rotate_different_positions_two_tables(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %qp: tensor<8xi64>, %kp: tensor<8xi64>) -> (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>) {
  %0 = rope.rotate %q, %qp rotary(#rope.spec<>) : tensor<1x4x8x16xf32>, tensor<8xi64>
  %1 = rope.rotate %k, %kp rotary(#rope.spec<>) : tensor<1x2x8x16xf32>, tensor<8xi64>
  return %0, %1 : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>
}

// -----

// Different specs (the inverse negates sin): one table each.
// CHECK-LABEL: func.func @rotate_different_specs_two_tables
// CHECK-COUNT-2: math.roundeven
// CHECK-NOT: math.roundeven
func.func @rotate_different_specs_two_tables(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %p: tensor<8xi64>) -> (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>) {
  %0 = rope.rotate %q, %p rotary(#rope.spec<>) : tensor<1x4x8x16xf32>, tensor<8xi64>
  %1 = rope.rotate %k, %p rotary(#rope.spec<inverse = true>) : tensor<1x2x8x16xf32>, tensor<8xi64>
  return %0, %1 : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>
}
