// RUN: rope-opt %S/models/llama_attn_sdpa.mlir --rope-raise --canonicalize \
// RUN:   | FileCheck %s --implicit-check-not=math.cos --implicit-check-not=math.sin

// Llama 3.1 attention (sdpa) as torch-mlir exports it: HF's rotate_half RoPE of Q and K with
// cos/sin computed from the inv_freq constant and the position ids. Both
// rotations become rope.rotate, and the cos/sin computation goes away. The
// llama3 rule (theta 5e5, factor 8, low/high 1/4, original context 256) is
// recovered from the constant as per-frequency factors: 1 for the two short
// wavelengths (< 64), 8 for the five long ones (> 256), the smoothed
// 1 / ((1 - s)/8 + s) = 3.5685 (s = (256/wavelength - 1)/3) for the one between.

// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[X:.+]]: tensor<1x12x64xf32>, %[[IDS:.+]]: tensor<1x12xi64>)
// CHECK:         %[[P:.+]] = tensor.collapse_shape %[[IDS]] {{\[}}[0, 1]] : tensor<1x12xi64> into tensor<12xi64>
// CHECK:         rope.rotate %{{.+}}, %[[P]] rotary(#rope.spec<base = 5.000000e+05, scaling = #rope.freq_factors<factors = [1.000000e+00, 1.000000e+00, 3.56853{{[0-9]+}}, 8.000000e+00, 8.000000e+00, 8.000000e+00, 8.000000e+00, 8.000000e+00]>>) seq_dim = 2 : tensor<1x4x12x16xf32>, tensor<12xi64>
// CHECK:         %[[P2:.+]] = tensor.collapse_shape %[[IDS]]
// CHECK:         rope.rotate %{{.+}}, %[[P2]] rotary(#rope.spec<base = 5.000000e+05, scaling = #rope.freq_factors<factors = [1.000000e+00, 1.000000e+00, 3.56853{{[0-9]+}}, 8.000000e+00, 8.000000e+00, 8.000000e+00, 8.000000e+00, 8.000000e+00]>>) seq_dim = 2 : tensor<1x2x12x16xf32>, tensor<12xi64>
// CHECK-NOT:     rope.rotate
