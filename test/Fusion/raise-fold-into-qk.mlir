// RUN: rope-opt %s --rope-raise --rope-fold-rotation-into-qk | FileCheck %s

// Hugging Face Llama attention as a frontend emits it: one cos/sin table,
// applied to Q and K by `q·cos + rotate_half(q)·sin`, then attention. Once
// raised, the rotations fold into the attention: nothing rotated is
// materialised, and no frontend table is left.
// CHECK-LABEL: func.func @llama_attention
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x4x8x16xf32>, %[[K:[^:]+]]: tensor<1x2x8x16xf32>, %[[V:[^:]+]]: tensor<1x2x8x16xf32>, %[[P:[^:]+]]: tensor<8xi64>)
// CHECK-NOT: rope.rotate
// CHECK-NOT: math.cos
// CHECK: %[[O:.+]] = rope.attention %[[Q]], %[[K]], %[[V]] positions(%[[P]], %[[P]] : tensor<8xi64>, tensor<8xi64>) rotary(#rope.spec<base = 5.000000e+05>) causal :
// CHECK-NEXT: return %[[O]]
func.func @llama_attention(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %pos: tensor<8xi64>) -> tensor<1x4x8x16xf32> {
  %inv = arith.constant dense<[1.000000000e+00, 1.939227581e-01, 3.760603070e-02, 7.292665076e-03, 1.414213446e-03, 2.742481884e-04, 5.318296462e-05, 1.031338525e-05]> : tensor<8xf32>
  %pf = arith.sitofp %pos : tensor<8xi64> to tensor<8xf32>
  %e0 = tensor.empty() : tensor<8x8xf32>
  %pb = linalg.broadcast ins(%pf : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [1]
  %ib = linalg.broadcast ins(%inv : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [0]
  %freqs = arith.mulf %pb, %ib : tensor<8x8xf32>
  %emb = tensor.concat dim(1) %freqs, %freqs : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x16xf32>
  %cos = math.cos %emb : tensor<8x16xf32>
  %sin = math.sin %emb : tensor<8x16xf32>

  %eq = tensor.empty() : tensor<1x4x8x16xf32>
  %qcos = linalg.broadcast ins(%cos : tensor<8x16xf32>) outs(%eq : tensor<1x4x8x16xf32>) dimensions = [0, 1]
  %qsin = linalg.broadcast ins(%sin : tensor<8x16xf32>) outs(%eq : tensor<1x4x8x16xf32>) dimensions = [0, 1]
  %q1 = tensor.extract_slice %q[0, 0, 0, 0] [1, 4, 8, 8] [1, 1, 1, 1] : tensor<1x4x8x16xf32> to tensor<1x4x8x8xf32>
  %q2 = tensor.extract_slice %q[0, 0, 0, 8] [1, 4, 8, 8] [1, 1, 1, 1] : tensor<1x4x8x16xf32> to tensor<1x4x8x8xf32>
  %nq2 = arith.negf %q2 : tensor<1x4x8x8xf32>
  %qrh = tensor.concat dim(3) %nq2, %q1 : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x16xf32>
  %qa = arith.mulf %q, %qcos : tensor<1x4x8x16xf32>
  %qb = arith.mulf %qrh, %qsin : tensor<1x4x8x16xf32>
  %qr = arith.addf %qa, %qb : tensor<1x4x8x16xf32>

  %ek = tensor.empty() : tensor<1x2x8x16xf32>
  %kcos = linalg.broadcast ins(%cos : tensor<8x16xf32>) outs(%ek : tensor<1x2x8x16xf32>) dimensions = [0, 1]
  %ksin = linalg.broadcast ins(%sin : tensor<8x16xf32>) outs(%ek : tensor<1x2x8x16xf32>) dimensions = [0, 1]
  %k1 = tensor.extract_slice %k[0, 0, 0, 0] [1, 2, 8, 8] [1, 1, 1, 1] : tensor<1x2x8x16xf32> to tensor<1x2x8x8xf32>
  %k2 = tensor.extract_slice %k[0, 0, 0, 8] [1, 2, 8, 8] [1, 1, 1, 1] : tensor<1x2x8x16xf32> to tensor<1x2x8x8xf32>
  %nk2 = arith.negf %k2 : tensor<1x2x8x8xf32>
  %krh = tensor.concat dim(3) %nk2, %k1 : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x16xf32>
  %ka = arith.mulf %kcos, %k : tensor<1x2x8x16xf32>
  %kb = arith.mulf %ksin, %krh : tensor<1x2x8x16xf32>
  %kr = arith.addf %kb, %ka : tensor<1x2x8x16xf32>

  %o = rope.attention %qr, %kr, %v positions(%pos, %pos : tensor<8xi64>, tensor<8xi64>) causal : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}
