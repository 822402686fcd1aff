// RUN: rope-opt %s --rope-raise -split-input-file | FileCheck %s
// RUN: rope-opt %s --convert-elementwise-to-linalg --linalg-fuse-elementwise-ops --rope-raise -split-input-file | FileCheck %s
// The same frontends after elementwise fusion (ops merged into generics,
// reshapes moved past them) raise the same way.

// Half layout (Llama/NeoX `rotate_half`) spelled with tensor slices and
// concatenations and arith/math on tensors:
//   x·cos + cat(−x2, x1)·sin,  cos/sin = cos/sin(cat(f, f)),  f = p ⊗ inv_freq.
// The spec comes from the inv_freq constant.

// Base 10000, 16 dims ([B, H, S, D], positions [S]); multiplications and the
// addition have their operands in either order.
// CHECK-LABEL: func.func @llama_default
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x4x8x16xf32>, %[[P:[^:]+]]: tensor<8xi64>)
// CHECK-NEXT: %[[R:.+]] = rope.rotate %[[X]], %[[P]] rotary(#rope.spec<>) : tensor<2x4x8x16xf32>, tensor<8xi64>
// CHECK-NEXT: return %[[R]]
func.func @llama_default(%x: tensor<2x4x8x16xf32>, %pos: tensor<8xi64>) -> tensor<2x4x8x16xf32> {
  %inv = arith.constant dense<[1.000000000e+00, 3.162277639e-01, 1.000000015e-01, 3.162277862e-02, 9.999999776e-03, 3.162277862e-03, 1.000000047e-03, 3.162277862e-04]> : tensor<8xf32>
  %pf = arith.sitofp %pos : tensor<8xi64> to tensor<8xf32>
  %e0 = tensor.empty() : tensor<8x8xf32>
  %pb = linalg.broadcast ins(%pf : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [1]
  %ib = linalg.broadcast ins(%inv : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [0]
  %freqs = arith.mulf %ib, %pb : tensor<8x8xf32>
  %emb = tensor.concat dim(1) %freqs, %freqs : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x16xf32>
  %cos = math.cos %emb : tensor<8x16xf32>
  %sin = math.sin %emb : tensor<8x16xf32>
  %e1 = tensor.empty() : tensor<2x4x8x16xf32>
  %cb = linalg.broadcast ins(%cos : tensor<8x16xf32>) outs(%e1 : tensor<2x4x8x16xf32>) dimensions = [0, 1]
  %sb = linalg.broadcast ins(%sin : tensor<8x16xf32>) outs(%e1 : tensor<2x4x8x16xf32>) dimensions = [0, 1]
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 8] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
  %n2 = arith.negf %x2 : tensor<2x4x8x8xf32>
  %rh = tensor.concat dim(3) %n2, %x1 : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>
  %a = arith.mulf %cb, %x : tensor<2x4x8x16xf32>
  %b = arith.mulf %rh, %sb : tensor<2x4x8x16xf32>
  %r = arith.addf %b, %a : tensor<2x4x8x16xf32>
  return %r : tensor<2x4x8x16xf32>
}

// -----

// [B, S, H, D] with per-sequence positions [B, S] (i32), base 500000: the
// sequence dim is 1. Tables broadcast over the heads.
// CHECK-LABEL: func.func @bshd_per_batch_positions
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x8x4x16xf32>, %[[P:[^:]+]]: tensor<2x8xi32>)
// CHECK-NEXT: %[[R:.+]] = rope.rotate %[[X]], %[[P]] rotary(#rope.spec<base = 5.000000e+05>) seq_dim = 1 : tensor<2x8x4x16xf32>, tensor<2x8xi32>
// CHECK-NEXT: return %[[R]]
func.func @bshd_per_batch_positions(%x: tensor<2x8x4x16xf32>, %pos: tensor<2x8xi32>) -> tensor<2x8x4x16xf32> {
  %inv = arith.constant dense<[1.000000000e+00, 1.939227581e-01, 3.760603070e-02, 7.292665076e-03, 1.414213446e-03, 2.742481884e-04, 5.318296462e-05, 1.031338525e-05]> : tensor<8xf32>
  %pf = arith.sitofp %pos : tensor<2x8xi32> to tensor<2x8xf32>
  %e0 = tensor.empty() : tensor<2x8x8xf32>
  %pb = linalg.broadcast ins(%pf : tensor<2x8xf32>) outs(%e0 : tensor<2x8x8xf32>) dimensions = [2]
  %ib = linalg.broadcast ins(%inv : tensor<8xf32>) outs(%e0 : tensor<2x8x8xf32>) dimensions = [0, 1]
  %freqs = arith.mulf %pb, %ib : tensor<2x8x8xf32>
  %emb = tensor.concat dim(2) %freqs, %freqs : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x16xf32>
  %cos = math.cos %emb : tensor<2x8x16xf32>
  %sin = math.sin %emb : tensor<2x8x16xf32>
  %e1 = tensor.empty() : tensor<2x8x4x16xf32>
  %cb = linalg.broadcast ins(%cos : tensor<2x8x16xf32>) outs(%e1 : tensor<2x8x4x16xf32>) dimensions = [2]
  %sb = linalg.broadcast ins(%sin : tensor<2x8x16xf32>) outs(%e1 : tensor<2x8x4x16xf32>) dimensions = [2]
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [2, 8, 4, 8] [1, 1, 1, 1] : tensor<2x8x4x16xf32> to tensor<2x8x4x8xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 8] [2, 8, 4, 8] [1, 1, 1, 1] : tensor<2x8x4x16xf32> to tensor<2x8x4x8xf32>
  %n2 = arith.negf %x2 : tensor<2x8x4x8xf32>
  %rh = tensor.concat dim(3) %n2, %x1 : (tensor<2x8x4x8xf32>, tensor<2x8x4x8xf32>) -> tensor<2x8x4x16xf32>
  %a = arith.mulf %x, %cb : tensor<2x8x4x16xf32>
  %b = arith.mulf %rh, %sb : tensor<2x8x4x16xf32>
  %r = arith.addf %a, %b : tensor<2x8x4x16xf32>
  return %r : tensor<2x8x4x16xf32>
}

// -----

// inv_freq = 500000^(−i/8) / 4 (f32): linear scaling (position
// interpolation) with factor 4.
// CHECK-LABEL: func.func @linear_scaling
// CHECK: rope.rotate %{{.+}}, %{{.+}} rotary(#rope.spec<base = 5.000000e+05, scaling = #rope.linear<factor = 4.000000e+00>>)
// CHECK-NOT: tensor.concat
func.func @linear_scaling(%x: tensor<2x4x8x16xf32>, %pos: tensor<8xi64>) -> tensor<2x4x8x16xf32> {
  %inv = arith.constant dense<[2.500000000e-01, 4.848068953e-02, 9.401507676e-03, 1.823166269e-03, 3.535533615e-04, 6.856204709e-05, 1.329574116e-05, 2.578346312e-06]> : tensor<8xf32>
  %pf = arith.sitofp %pos : tensor<8xi64> to tensor<8xf32>
  %e0 = tensor.empty() : tensor<8x8xf32>
  %pb = linalg.broadcast ins(%pf : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [1]
  %ib = linalg.broadcast ins(%inv : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [0]
  %freqs = arith.mulf %pb, %ib : tensor<8x8xf32>
  %emb = tensor.concat dim(1) %freqs, %freqs : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x16xf32>
  %cos = math.cos %emb : tensor<8x16xf32>
  %sin = math.sin %emb : tensor<8x16xf32>
  %e1 = tensor.empty() : tensor<2x4x8x16xf32>
  %cb = linalg.broadcast ins(%cos : tensor<8x16xf32>) outs(%e1 : tensor<2x4x8x16xf32>) dimensions = [0, 1]
  %sb = linalg.broadcast ins(%sin : tensor<8x16xf32>) outs(%e1 : tensor<2x4x8x16xf32>) dimensions = [0, 1]
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 8] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
  %n2 = arith.negf %x2 : tensor<2x4x8x8xf32>
  %rh = tensor.concat dim(3) %n2, %x1 : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>
  %a = arith.mulf %x, %cb : tensor<2x4x8x16xf32>
  %b = arith.mulf %rh, %sb : tensor<2x4x8x16xf32>
  %r = arith.addf %a, %b : tensor<2x4x8x16xf32>
  return %r : tensor<2x4x8x16xf32>
}

// -----

// Llama 3 frequencies (factor 8, low/high frequency factors 1/4, original
// context 8192) are not geometric: explicit per-frequency factors relative
// to base 500000 (the unscaled high frequencies), smooth in the middle.
// CHECK-LABEL: func.func @llama3_frequencies
// CHECK: rope.rotate %{{.+}}, %{{.+}} rotary(#rope.spec<base = 5.000000e+05, scaling = #rope.freq_factors<factors = [1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00, {{2\.69453[0-9]*(e\+00)?}}, 8.000000e+00, 8.000000e+00, 8.000000e+00]>>)
// CHECK-NOT: math.cos
func.func @llama3_frequencies(%x: tensor<2x4x8x16xf32>, %pos: tensor<8xi64>) -> tensor<2x4x8x16xf32> {
  %inv = arith.constant dense<[1.000000000e+00, 1.939227581e-01, 3.760603070e-02, 7.292665076e-03, 5.248460220e-04, 3.428102355e-05, 6.647870578e-06, 1.289173156e-06]> : tensor<8xf32>
  %pf = arith.sitofp %pos : tensor<8xi64> to tensor<8xf32>
  %e0 = tensor.empty() : tensor<8x8xf32>
  %pb = linalg.broadcast ins(%pf : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [1]
  %ib = linalg.broadcast ins(%inv : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [0]
  %freqs = arith.mulf %pb, %ib : tensor<8x8xf32>
  %emb = tensor.concat dim(1) %freqs, %freqs : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x16xf32>
  %cos = math.cos %emb : tensor<8x16xf32>
  %sin = math.sin %emb : tensor<8x16xf32>
  %e1 = tensor.empty() : tensor<2x4x8x16xf32>
  %cb = linalg.broadcast ins(%cos : tensor<8x16xf32>) outs(%e1 : tensor<2x4x8x16xf32>) dimensions = [0, 1]
  %sb = linalg.broadcast ins(%sin : tensor<8x16xf32>) outs(%e1 : tensor<2x4x8x16xf32>) dimensions = [0, 1]
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 8] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
  %n2 = arith.negf %x2 : tensor<2x4x8x8xf32>
  %rh = tensor.concat dim(3) %n2, %x1 : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>
  %a = arith.mulf %x, %cb : tensor<2x4x8x16xf32>
  %b = arith.mulf %rh, %sb : tensor<2x4x8x16xf32>
  %r = arith.addf %a, %b : tensor<2x4x8x16xf32>
  return %r : tensor<2x4x8x16xf32>
}

// -----

// f16 data: tables computed in f32, scaled by an attention factor (YaRN's
// 0.1·ln(4) + 1, as an f32 constant) and cast to f16 (`cos.to(x.dtype)`).
// CHECK-LABEL: func.func @f16_attention_factor
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x2x8x16xf16>, %[[P:[^:]+]]: tensor<8xi64>)
// CHECK-NEXT: %[[R:.+]] = rope.rotate %[[X]], %[[P]] rotary(#rope.spec<attention_factor = 1.1386294364929199>) : tensor<1x2x8x16xf16>, tensor<8xi64>
// CHECK-NEXT: return %[[R]]
func.func @f16_attention_factor(%x: tensor<1x2x8x16xf16>, %pos: tensor<8xi64>) -> tensor<1x2x8x16xf16> {
  %inv = arith.constant dense<[1.000000000e+00, 3.162277639e-01, 1.000000015e-01, 3.162277862e-02, 9.999999776e-03, 3.162277862e-03, 1.000000047e-03, 3.162277862e-04]> : tensor<8xf32>
  %m = arith.constant dense<1.13862944> : tensor<8x16xf32>
  %pf = arith.sitofp %pos : tensor<8xi64> to tensor<8xf32>
  %e0 = tensor.empty() : tensor<8x8xf32>
  %pb = linalg.broadcast ins(%pf : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [1]
  %ib = linalg.broadcast ins(%inv : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [0]
  %freqs = arith.mulf %pb, %ib : tensor<8x8xf32>
  %emb = tensor.concat dim(1) %freqs, %freqs : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x16xf32>
  %cos = math.cos %emb : tensor<8x16xf32>
  %sin = math.sin %emb : tensor<8x16xf32>
  %cosm = arith.mulf %cos, %m : tensor<8x16xf32>
  %sinm = arith.mulf %m, %sin : tensor<8x16xf32>
  %cosh = arith.truncf %cosm : tensor<8x16xf32> to tensor<8x16xf16>
  %sinh = arith.truncf %sinm : tensor<8x16xf32> to tensor<8x16xf16>
  %e1 = tensor.empty() : tensor<1x2x8x16xf16>
  %cb = linalg.broadcast ins(%cosh : tensor<8x16xf16>) outs(%e1 : tensor<1x2x8x16xf16>) dimensions = [0, 1]
  %sb = linalg.broadcast ins(%sinh : tensor<8x16xf16>) outs(%e1 : tensor<1x2x8x16xf16>) dimensions = [0, 1]
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [1, 2, 8, 8] [1, 1, 1, 1] : tensor<1x2x8x16xf16> to tensor<1x2x8x8xf16>
  %x2 = tensor.extract_slice %x[0, 0, 0, 8] [1, 2, 8, 8] [1, 1, 1, 1] : tensor<1x2x8x16xf16> to tensor<1x2x8x8xf16>
  %n2 = arith.negf %x2 : tensor<1x2x8x8xf16>
  %rh = tensor.concat dim(3) %n2, %x1 : (tensor<1x2x8x8xf16>, tensor<1x2x8x8xf16>) -> tensor<1x2x8x16xf16>
  %a = arith.mulf %x, %cb : tensor<1x2x8x16xf16>
  %b = arith.mulf %rh, %sb : tensor<1x2x8x16xf16>
  %r = arith.addf %a, %b : tensor<1x2x8x16xf16>
  return %r : tensor<1x2x8x16xf16>
}

// -----

// x·cos − rotate_half(x)·sin is the inverse rotation.
// CHECK-LABEL: func.func @inverse_by_subtraction
// CHECK: rope.rotate %{{.+}}, %{{.+}} rotary(#rope.spec<inverse = true>)
// CHECK-NOT: arith.subf
func.func @inverse_by_subtraction(%x: tensor<2x4x8x16xf32>, %pos: tensor<8xi64>) -> tensor<2x4x8x16xf32> {
  %inv = arith.constant dense<[1.000000000e+00, 3.162277639e-01, 1.000000015e-01, 3.162277862e-02, 9.999999776e-03, 3.162277862e-03, 1.000000047e-03, 3.162277862e-04]> : tensor<8xf32>
  %pf = arith.sitofp %pos : tensor<8xi64> to tensor<8xf32>
  %e0 = tensor.empty() : tensor<8x8xf32>
  %pb = linalg.broadcast ins(%pf : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [1]
  %ib = linalg.broadcast ins(%inv : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [0]
  %freqs = arith.mulf %pb, %ib : tensor<8x8xf32>
  %emb = tensor.concat dim(1) %freqs, %freqs : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x16xf32>
  %cos = math.cos %emb : tensor<8x16xf32>
  %sin = math.sin %emb : tensor<8x16xf32>
  %e1 = tensor.empty() : tensor<2x4x8x16xf32>
  %cb = linalg.broadcast ins(%cos : tensor<8x16xf32>) outs(%e1 : tensor<2x4x8x16xf32>) dimensions = [0, 1]
  %sb = linalg.broadcast ins(%sin : tensor<8x16xf32>) outs(%e1 : tensor<2x4x8x16xf32>) dimensions = [0, 1]
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 8] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
  %n2 = arith.negf %x2 : tensor<2x4x8x8xf32>
  %rh = tensor.concat dim(3) %n2, %x1 : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>
  %a = arith.mulf %x, %cb : tensor<2x4x8x16xf32>
  %b = arith.mulf %sb, %rh : tensor<2x4x8x16xf32>
  %r = arith.subf %a, %b : tensor<2x4x8x16xf32>
  return %r : tensor<2x4x8x16xf32>
}

// -----

// cat(x2, −x1): the other member negated, the inverse rotation again.
// CHECK-LABEL: func.func @inverse_by_negated_first_half
// CHECK: rope.rotate %{{.+}}, %{{.+}} rotary(#rope.spec<inverse = true>)
// CHECK-NOT: arith.negf
func.func @inverse_by_negated_first_half(%x: tensor<2x4x8x16xf32>, %pos: tensor<8xi64>) -> tensor<2x4x8x16xf32> {
  %inv = arith.constant dense<[1.000000000e+00, 3.162277639e-01, 1.000000015e-01, 3.162277862e-02, 9.999999776e-03, 3.162277862e-03, 1.000000047e-03, 3.162277862e-04]> : tensor<8xf32>
  %pf = arith.sitofp %pos : tensor<8xi64> to tensor<8xf32>
  %e0 = tensor.empty() : tensor<8x8xf32>
  %pb = linalg.broadcast ins(%pf : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [1]
  %ib = linalg.broadcast ins(%inv : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [0]
  %freqs = arith.mulf %pb, %ib : tensor<8x8xf32>
  %emb = tensor.concat dim(1) %freqs, %freqs : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x16xf32>
  %cos = math.cos %emb : tensor<8x16xf32>
  %sin = math.sin %emb : tensor<8x16xf32>
  %e1 = tensor.empty() : tensor<2x4x8x16xf32>
  %cb = linalg.broadcast ins(%cos : tensor<8x16xf32>) outs(%e1 : tensor<2x4x8x16xf32>) dimensions = [0, 1]
  %sb = linalg.broadcast ins(%sin : tensor<8x16xf32>) outs(%e1 : tensor<2x4x8x16xf32>) dimensions = [0, 1]
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 8] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
  %n1 = arith.negf %x1 : tensor<2x4x8x8xf32>
  %rh = tensor.concat dim(3) %x2, %n1 : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>
  %a = arith.mulf %x, %cb : tensor<2x4x8x16xf32>
  %b = arith.mulf %rh, %sb : tensor<2x4x8x16xf32>
  %r = arith.addf %a, %b : tensor<2x4x8x16xf32>
  return %r : tensor<2x4x8x16xf32>
}

// -----

// Dynamic batch and sequence: positions [?] along the dynamic sequence dim.
// CHECK-LABEL: func.func @dynamic_batch_and_sequence
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x4x?x16xf32>, %[[P:[^:]+]]: tensor<?xi64>)
// CHECK-NEXT: %[[R:.+]] = rope.rotate %[[X]], %[[P]] rotary(#rope.spec<>) : tensor<?x4x?x16xf32>, tensor<?xi64>
// CHECK-NEXT: return %[[R]]
func.func @dynamic_batch_and_sequence(%x: tensor<?x4x?x16xf32>, %pos: tensor<?xi64>) -> tensor<?x4x?x16xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %x, %c0 : tensor<?x4x?x16xf32>
  %s = tensor.dim %x, %c2 : tensor<?x4x?x16xf32>
  %inv = arith.constant dense<[1.000000000e+00, 3.162277639e-01, 1.000000015e-01, 3.162277862e-02, 9.999999776e-03, 3.162277862e-03, 1.000000047e-03, 3.162277862e-04]> : tensor<8xf32>
  %pf = arith.sitofp %pos : tensor<?xi64> to tensor<?xf32>
  %e0 = tensor.empty(%s) : tensor<?x8xf32>
  %pb = linalg.broadcast ins(%pf : tensor<?xf32>) outs(%e0 : tensor<?x8xf32>) dimensions = [1]
  %ib = linalg.broadcast ins(%inv : tensor<8xf32>) outs(%e0 : tensor<?x8xf32>) dimensions = [0]
  %freqs = arith.mulf %pb, %ib : tensor<?x8xf32>
  %emb = tensor.concat dim(1) %freqs, %freqs : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x16xf32>
  %cos = math.cos %emb : tensor<?x16xf32>
  %sin = math.sin %emb : tensor<?x16xf32>
  %e1 = tensor.empty(%b, %s) : tensor<?x4x?x16xf32>
  %cb = linalg.broadcast ins(%cos : tensor<?x16xf32>) outs(%e1 : tensor<?x4x?x16xf32>) dimensions = [0, 1]
  %sb = linalg.broadcast ins(%sin : tensor<?x16xf32>) outs(%e1 : tensor<?x4x?x16xf32>) dimensions = [0, 1]
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [%b, 4, %s, 8] [1, 1, 1, 1] : tensor<?x4x?x16xf32> to tensor<?x4x?x8xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 8] [%b, 4, %s, 8] [1, 1, 1, 1] : tensor<?x4x?x16xf32> to tensor<?x4x?x8xf32>
  %n2 = arith.negf %x2 : tensor<?x4x?x8xf32>
  %rh = tensor.concat dim(3) %n2, %x1 : (tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32>) -> tensor<?x4x?x16xf32>
  %xc = arith.mulf %x, %cb : tensor<?x4x?x16xf32>
  %rs = arith.mulf %rh, %sb : tensor<?x4x?x16xf32>
  %r = arith.addf %xc, %rs : tensor<?x4x?x16xf32>
  return %r : tensor<?x4x?x16xf32>
}

// -----

// Decode: one token at one position ([1, 1] position_ids); the unit dims of
// the positions are dropped.
// CHECK-LABEL: func.func @decode_single_position
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x4x1x16xf32>, %[[P:[^:]+]]: tensor<1x1xi64>)
// CHECK-NEXT: %[[P1:.+]] = tensor.collapse_shape %[[P]] {{\[}}[0, 1]] : tensor<1x1xi64> into tensor<1xi64>
// CHECK-NEXT: %[[R:.+]] = rope.rotate %[[X]], %[[P1]] rotary(#rope.spec<>) : tensor<1x4x1x16xf32>, tensor<1xi64>
// CHECK-NEXT: return %[[R]]
func.func @decode_single_position(%x: tensor<1x4x1x16xf32>, %pos: tensor<1x1xi64>) -> tensor<1x4x1x16xf32> {
  %inv = arith.constant dense<[1.000000000e+00, 3.162277639e-01, 1.000000015e-01, 3.162277862e-02, 9.999999776e-03, 3.162277862e-03, 1.000000047e-03, 3.162277862e-04]> : tensor<8xf32>
  %pf = arith.sitofp %pos : tensor<1x1xi64> to tensor<1x1xf32>
  %e0 = tensor.empty() : tensor<1x1x8xf32>
  %pb = linalg.broadcast ins(%pf : tensor<1x1xf32>) outs(%e0 : tensor<1x1x8xf32>) dimensions = [2]
  %ib = linalg.broadcast ins(%inv : tensor<8xf32>) outs(%e0 : tensor<1x1x8xf32>) dimensions = [0, 1]
  %freqs = arith.mulf %pb, %ib : tensor<1x1x8xf32>
  %emb = tensor.concat dim(2) %freqs, %freqs : (tensor<1x1x8xf32>, tensor<1x1x8xf32>) -> tensor<1x1x16xf32>
  %cos = math.cos %emb : tensor<1x1x16xf32>
  %sin = math.sin %emb : tensor<1x1x16xf32>
  %e1 = tensor.empty() : tensor<1x4x1x16xf32>
  %cb = linalg.broadcast ins(%cos : tensor<1x1x16xf32>) outs(%e1 : tensor<1x4x1x16xf32>) dimensions = [1]
  %sb = linalg.broadcast ins(%sin : tensor<1x1x16xf32>) outs(%e1 : tensor<1x4x1x16xf32>) dimensions = [1]
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [1, 4, 1, 8] [1, 1, 1, 1] : tensor<1x4x1x16xf32> to tensor<1x4x1x8xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 8] [1, 4, 1, 8] [1, 1, 1, 1] : tensor<1x4x1x16xf32> to tensor<1x4x1x8xf32>
  %n2 = arith.negf %x2 : tensor<1x4x1x8xf32>
  %rh = tensor.concat dim(3) %n2, %x1 : (tensor<1x4x1x8xf32>, tensor<1x4x1x8xf32>) -> tensor<1x4x1x16xf32>
  %a = arith.mulf %x, %cb : tensor<1x4x1x16xf32>
  %b = arith.mulf %rh, %sb : tensor<1x4x1x16xf32>
  %r = arith.addf %a, %b : tensor<1x4x1x16xf32>
  return %r : tensor<1x4x1x16xf32>
}

// -----

// Positions sliced from a longer tensor (the last S of a cache's): the
// slice is the positions operand.
// CHECK-LABEL: func.func @sliced_positions
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x4x8x16xf32>, %[[ALL:[^:]+]]: tensor<32xi64>)
// CHECK-NEXT: %[[P:.+]] = tensor.extract_slice %[[ALL]][24] [8] [1]
// CHECK-NEXT: %[[R:.+]] = rope.rotate %[[X]], %[[P]] rotary(#rope.spec<>) : tensor<1x4x8x16xf32>, tensor<8xi64>
// CHECK-NEXT: return %[[R]]
func.func @sliced_positions(%x: tensor<1x4x8x16xf32>, %all: tensor<32xi64>) -> tensor<1x4x8x16xf32> {
  %inv = arith.constant dense<[1.000000000e+00, 3.162277639e-01, 1.000000015e-01, 3.162277862e-02, 9.999999776e-03, 3.162277862e-03, 1.000000047e-03, 3.162277862e-04]> : tensor<8xf32>
  %pos = tensor.extract_slice %all[24] [8] [1] : tensor<32xi64> to tensor<8xi64>
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

// -----

// x·sin + rotate_half(x)·cos looks like cos and sin exchanged, but with
// rh = rotate_half(x) it is rh·cos − rotate_half(rh)·sin: the inverse
// rotation of rh, raised as such.
// CHECK-LABEL: func.func @inverse_rotation_of_the_partner
// CHECK: %[[RH:.+]] = tensor.concat dim(3)
// CHECK-NEXT: %[[R:.+]] = rope.rotate %[[RH]], %{{.+}} rotary(#rope.spec<inverse = true>)
// CHECK-NEXT: return %[[R]]
func.func @inverse_rotation_of_the_partner(%x: tensor<2x4x8x16xf32>, %pos: tensor<8xi64>) -> tensor<2x4x8x16xf32> {
  %inv = arith.constant dense<[1.000000000e+00, 3.162277639e-01, 1.000000015e-01, 3.162277862e-02, 9.999999776e-03, 3.162277862e-03, 1.000000047e-03, 3.162277862e-04]> : tensor<8xf32>
  %pf = arith.sitofp %pos : tensor<8xi64> to tensor<8xf32>
  %e0 = tensor.empty() : tensor<8x8xf32>
  %pb = linalg.broadcast ins(%pf : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [1]
  %ib = linalg.broadcast ins(%inv : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [0]
  %freqs = arith.mulf %pb, %ib : tensor<8x8xf32>
  %emb = tensor.concat dim(1) %freqs, %freqs : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x16xf32>
  %cos = math.cos %emb : tensor<8x16xf32>
  %sin = math.sin %emb : tensor<8x16xf32>
  %e1 = tensor.empty() : tensor<2x4x8x16xf32>
  %cb = linalg.broadcast ins(%cos : tensor<8x16xf32>) outs(%e1 : tensor<2x4x8x16xf32>) dimensions = [0, 1]
  %sb = linalg.broadcast ins(%sin : tensor<8x16xf32>) outs(%e1 : tensor<2x4x8x16xf32>) dimensions = [0, 1]
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 8] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
  %n2 = arith.negf %x2 : tensor<2x4x8x8xf32>
  %rh = tensor.concat dim(3) %n2, %x1 : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>
  %a = arith.mulf %x, %sb : tensor<2x4x8x16xf32>
  %b = arith.mulf %rh, %cb : tensor<2x4x8x16xf32>
  %r = arith.addf %a, %b : tensor<2x4x8x16xf32>
  return %r : tensor<2x4x8x16xf32>
}

// -----

// Decode with a dynamic batch and one position per sequence given as [B]:
// expanded to [B, 1] along the unit sequence dim.
// CHECK-LABEL: func.func @decode_dynamic_batch
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x4x1x16xf32>, %[[P:[^:]+]]: tensor<?xi64>)
// CHECK: %[[P2:.+]] = tensor.expand_shape %[[P]] {{\[}}[0, 1]] output_shape [%{{.+}}, 1] : tensor<?xi64> into tensor<?x1xi64>
// CHECK-NEXT: %[[R:.+]] = rope.rotate %[[X]], %[[P2]] rotary(#rope.spec<>) : tensor<?x4x1x16xf32>, tensor<?x1xi64>
// CHECK-NEXT: return %[[R]]
func.func @decode_dynamic_batch(%x: tensor<?x4x1x16xf32>, %pos: tensor<?xi64>) -> tensor<?x4x1x16xf32> {
  %inv = arith.constant dense<[1.000000000e+00, 3.162277639e-01, 1.000000015e-01, 3.162277862e-02, 9.999999776e-03, 3.162277862e-03, 1.000000047e-03, 3.162277862e-04]> : tensor<8xf32>
  %inv2 = arith.constant dense<[1.000000000e+00, 3.162277639e-01, 1.000000015e-01, 3.162277862e-02, 9.999999776e-03, 3.162277862e-03, 1.000000047e-03, 3.162277862e-04]> : tensor<8xf32>
  %pf = arith.sitofp %pos : tensor<?xi64> to tensor<?xf32>
  %pf2 = arith.sitofp %pos : tensor<?xi64> to tensor<?xf32>
  %c0 = arith.constant 0 : index
  %bs = tensor.dim %x, %c0 : tensor<?x4x1x16xf32>
  %e0 = tensor.empty(%bs) : tensor<?x1x8xf32>
  %pb = linalg.broadcast ins(%pf : tensor<?xf32>) outs(%e0 : tensor<?x1x8xf32>) dimensions = [1, 2]
  %ib = linalg.broadcast ins(%inv : tensor<8xf32>) outs(%e0 : tensor<?x1x8xf32>) dimensions = [0, 1]
  %pb2 = linalg.broadcast ins(%pf2 : tensor<?xf32>) outs(%e0 : tensor<?x1x8xf32>) dimensions = [1, 2]
  %ib2 = linalg.broadcast ins(%inv2 : tensor<8xf32>) outs(%e0 : tensor<?x1x8xf32>) dimensions = [0, 1]
  %freqs = arith.mulf %pb, %ib : tensor<?x1x8xf32>
  %freqs2 = arith.mulf %pb2, %ib2 : tensor<?x1x8xf32>
  %emb = tensor.concat dim(2) %freqs, %freqs : (tensor<?x1x8xf32>, tensor<?x1x8xf32>) -> tensor<?x1x16xf32>
  %emb2 = tensor.concat dim(2) %freqs2, %freqs2 : (tensor<?x1x8xf32>, tensor<?x1x8xf32>) -> tensor<?x1x16xf32>
  %cos = math.cos %emb : tensor<?x1x16xf32>
  %sin = math.sin %emb2 : tensor<?x1x16xf32>
  %e1 = tensor.empty(%bs) : tensor<?x4x1x16xf32>
  %cb = linalg.broadcast ins(%cos : tensor<?x1x16xf32>) outs(%e1 : tensor<?x4x1x16xf32>) dimensions = [1]
  %sb = linalg.broadcast ins(%sin : tensor<?x1x16xf32>) outs(%e1 : tensor<?x4x1x16xf32>) dimensions = [1]
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [%bs, 4, 1, 8] [1, 1, 1, 1] : tensor<?x4x1x16xf32> to tensor<?x4x1x8xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 8] [%bs, 4, 1, 8] [1, 1, 1, 1] : tensor<?x4x1x16xf32> to tensor<?x4x1x8xf32>
  %eh = tensor.empty(%bs) : tensor<?x4x1x8xf32>
  %n2 = linalg.elementwise kind=#linalg.elementwise_kind<negf> ins(%x2 : tensor<?x4x1x8xf32>) outs(%eh : tensor<?x4x1x8xf32>) -> tensor<?x4x1x8xf32>
  %rh = tensor.concat dim(3) %n2, %x1 : (tensor<?x4x1x8xf32>, tensor<?x4x1x8xf32>) -> tensor<?x4x1x16xf32>
  %a = arith.mulf %x, %cb : tensor<?x4x1x16xf32>
  %b = arith.mulf %rh, %sb : tensor<?x4x1x16xf32>
  %r = linalg.map { arith.addf } ins(%a, %b : tensor<?x4x1x16xf32>, tensor<?x4x1x16xf32>) outs(%e1 : tensor<?x4x1x16xf32>)
  return %r : tensor<?x4x1x16xf32>
}
