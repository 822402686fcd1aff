// RUN: rope-opt %S/models/mistral_attn.mlir --rope-raise --canonicalize \
// RUN:   | FileCheck %s --implicit-check-not=math.cos --implicit-check-not=math.sin

// Mistral attention (theta 1e6, sliding window 4) as torch-mlir exports it:
// both rotations become rope.rotate with the plain spec at base 1e6.

// CHECK-LABEL: func.func @main(
// CHECK:         rope.rotate %{{.+}}, %{{.+}} rotary(#rope.spec<base = 1.000000e+06>) seq_dim = 2 : tensor<1x4x12x16xf32>, tensor<12xi64>
// CHECK:         rope.rotate %{{.+}}, %{{.+}} rotary(#rope.spec<base = 1.000000e+06>) seq_dim = 2 : tensor<1x2x12x16xf32>, tensor<12xi64>
// CHECK-NOT:     rope.rotate
