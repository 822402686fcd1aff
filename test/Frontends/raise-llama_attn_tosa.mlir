// RUN: rope-opt %S/models/llama_attn_tosa.mlir --rope-raise --rope-fold-rotation-into-qk --canonicalize \
// RUN:   | FileCheck %s --implicit-check-not=tosa.cos --implicit-check-not=tosa.sin \
// RUN:       --implicit-check-not=tosa.reduce_max --implicit-check-not=tosa.reduce_sum \
// RUN:       --implicit-check-not=tosa.exp --implicit-check-not=tosa.select \
// RUN:       --implicit-check-not=rope.rotate

// Llama 3.1 attention (eager) as torch-mlir exports it to tosa: the
// projections are tosa.matmul, Q·Kᵀ and P·V tosa.matmul on [B·H, S, D]
// reshapes, the causal mask a tosa.select of −inf by tosa.greater_equal of
// iota differences, the softmax reduce_max / sub / exp / reduce_sum /
// reciprocal / mul, and K and V repeated to the query heads by tosa.tile.
// All of it becomes one causal rope.attention over the projections' own
// [1, H, S, D] (K and V with their 2 kv heads), and the rotation (the
// llama3 spec recovered from the constants) goes inside it as the table of
// the position ids.

// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %{{.+}}: tensor<1x12x64xf32>, %[[IDS:.+]]: tensor<1x12xi64>)
// CHECK:         %[[Q:.+]] = tosa.transpose %{{.+}} {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x12x4x16xf32>) -> tensor<1x4x12x16xf32>
// CHECK:         %[[K:.+]] = tosa.transpose %{{.+}} {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x12x2x16xf32>) -> tensor<1x2x12x16xf32>
// CHECK:         %[[V:.+]] = tosa.transpose %{{.+}} {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x12x2x16xf32>) -> tensor<1x2x12x16xf32>
// CHECK:         %[[P:.+]] = tensor.collapse_shape %[[IDS]] {{\[}}[0, 1]] : tensor<1x12xi64> into tensor<12xi64>
// CHECK:         %[[COS:.+]], %[[SIN:.+]] = rope.table %[[P]] rotary(#rope.spec<base = 5.000000e+05, scaling = #rope.freq_factors<factors = [1.000000e+00, 1.000000e+00, 3.56853{{[0-9]+}}, 8.000000e+00, 8.000000e+00, 8.000000e+00, 8.000000e+00, 8.000000e+00]>>) head_dim = 16
// CHECK:         rope.attention %[[Q]], %[[K]], %[[V]] rotary_tables(%[[COS]], %[[SIN]], %[[COS]], %[[SIN]] : tensor<12x8xf32>, tensor<12x8xf32>, tensor<12x8xf32>, tensor<12x8xf32>) causal scale = 2.500000e-01
