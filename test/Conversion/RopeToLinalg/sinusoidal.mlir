// RUN: rope-opt %s --convert-rope-to-linalg -split-input-file | FileCheck %s

// rope.sinusoidal: PE(p, 2i) = sin(p·w_i), PE(p, 2i+1) = cos(p·w_i),
// w_i = base^(-2i/D). One generic over positions × [D]; the per-lane
// frequency is a constant (each w_i twice), the phase is formed and reduced
// in f64, and the lane parity (low bit of the lane index) picks cos or sin.

// Base 100, D = 8: w = [1, 100^-0.25, 100^-0.5, 100^-0.75], each twice.
// CHECK-DAG: #[[POS:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[LANE:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @sinusoidal
// CHECK-SAME: (%[[P:[^:]+]]: tensor<8xi64>) -> tensor<8x8xf32>
// CHECK-DAG: %[[TWO_PI:.+]] = arith.constant 6.2831853071795862 : f64
// CHECK-DAG: %[[INV_TWO_PI:.+]] = arith.constant 0.15915494309189535 : f64
// CHECK-DAG: %[[W:.+]] = arith.constant dense<[1.000000e+00, 1.000000e+00, 0.31622776601683794, 0.31622776601683794, 1.000000e-01, 1.000000e-01, {{0\.03162277660168379[0-9]*}}, {{0\.03162277660168379[0-9]*}}]> : tensor<8xf64>
// CHECK: %[[INIT:.+]] = tensor.empty() : tensor<8x8xf32>
// CHECK: %[[PE:.+]] = linalg.generic {indexing_maps = [#[[POS]], #[[LANE]], #[[OUT]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[P]], %[[W]] : tensor<8xi64>, tensor<8xf64>) outs(%[[INIT]] : tensor<8x8xf32>)
// CHECK-NEXT: ^bb0(%[[IP:[^:]+]]: i64, %[[IW:[^:]+]]: f64, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[PF:.+]] = arith.sitofp %[[IP]] : i64 to f64
// CHECK-NEXT: %[[PHASE:.+]] = arith.mulf %[[PF]], %[[IW]] : f64
// CHECK-NEXT: %[[TURNS_F:.+]] = arith.mulf %[[PHASE]], %[[INV_TWO_PI]] : f64
// CHECK-NEXT: %[[TURNS:.+]] = math.roundeven %[[TURNS_F]] : f64
// CHECK-NEXT: %[[WHOLE:.+]] = arith.mulf %[[TURNS]], %[[TWO_PI]] : f64
// CHECK-NEXT: %[[RED:.+]] = arith.subf %[[PHASE]], %[[WHOLE]] : f64
// CHECK-NEXT: %[[R32:.+]] = arith.truncf %[[RED]] : f64 to f32
// CHECK-NEXT: %[[LANE_IDX:.+]] = linalg.index 1 : index
// CHECK-NEXT: %[[LANE_I64:.+]] = arith.index_cast %[[LANE_IDX]] : index to i64
// CHECK-NEXT: %[[ODD:.+]] = arith.trunci %[[LANE_I64]] : i64 to i1
// CHECK-NEXT: %[[C:.+]] = math.cos %[[R32]] : f32
// CHECK-NEXT: %[[S:.+]] = math.sin %[[R32]] : f32
// CHECK-NEXT: %[[V:.+]] = arith.select %[[ODD]], %[[C]], %[[S]] : f32
// CHECK-NEXT: linalg.yield %[[V]] : f32
// CHECK: return %[[PE]]
func.func @sinusoidal(%p: tensor<8xi64>) -> tensor<8x8xf32> {
  %0 = rope.sinusoidal %p base = 100.0 : tensor<8xi64> -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// Default base 10000, D = 4: w = [1, 1, 0.01, 0.01].
// CHECK-LABEL: func.func @sinusoidal_default_base
// CHECK: arith.constant dense<[1.000000e+00, 1.000000e+00, 1.000000e-02, 1.000000e-02]> : tensor<4xf64>
func.func @sinusoidal_default_base(%p: tensor<8xi64>) -> tensor<8x4xf32> {
  %0 = rope.sinusoidal %p : tensor<8xi64> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// [B, S] dynamic i32 positions, bf16 output: sizes from tensor.dim, positions
// widened to i64, the result truncated to bf16.
// CHECK-DAG: #[[POS:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[LANE:.+]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @sinusoidal_batch_dynamic_bf16
// CHECK-SAME: (%[[P:[^:]+]]: tensor<?x?xi32>)
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK: %[[B:.+]] = tensor.dim %[[P]], %[[C0]] : tensor<?x?xi32>
// CHECK: %[[S:.+]] = tensor.dim %[[P]], %[[C1]] : tensor<?x?xi32>
// CHECK: %[[INIT:.+]] = tensor.empty(%[[B]], %[[S]]) : tensor<?x?x4xbf16>
// CHECK: linalg.generic {indexing_maps = [#[[POS]], #[[LANE]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[P]], %{{.+}} : tensor<?x?xi32>, tensor<4xf64>) outs(%[[INIT]] : tensor<?x?x4xbf16>)
// CHECK-NEXT: ^bb0(%[[IP:[^:]+]]: i32,
// CHECK-NEXT: %[[P64:.+]] = arith.extsi %[[IP]] : i32 to i64
// CHECK-NEXT: arith.sitofp %[[P64]] : i64 to f64
// CHECK: linalg.index 2 : index
// CHECK: %[[V:.+]] = arith.select
// CHECK-NEXT: %[[V16:.+]] = arith.truncf %[[V]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[V16]] : bf16
func.func @sinusoidal_batch_dynamic_bf16(%p: tensor<?x?xi32>) -> tensor<?x?x4xbf16> {
  %0 = rope.sinusoidal %p : tensor<?x?xi32> -> tensor<?x?x4xbf16>
  return %0 : tensor<?x?x4xbf16>
}

// -----

// A single position (rank 0) gives a [D] encoding.
// CHECK-DAG: #[[SCALAR:.+]] = affine_map<(d0) -> ()>
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @sinusoidal_scalar_position
// CHECK: linalg.generic {indexing_maps = [#[[SCALAR]], #[[ID]], #[[ID]]], iterator_types = ["parallel"]}
// CHECK-SAME: ins(%{{.+}}, %{{.+}} : tensor<i16>, tensor<6xf64>) outs(%{{.+}} : tensor<6xf16>)
func.func @sinusoidal_scalar_position(%p: tensor<i16>) -> tensor<6xf16> {
  %0 = rope.sinusoidal %p : tensor<i16> -> tensor<6xf16>
  return %0 : tensor<6xf16>
}
