// RUN: rope-opt %s --convert-rope-to-linalg -split-input-file | FileCheck %s

// rope.table becomes one linalg.generic with two f32 results (cos, sin) over
// positions × [r/2]; the phase p·inv_freq is formed in f64, reduced by its
// nearest multiple of π/2 (two fused multiply-adds), and its cos/sin taken in
// f64 from the quadrant's low bits before one rounding to f32.

// CHECK-DAG: #[[POS:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[FREQ:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @table
// CHECK-SAME: (%[[P:[^:]+]]: tensor<8xi64>) -> (tensor<8x4xf32>, tensor<8x4xf32>)
// CHECK-DAG: %[[PIO2_HI:.+]] = arith.constant 1.5707963267948966 : f64
// CHECK-DAG: %[[PIO2_LO:.+]] = arith.constant 6.123233995736766E-17 : f64
// CHECK-DAG: %[[TWO_OVER_PI:.+]] = arith.constant 0.63661977236758138 : f64
// CHECK-DAG: %[[F:.+]] = arith.constant dense<[1.000000e+00, 1.000000e-01, 1.000000e-02, 1.000000e-03]> : tensor<4xf64>
// CHECK: %[[INIT:.+]] = tensor.empty() : tensor<8x4xf32>
// CHECK: %[[T:.+]]:2 = linalg.generic {indexing_maps = [#[[POS]], #[[FREQ]], #[[OUT]], #[[OUT]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[P]], %[[F]] : tensor<8xi64>, tensor<4xf64>) outs(%[[INIT]], %[[INIT]] : tensor<8x4xf32>, tensor<8x4xf32>)
// CHECK-NEXT: ^bb0(%[[IP:[^:]+]]: i64, %[[IF:[^:]+]]: f64, %{{[^:]+}}: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[PF:.+]] = arith.sitofp %[[IP]] : i64 to f64
// CHECK-NEXT: %[[PHASE:.+]] = arith.mulf %[[PF]], %[[IF]] : f64
// CHECK-NEXT: %[[QF:.+]] = arith.mulf %[[PHASE]], %[[TWO_OVER_PI]] : f64
// CHECK-NEXT: %[[Q:.+]] = math.roundeven %[[QF]] : f64
// CHECK-NEXT: %[[NEG_Q:.+]] = arith.negf %[[Q]] : f64
// CHECK-NEXT: %[[R_HI:.+]] = math.fma %[[NEG_Q]], %[[PIO2_HI]], %[[PHASE]] : f64
// CHECK-NEXT: %{{.+}} = math.fma %[[NEG_Q]], %[[PIO2_LO]], %[[R_HI]] : f64
// CHECK: %[[QI:.+]] = arith.fptosi %[[Q]] : f64 to i64
// CHECK: arith.andi %[[QI]]
// CHECK: linalg.yield %{{.+}}, %{{.+}} : f32, f32
// CHECK: return %[[T]]#0, %[[T]]#1 : tensor<8x4xf32>, tensor<8x4xf32>
func.func @table(%p: tensor<8xi64>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %c, %s = rope.table %p rotary(#rope.spec<>) head_dim = 8 : tensor<8xi64>
  return %c, %s : tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// [B, S] positions and partial rotary (r = 4 of 16): the tables are [B, S, 2].
// CHECK-DAG: #[[BPOS:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[BFREQ:.+]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-DAG: #[[BOUT:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @table_batch_positions_partial
// CHECK-SAME: (%[[P:[^:]+]]: tensor<2x8xi32>)
// CHECK-DAG: %[[F:.+]] = arith.constant dense<[1.000000e+00, 1.000000e-02]> : tensor<2xf64>
// CHECK: %[[INIT:.+]] = tensor.empty() : tensor<2x8x2xf32>
// CHECK: %[[T:.+]]:2 = linalg.generic {indexing_maps = [#[[BPOS]], #[[BFREQ]], #[[BOUT]], #[[BOUT]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[P]], %[[F]] : tensor<2x8xi32>, tensor<2xf64>) outs(%[[INIT]], %[[INIT]] : tensor<2x8x2xf32>, tensor<2x8x2xf32>)
// CHECK-NEXT: ^bb0(%[[IP:[^:]+]]: i32,
// CHECK-NEXT: %[[P64:.+]] = arith.extsi %[[IP]] : i32 to i64
// CHECK-NEXT: arith.sitofp %[[P64]] : i64 to f64
// CHECK: return %[[T]]#0, %[[T]]#1
func.func @table_batch_positions_partial(%p: tensor<2x8xi32>) -> (tensor<2x8x2xf32>, tensor<2x8x2xf32>) {
  %c, %s = rope.table %p rotary(#rope.spec<dims = 4>) head_dim = 16 : tensor<2x8xi32>
  return %c, %s : tensor<2x8x2xf32>, tensor<2x8x2xf32>
}

// -----

// A single position (rank 0) gives [r/2] tables.
// CHECK-DAG: #[[SCALAR:.+]] = affine_map<(d0) -> ()>
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @table_scalar_position
// CHECK: linalg.generic {indexing_maps = [#[[SCALAR]], #[[ID]], #[[ID]], #[[ID]]], iterator_types = ["parallel"]}
// CHECK-SAME: ins(%{{.+}}, %{{.+}} : tensor<i16>, tensor<4xf64>) outs(%{{.+}}, %{{.+}} : tensor<4xf32>, tensor<4xf32>)
func.func @table_scalar_position(%p: tensor<i16>) -> (tensor<4xf32>, tensor<4xf32>) {
  %c, %s = rope.table %p rotary(#rope.spec<>) head_dim = 8 : tensor<i16>
  return %c, %s : tensor<4xf32>, tensor<4xf32>
}

// -----

// m folds into cos and sin (in f64, before the one rounding); the inverse
// negates sin only.
// CHECK-LABEL: func.func @table_inverse_attention_factor
// CHECK-DAG: %[[M:.+]] = arith.constant 3.000000e+00 : f64
// CHECK-DAG: %[[NEG_M:.+]] = arith.constant -3.000000e+00 : f64
// CHECK: linalg.generic
// CHECK: %[[MC:.+]] = arith.mulf %{{.+}}, %[[M]] : f64
// CHECK-NEXT: %[[MS:.+]] = arith.mulf %{{.+}}, %[[NEG_M]] : f64
// CHECK-NEXT: %[[C:.+]] = arith.truncf %[[MC]] : f64 to f32
// CHECK-NEXT: %[[S:.+]] = arith.truncf %[[MS]] : f64 to f32
// CHECK-NEXT: linalg.yield %[[C]], %[[S]] : f32, f32
func.func @table_inverse_attention_factor(%p: tensor<8xi64>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %c, %s = rope.table %p rotary(#rope.spec<attention_factor = 3.0, inverse = true>) head_dim = 8 : tensor<8xi64>
  return %c, %s : tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// Dynamic positions and dynamic NTK scaling: the largest position is a
// full reduction over the [B, S] positions; the table is sized by tensor.dim.
// CHECK-DAG: #[[ALL:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[NONE:.+]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @table_dynamic
// CHECK-SAME: (%[[P:[^:]+]]: tensor<?x?xi64>)
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK: linalg.generic {indexing_maps = [#[[ALL]], #[[NONE]]], iterator_types = ["reduction", "reduction"]} ins(%[[P]] : tensor<?x?xi64>) outs(%{{.+}} : tensor<i64>)
// CHECK: math.log
// CHECK: %[[F:.+]] = linalg.generic
// CHECK: math.exp
// CHECK: %[[B:.+]] = tensor.dim %[[P]], %[[C0]] : tensor<?x?xi64>
// CHECK: %[[S:.+]] = tensor.dim %[[P]], %[[C1]] : tensor<?x?xi64>
// CHECK: %[[INIT:.+]] = tensor.empty(%[[B]], %[[S]]) : tensor<?x?x2xf32>
// CHECK: %[[T:.+]]:2 = linalg.generic
// CHECK-SAME: ins(%[[P]], %[[F]] : tensor<?x?xi64>, tensor<2xf64>) outs(%[[INIT]], %[[INIT]] : tensor<?x?x2xf32>, tensor<?x?x2xf32>)
// CHECK: return %[[T]]#0, %[[T]]#1
func.func @table_dynamic(%p: tensor<?x?xi64>) -> (tensor<?x?x2xf32>, tensor<?x?x2xf32>) {
  %c, %s = rope.table %p rotary(#rope.spec<dims = 4, scaling = #rope.dynamic<factor = 2.0, original_max_position_embeddings = 16>>) head_dim = 8 : tensor<?x?xi64>
  return %c, %s : tensor<?x?x2xf32>, tensor<?x?x2xf32>
}

// -----

// Two identical tables in one block become one.
// CHECK-LABEL: func.func @table_duplicates_shared
// CHECK: %[[T:.+]]:2 = linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: return %[[T]]#0, %[[T]]#1, %[[T]]#0, %[[T]]#1
func.func @table_duplicates_shared(%p: tensor<8xi64>) -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {
  %c0, %s0 = rope.table %p rotary(#rope.spec<>) head_dim = 8 : tensor<8xi64>
  %c1, %s1 = rope.table %p rotary(#rope.spec<>) head_dim = 8 : tensor<8xi64>
  return %c0, %s0, %c1, %s1 : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// Tables for different head dims differ (r = head dim) and are not shared.
// CHECK-LABEL: func.func @table_different_head_dims
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.+}}, %{{.+}} : tensor<8x4xf32>, tensor<8x4xf32>)
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.+}}, %{{.+}} : tensor<8x8xf32>, tensor<8x8xf32>)
func.func @table_different_head_dims(%p: tensor<8xi64>) -> (tensor<8x4xf32>, tensor<8x8xf32>) {
  %c0, %s0 = rope.table %p rotary(#rope.spec<>) head_dim = 8 : tensor<8xi64>
  %c1, %s1 = rope.table %p rotary(#rope.spec<>) head_dim = 16 : tensor<8xi64>
  return %c0, %c1 : tensor<8x4xf32>, tensor<8x8xf32>
}

// -----

// A table inside a loop (a decode's key tile) of 64 static positions checks
// whether they are one run p0, p0 + 1, ... (a reduction of p[j] == p0 + j);
// if so, cos/sin of p0·f (one series per pair) combined by angle addition
// with those of j·f, compile-time constants [64, h] in f64; otherwise the
// series for every entry. A table outside any loop takes the series alone.
// CHECK-LABEL: func.func @table_of_a_tile
// CHECK-COUNT-2: arith.constant dense<{{.+}}> : tensor<64x4xf64>
// CHECK:         scf.for
// CHECK:           %[[P:.+]] = tensor.extract_slice
// CHECK:           %[[P0:.+]] = tensor.extract %[[P]][%{{.+}}] : tensor<64xi64>
// CHECK:           %[[EVERY:.+]] = linalg.generic {{.+}} iterator_types = ["reduction"]} ins(%[[P]] : tensor<64xi64>)
// CHECK:             arith.cmpi eq
// CHECK:             arith.andi
// CHECK:           %[[CONSECUTIVE:.+]] = tensor.extract %[[EVERY]][] : tensor<i1>
// CHECK:           scf.if %[[CONSECUTIVE]] -> (tensor<64x4xf32>, tensor<64x4xf32>)
// CHECK:             %[[BASE:.+]]:2 = linalg.generic {{.+}} outs(%{{.+}}, %{{.+}} : tensor<4xf64>, tensor<4xf64>)
// CHECK:             linalg.generic {{.+}} ins(%[[BASE]]#0, %[[BASE]]#1, %{{.+}}, %{{.+}} : tensor<4xf64>, tensor<4xf64>, tensor<64x4xf64>, tensor<64x4xf64>) outs(%{{.+}}, %{{.+}} : tensor<64x4xf32>, tensor<64x4xf32>)
// CHECK:               arith.subf
// CHECK:               arith.addf
// CHECK:           } else {
// CHECK:             math.roundeven
// CHECK:           }
// CHECK-LABEL: func.func @table_outside_a_loop
// CHECK-NOT:     scf.if
// CHECK:         math.roundeven
func.func @table_of_a_tile(%p: tensor<256xi64>, %init: tensor<64x4xf32>) -> tensor<64x4xf32> {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %r = scf.for %i = %c0 to %c256 step %c64 iter_args(%acc = %init) -> (tensor<64x4xf32>) {
    %tile = tensor.extract_slice %p[%i] [64] [1] : tensor<256xi64> to tensor<64xi64>
    %c, %s = rope.table %tile rotary(#rope.spec<>) head_dim = 8 : tensor<64xi64>
    %sum = arith.addf %c, %s : tensor<64x4xf32>
    scf.yield %sum : tensor<64x4xf32>
  }
  return %r : tensor<64x4xf32>
}
func.func @table_outside_a_loop(%p: tensor<64xi64>) -> (tensor<64x4xf32>, tensor<64x4xf32>) {
  %c, %s = rope.table %p rotary(#rope.spec<>) head_dim = 8 : tensor<64xi64>
  return %c, %s : tensor<64x4xf32>, tensor<64x4xf32>
}
