// RUN: rope-opt %s --rope-raise | FileCheck %s

// torch-mlir exports a model's constants as blobs (`dense_resource`), the
// inv_freq buffer of Hugging Face's rotary embedding among them: the spec is
// recovered from the blob as from a `dense` constant (the blob holds the f32
// values 10000^(-i/8), i = 0..7).

// CHECK-LABEL: func.func @llama_inv_freq_blob
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x4x8x16xf32>, %[[P:[^:]+]]: tensor<8xi64>)
// CHECK-NEXT: %[[R:.+]] = rope.rotate %[[X]], %[[P]] rotary(#rope.spec<>) : tensor<1x4x8x16xf32>, tensor<8xi64>
// CHECK-NEXT: return %[[R]]
func.func @llama_inv_freq_blob(%x: tensor<1x4x8x16xf32>, %pos: tensor<8xi64>) -> tensor<1x4x8x16xf32> {
  %inv = arith.constant dense_resource<torch_tensor_8_torch.float32> : tensor<8xf32>
  %pf = arith.sitofp %pos : tensor<8xi64> to tensor<8xf32>
  %e0 = tensor.empty() : tensor<8x8xf32>
  %pb = linalg.broadcast ins(%pf : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [1]
  %ib = linalg.broadcast ins(%inv : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [0]
  %freqs = arith.mulf %pb, %ib : tensor<8x8xf32>
  %emb = tensor.concat dim(1) %freqs, %freqs : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x16xf32>
  %cos = math.cos %emb : tensor<8x16xf32>
  %sin = math.sin %emb : tensor<8x16xf32>
  %e1 = tensor.empty() : tensor<1x4x8x16xf32>
  %cb = linalg.broadcast ins(%cos : tensor<8x16xf32>) outs(%e1 : tensor<1x4x8x16xf32>) dimensions = [0, 1]
  %sb = linalg.broadcast ins(%sin : tensor<8x16xf32>) outs(%e1 : tensor<1x4x8x16xf32>) dimensions = [0, 1]
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [1, 4, 8, 8] [1, 1, 1, 1] : tensor<1x4x8x16xf32> to tensor<1x4x8x8xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 8] [1, 4, 8, 8] [1, 1, 1, 1] : tensor<1x4x8x16xf32> to tensor<1x4x8x8xf32>
  %n2 = arith.negf %x2 : tensor<1x4x8x8xf32>
  %rh = tensor.concat dim(3) %n2, %x1 : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x16xf32>
  %a = arith.mulf %x, %cb : tensor<1x4x8x16xf32>
  %b = arith.mulf %rh, %sb : tensor<1x4x8x16xf32>
  %r = arith.addf %a, %b : tensor<1x4x8x16xf32>
  return %r : tensor<1x4x8x16xf32>
}

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_8_torch.float32: "0x040000000000803F9BE8A13ECDCCCC3DE386013D0AD7233C383E4F3B6F12833A60CBA539"
    }
  }
#-}
