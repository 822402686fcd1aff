// RUN: rope-opt %S/models/phi3_attn.mlir --rope-raise --canonicalize | FileCheck %s

// Phi-3 attention with longrope as torch-mlir exports it: HF picks the short
// or the long inv_freq at run time (torch.where on max(position_ids) + 1 > 32)
// and scales cos/sin by the attention factor. That choice is not a constant the
// raise can read, so no spec is recovered: both rotations become
// rope.rotate_with_tables with the computed [1, 1, S, D] cos/sin as operands
// (#rope.longrope would say the same thing; see docs/frontends.md).

// CHECK-LABEL: func.func @main(
// CHECK:         arith.maxsi
// CHECK:         math.cos
// CHECK:         math.sin
// CHECK:         rope.rotate_with_tables %{{.+}}, %{{.+}}, %{{.+}} : tensor<1x4x12x16xf32>, tensor<1x1x12x16xf32>
// CHECK:         rope.rotate_with_tables %{{.+}}, %{{.+}}, %{{.+}} : tensor<1x2x12x16xf32>, tensor<1x1x12x16xf32>
// CHECK-NOT:     rope.rotate
