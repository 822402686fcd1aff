// Found by the reliability work (docs/reliability.md): --rope-decompose-attention
// on a static empty query or key sequence (a valid op) emitted a
// tensor.extract_slice that the verifier rejects ("offset 2 is out-of-bounds:
// 0 >= 0"), so the default CPU pipeline failed on it. Such attention is now
// decomposed untiled (its online form over no keys, or for no queries).
// RUN: rope-opt %s -split-input-file --rope-decompose-attention | FileCheck %s
// RUN: rope-opt %s -split-input-file --rope-lower-to-cpu | FileCheck %s --check-prefix=CPU

// CHECK-LABEL: func.func @empty_keys
// CHECK-NOT: rope.
// CHECK: linalg.generic
// CPU: llvm.func @empty_keys
func.func @empty_keys(%q: tensor<1x1x2x8xf32>, %k: tensor<1x1x0x8xf32>) -> tensor<1x1x2x8xf32> {
  %r = rope.attention %q, %k, %k : tensor<1x1x2x8xf32>, tensor<1x1x0x8xf32>, tensor<1x1x0x8xf32>
  return %r : tensor<1x1x2x8xf32>
}

// -----

// CHECK-LABEL: func.func @empty_queries
// CHECK: rope.table
// CHECK-NOT: rope.attention
// CHECK-NOT: rope.online_attention
// CHECK: linalg.generic
// CPU: llvm.func @empty_queries
func.func @empty_queries(%q: tensor<1x2x0x8xf32>, %k: tensor<1x1x3x8xf32>) -> tensor<1x2x0x8xf32> {
  %r = rope.attention %q, %k, %k rotary(#rope.spec<>) causal : tensor<1x2x0x8xf32>, tensor<1x1x3x8xf32>, tensor<1x1x3x8xf32>
  return %r : tensor<1x2x0x8xf32>
}
