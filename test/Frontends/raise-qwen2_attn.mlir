// RUN: rope-opt %S/models/qwen2_attn.mlir --rope-raise --canonicalize \
// RUN:   | FileCheck %s --implicit-check-not=math.cos --implicit-check-not=math.sin

// Qwen2 attention with YaRN (theta 1e6, factor 4, original context 32768) as
// torch-mlir exports it. Both rotations become rope.rotate; YaRN comes back as
// per-frequency factors (1 for the three extrapolated frequencies, 4 for the
// three interpolated ones, the ramp's 4/3 and 2 between) with the attention
// factor 0.1·ln 4 + 1 = 1.13863 that HF folds into cos and sin.

// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[X:.+]]: tensor<1x12x64xf32>, %[[IDS:.+]]: tensor<1x12xi64>)
// CHECK:         rope.rotate %{{.+}}, %{{.+}} rotary(#rope.spec<base = 1.000000e+06, scaling = #rope.freq_factors<factors = [1.000000e+00, 1.000000e+00, 1.000000e+00, 1.33333{{[0-9]+}}, 2.000000e+00, 4.000000e+00, 4.000000e+00, 4.000000e+00]>, attention_factor = 1.13862{{[0-9]+}}>) seq_dim = 2 : tensor<1x4x12x16xf32>, tensor<12xi64>
// CHECK:         rope.rotate %{{.+}}, %{{.+}} rotary(#rope.spec<base = 1.000000e+06, scaling = #rope.freq_factors<{{.+}}>, attention_factor = 1.13862{{[0-9]+}}>) seq_dim = 2 : tensor<1x2x12x16xf32>, tensor<12xi64>
// CHECK-NOT:     rope.rotate
