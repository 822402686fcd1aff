// RUN: rope-opt %s --resolve-ranked-shaped-type-result-dims -canonicalize -cse | FileCheck %s

// tensor.dim of a rope op result resolves to a tensor.dim of the operand the
// extent comes from (ReifyRankedShapedTypeOpInterface), so the op itself is
// no longer needed for the size and dies.

// CHECK-LABEL: func.func @reify
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x4x?x16xf32>, %[[P:[^:]+]]: tensor<?xi64>, %[[BP:[^:]+]]: tensor<?x?xi64>, %[[V:[^:]+]]: tensor<?x4x?x8xf32>)
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.+]] = arith.constant 2 : index
// CHECK-NOT: rope.
// CHECK-DAG: %[[ROT_S:.+]] = tensor.dim %[[X]], %[[C2]]
// CHECK-DAG: %[[TAB_S:.+]] = tensor.dim %[[BP]], %[[C1]]
// CHECK-DAG: %[[ATT_B:.+]] = tensor.dim %[[X]], %[[C0]]
// CHECK-DAG: %[[ENC_B:.+]] = tensor.dim %[[BP]], %[[C0]]
// CHECK: return %[[ROT_S]], %[[TAB_S]], %[[ATT_B]], %[[ROT_S]], %[[ROT_S]], %[[ENC_B]], %[[TAB_S]]
func.func @reify(%x: tensor<?x4x?x16xf32>, %p: tensor<?xi64>, %bp: tensor<?x?xi64>, %v: tensor<?x4x?x8xf32>) -> (index, index, index, index, index, index, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %r = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<?x4x?x16xf32>, tensor<?xi64>
  %d0 = tensor.dim %r, %c2 : tensor<?x4x?x16xf32>
  %c, %s = rope.table %bp rotary(#rope.spec<>) head_dim = 16 : tensor<?x?xi64>
  %d1 = tensor.dim %s, %c1 : tensor<?x?x8xf32>
  %a = rope.attention %x, %x, %v : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x8xf32>
  %d2 = tensor.dim %a, %c0 : tensor<?x4x?x8xf32>
  %d3 = tensor.dim %a, %c2 : tensor<?x4x?x8xf32>
  %l = rope.linear_attention %x, %x, %v : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x8xf32>
  %d4 = tensor.dim %l, %c2 : tensor<?x4x?x8xf32>
  %e = rope.sinusoidal %bp : tensor<?x?xi64> -> tensor<?x?x16xf32>
  %d5 = tensor.dim %e, %c0 : tensor<?x?x16xf32>
  %d6 = tensor.dim %e, %c1 : tensor<?x?x16xf32>
  return %d0, %d1, %d2, %d3, %d4, %d5, %d6 : index, index, index, index, index, index, index
}
