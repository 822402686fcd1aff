// RUN: rope-opt %s --rope-raise -split-input-file | FileCheck %s
// RUN: rope-opt %s --convert-elementwise-to-linalg --linalg-fuse-elementwise-ops --rope-raise -split-input-file | FileCheck %s
// The same frontends after elementwise fusion (ops merged into generics,
// reshapes moved past them) raise the same way.

// Half layout spelled in linalg: every elementwise op a linalg.generic with
// broadcasting indexing maps (torch-mlir's form), named linalg ops, or one
// fused generic body; the tables from Hugging Face's LlamaRotaryEmbedding.

// torch-mlir's lowering of Hugging Face Llama: `inv_freq[None, :, None] @
// position_ids[:, None, :].float()` (a batch_matmul with a unit reduction
// into a zero fill), transposed, `cat((freqs, freqs), -1)`, cos/sin,
// `unsqueeze(1)`, broadcast by (d0, 0, d2, d3) maps, and `q·cos +
// rotate_half(q)·sin`. position_ids [1, S] becomes [S].
// CHECK-LABEL: func.func @hf_llama_torch_mlir
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x4x8x16xf32>, %[[P:[^:]+]]: tensor<1x8xi64>)
// CHECK-NEXT: %[[P1:.+]] = tensor.collapse_shape %[[P]] {{\[}}[0, 1]] : tensor<1x8xi64> into tensor<8xi64>
// CHECK-NEXT: %[[R:.+]] = rope.rotate %[[Q]], %[[P1]] rotary(#rope.spec<>) : tensor<1x4x8x16xf32>, tensor<8xi64>
// CHECK-NEXT: return %[[R]]
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#bcast = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
func.func @hf_llama_torch_mlir(%q: tensor<1x4x8x16xf32>, %position_ids: tensor<1x8xi64>) -> tensor<1x4x8x16xf32> {
  %cst0 = arith.constant 0.0 : f32
  %inv = arith.constant dense<[1.000000000e+00, 3.162277639e-01, 1.000000015e-01, 3.162277862e-02, 9.999999776e-03, 3.162277862e-03, 1.000000047e-03, 3.162277862e-04]> : tensor<8xf32>
  %inv3 = tensor.expand_shape %inv [[0, 1, 2]] output_shape [1, 8, 1] : tensor<8xf32> into tensor<1x8x1xf32>
  %p3 = tensor.expand_shape %position_ids [[0, 1], [2]] output_shape [1, 1, 8] : tensor<1x8xi64> into tensor<1x1x8xi64>
  %e = tensor.empty() : tensor<1x1x8xf32>
  %pf = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%p3 : tensor<1x1x8xi64>) outs(%e : tensor<1x1x8xf32>) {
  ^bb0(%in: i64, %out: f32):
    %f = arith.sitofp %in : i64 to f32
    linalg.yield %f : f32
  } -> tensor<1x1x8xf32>
  %e2 = tensor.empty() : tensor<1x8x8xf32>
  %z = linalg.fill ins(%cst0 : f32) outs(%e2 : tensor<1x8x8xf32>) -> tensor<1x8x8xf32>
  %mm = linalg.batch_matmul ins(%inv3, %pf : tensor<1x8x1xf32>, tensor<1x1x8xf32>) outs(%z : tensor<1x8x8xf32>) -> tensor<1x8x8xf32>
  %e3 = tensor.empty() : tensor<1x8x8xf32>
  %freqs = linalg.transpose ins(%mm : tensor<1x8x8xf32>) outs(%e3 : tensor<1x8x8xf32>) permutation = [0, 2, 1]
  %emb = tensor.concat dim(2) %freqs, %freqs : (tensor<1x8x8xf32>, tensor<1x8x8xf32>) -> tensor<1x8x16xf32>
  %e4 = tensor.empty() : tensor<1x8x16xf32>
  %cos = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%emb : tensor<1x8x16xf32>) outs(%e4 : tensor<1x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %c = math.cos %in : f32
    linalg.yield %c : f32
  } -> tensor<1x8x16xf32>
  %sin = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%emb : tensor<1x8x16xf32>) outs(%e4 : tensor<1x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = math.sin %in : f32
    linalg.yield %s : f32
  } -> tensor<1x8x16xf32>
  %cos4 = tensor.expand_shape %cos [[0, 1], [2], [3]] output_shape [1, 1, 8, 16] : tensor<1x8x16xf32> into tensor<1x1x8x16xf32>
  %sin4 = tensor.expand_shape %sin [[0, 1], [2], [3]] output_shape [1, 1, 8, 16] : tensor<1x8x16xf32> into tensor<1x1x8x16xf32>
  %e5 = tensor.empty() : tensor<1x4x8x16xf32>
  %qc = linalg.generic {indexing_maps = [#id4, #bcast, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%q, %cos4 : tensor<1x4x8x16xf32>, tensor<1x1x8x16xf32>) outs(%e5 : tensor<1x4x8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x4x8x16xf32>
  %x1 = tensor.extract_slice %q[0, 0, 0, 0] [1, 4, 8, 8] [1, 1, 1, 1] : tensor<1x4x8x16xf32> to tensor<1x4x8x8xf32>
  %x2 = tensor.extract_slice %q[0, 0, 0, 8] [1, 4, 8, 8] [1, 1, 1, 1] : tensor<1x4x8x16xf32> to tensor<1x4x8x8xf32>
  %e6 = tensor.empty() : tensor<1x4x8x8xf32>
  %n2 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x2 : tensor<1x4x8x8xf32>) outs(%e6 : tensor<1x4x8x8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<1x4x8x8xf32>
  %rh = tensor.concat dim(3) %n2, %x1 : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x16xf32>
  %rs = linalg.generic {indexing_maps = [#id4, #bcast, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%rh, %sin4 : tensor<1x4x8x16xf32>, tensor<1x1x8x16xf32>) outs(%e5 : tensor<1x4x8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x4x8x16xf32>
  %out = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%qc, %rs : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) outs(%e5 : tensor<1x4x8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x4x8x16xf32>
  return %out : tensor<1x4x8x16xf32>
}

// -----

// Named linalg ops: linalg.mul, linalg.add, linalg.negf, linalg.broadcast;
// the sum's operands in the other order.
// CHECK-LABEL: func.func @named_ops
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x4x8x16xf32>, %[[P:[^:]+]]: tensor<8xi32>)
// CHECK-NEXT: %[[R:.+]] = rope.rotate %[[X]], %[[P]] rotary(#rope.spec<>) : tensor<2x4x8x16xf32>, tensor<8xi32>
// CHECK-NEXT: return %[[R]]
func.func @named_ops(%x: tensor<2x4x8x16xf32>, %pos: tensor<8xi32>) -> tensor<2x4x8x16xf32> {
  %inv = arith.constant dense<[1.000000000e+00, 3.162277639e-01, 1.000000015e-01, 3.162277862e-02, 9.999999776e-03, 3.162277862e-03, 1.000000047e-03, 3.162277862e-04]> : tensor<8xf32>
  %ef = tensor.empty() : tensor<8xf32>
  %pf = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%pos : tensor<8xi32>) outs(%ef : tensor<8xf32>) {
  ^bb0(%in: i32, %out: f32):
    %f = arith.sitofp %in : i32 to f32
    linalg.yield %f : f32
  } -> tensor<8xf32>
  %e0 = tensor.empty() : tensor<8x8xf32>
  %pb = linalg.broadcast ins(%pf : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [1]
  %ib = linalg.broadcast ins(%inv : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [0]
  %freqs = linalg.mul ins(%pb, %ib : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e0 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %emb = tensor.concat dim(1) %freqs, %freqs : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x16xf32>
  %et = tensor.empty() : tensor<8x16xf32>
  %cos = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%emb : tensor<8x16xf32>) outs(%et : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %c = math.cos %in : f32
    linalg.yield %c : f32
  } -> tensor<8x16xf32>
  %sin = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%emb : tensor<8x16xf32>) outs(%et : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = math.sin %in : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %e1 = tensor.empty() : tensor<2x4x8x16xf32>
  %cb = linalg.broadcast ins(%cos : tensor<8x16xf32>) outs(%e1 : tensor<2x4x8x16xf32>) dimensions = [0, 1]
  %sb = linalg.broadcast ins(%sin : tensor<8x16xf32>) outs(%e1 : tensor<2x4x8x16xf32>) dimensions = [0, 1]
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 8] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
  %eh = tensor.empty() : tensor<2x4x8x8xf32>
  %n2 = linalg.negf ins(%x2 : tensor<2x4x8x8xf32>) outs(%eh : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %rh = tensor.concat dim(3) %n2, %x1 : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>
  %a = linalg.mul ins(%cb, %x : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) outs(%e1 : tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  %b = linalg.mul ins(%rh, %sb : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) outs(%e1 : tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  %r = linalg.add ins(%b, %a : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) outs(%e1 : tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %r : tensor<2x4x8x16xf32>
}

// -----

// After elementwise fusion: one generic computes x·cos + rot·sin from the
// tables [S, D] read through broadcasting maps, itself the root.
// CHECK-LABEL: func.func @fused_generic
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x4x8x16xf32>, %[[P:[^:]+]]: tensor<8xi64>)
// CHECK-NEXT: %[[R:.+]] = rope.rotate %[[X]], %[[P]] rotary(#rope.spec<>) : tensor<2x4x8x16xf32>, tensor<8xi64>
// CHECK-NEXT: return %[[R]]
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#table = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
func.func @fused_generic(%x: tensor<2x4x8x16xf32>, %pos: tensor<8xi64>) -> tensor<2x4x8x16xf32> {
  %inv = arith.constant dense<[1.000000000e+00, 3.162277639e-01, 1.000000015e-01, 3.162277862e-02, 9.999999776e-03, 3.162277862e-03, 1.000000047e-03, 3.162277862e-04]> : tensor<8xf32>
  %e0 = tensor.empty() : tensor<8x8xf32>
  // The outer product with the conversion fused in.
  %freqs = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%pos, %inv : tensor<8xi64>, tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) {
  ^bb0(%p: i64, %f: f32, %out: f32):
    %pf = arith.sitofp %p : i64 to f32
    %m = arith.mulf %f, %pf : f32
    linalg.yield %m : f32
  } -> tensor<8x8xf32>
  %emb = tensor.concat dim(1) %freqs, %freqs : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x16xf32>
  %et = tensor.empty() : tensor<8x16xf32>
  %cs:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%emb : tensor<8x16xf32>) outs(%et, %et : tensor<8x16xf32>, tensor<8x16xf32>) {
  ^bb0(%in: f32, %o1: f32, %o2: f32):
    %c = math.cos %in : f32
    %s = math.sin %in : f32
    linalg.yield %c, %s : f32, f32
  } -> (tensor<8x16xf32>, tensor<8x16xf32>)
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 8] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
  %eh = tensor.empty() : tensor<2x4x8x8xf32>
  %n2 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x2 : tensor<2x4x8x8xf32>) outs(%eh : tensor<2x4x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<2x4x8x8xf32>
  %rh = tensor.concat dim(3) %n2, %x1 : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>
  %e1 = tensor.empty() : tensor<2x4x8x16xf32>
  %r = linalg.generic {indexing_maps = [#id4, #table, #id4, #table, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %cs#0, %rh, %cs#1 : tensor<2x4x8x16xf32>, tensor<8x16xf32>, tensor<2x4x8x16xf32>, tensor<8x16xf32>) outs(%e1 : tensor<2x4x8x16xf32>) {
  ^bb0(%xv: f32, %c: f32, %rv: f32, %s: f32, %out: f32):
    %xc = arith.mulf %c, %xv : f32
    %rs = arith.mulf %rv, %s : f32
    %sum = arith.addf %rs, %xc : f32
    linalg.yield %sum : f32
  } -> tensor<2x4x8x16xf32>
  return %r : tensor<2x4x8x16xf32>
}

// -----

// inv_freq computed in the IR, `1 / 500000 ** (arange(0, 16, 2) / 16)`, as a
// generic over linalg.index; rotate_half negates by multiplying with −1.
// CHECK-LABEL: func.func @computed_inv_freq
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x2x8x16xf32>, %[[P:[^:]+]]: tensor<8xi64>)
// CHECK-NEXT: %[[R:.+]] = rope.rotate %[[X]], %[[P]] rotary(#rope.spec<base = 5.000000e+05>) : tensor<1x2x8x16xf32>, tensor<8xi64>
// CHECK-NEXT: return %[[R]]
func.func @computed_inv_freq(%x: tensor<1x2x8x16xf32>, %pos: tensor<8xi64>) -> tensor<1x2x8x16xf32> {
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %dim = arith.constant 16.0 : f32
  %base = arith.constant 500000.0 : f32
  %minus1 = arith.constant dense<-1.0> : tensor<1x2x8x8xf32>
  %ei = tensor.empty() : tensor<8xf32>
  %inv = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%ei : tensor<8xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %if = arith.sitofp %ii : i64 to f32
    %e = arith.mulf %if, %two : f32
    %ed = arith.divf %e, %dim : f32
    %p = math.powf %base, %ed : f32
    %r = arith.divf %one, %p : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %pf = arith.sitofp %pos : tensor<8xi64> to tensor<8xf32>
  %e0 = tensor.empty() : tensor<8x8xf32>
  %pb = linalg.broadcast ins(%pf : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [1]
  %ib = linalg.broadcast ins(%inv : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [0]
  %freqs = arith.mulf %pb, %ib : tensor<8x8xf32>
  %emb = tensor.concat dim(1) %freqs, %freqs : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x16xf32>
  %cos = math.cos %emb : tensor<8x16xf32>
  %sin = math.sin %emb : tensor<8x16xf32>
  %e1 = tensor.empty() : tensor<1x2x8x16xf32>
  %cb = linalg.broadcast ins(%cos : tensor<8x16xf32>) outs(%e1 : tensor<1x2x8x16xf32>) dimensions = [0, 1]
  %sb = linalg.broadcast ins(%sin : tensor<8x16xf32>) outs(%e1 : tensor<1x2x8x16xf32>) dimensions = [0, 1]
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [1, 2, 8, 8] [1, 1, 1, 1] : tensor<1x2x8x16xf32> to tensor<1x2x8x8xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 8] [1, 2, 8, 8] [1, 1, 1, 1] : tensor<1x2x8x16xf32> to tensor<1x2x8x8xf32>
  %n2 = arith.mulf %x2, %minus1 : tensor<1x2x8x8xf32>
  %rh = tensor.concat dim(3) %n2, %x1 : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x16xf32>
  %a = arith.mulf %x, %cb : tensor<1x2x8x16xf32>
  %b = arith.mulf %rh, %sb : tensor<1x2x8x16xf32>
  %r = arith.addf %a, %b : tensor<1x2x8x16xf32>
  return %r : tensor<1x2x8x16xf32>
}

// -----

// Decode, one token per sequence: position_ids [B, 1] stay per-sequence
// positions along the unit sequence dim. The tables are computed twice (no
// CSE; they are compared by content), the negation is a linalg.elementwise
// and the sum a linalg.map.
// CHECK-LABEL: func.func @decode_per_sequence_positions
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x4x1x16xf32>, %[[P:[^:]+]]: tensor<2x1xi64>)
// CHECK-NEXT: %[[R:.+]] = rope.rotate %[[X]], %[[P]] rotary(#rope.spec<>) : tensor<2x4x1x16xf32>, tensor<2x1xi64>
// CHECK-NEXT: return %[[R]]
func.func @decode_per_sequence_positions(%x: tensor<2x4x1x16xf32>, %pos: tensor<2x1xi64>) -> tensor<2x4x1x16xf32> {
  %inv = arith.constant dense<[1.000000000e+00, 3.162277639e-01, 1.000000015e-01, 3.162277862e-02, 9.999999776e-03, 3.162277862e-03, 1.000000047e-03, 3.162277862e-04]> : tensor<8xf32>
  %inv2 = arith.constant dense<[1.000000000e+00, 3.162277639e-01, 1.000000015e-01, 3.162277862e-02, 9.999999776e-03, 3.162277862e-03, 1.000000047e-03, 3.162277862e-04]> : tensor<8xf32>
  %pf = arith.sitofp %pos : tensor<2x1xi64> to tensor<2x1xf32>
  %pf2 = arith.sitofp %pos : tensor<2x1xi64> to tensor<2x1xf32>
  %e0 = tensor.empty() : tensor<2x1x8xf32>
  %pb = linalg.broadcast ins(%pf : tensor<2x1xf32>) outs(%e0 : tensor<2x1x8xf32>) dimensions = [2]
  %ib = linalg.broadcast ins(%inv : tensor<8xf32>) outs(%e0 : tensor<2x1x8xf32>) dimensions = [0, 1]
  %pb2 = linalg.broadcast ins(%pf2 : tensor<2x1xf32>) outs(%e0 : tensor<2x1x8xf32>) dimensions = [2]
  %ib2 = linalg.broadcast ins(%inv2 : tensor<8xf32>) outs(%e0 : tensor<2x1x8xf32>) dimensions = [0, 1]
  %freqs = arith.mulf %pb, %ib : tensor<2x1x8xf32>
  %freqs2 = arith.mulf %pb2, %ib2 : tensor<2x1x8xf32>
  %emb = tensor.concat dim(2) %freqs, %freqs : (tensor<2x1x8xf32>, tensor<2x1x8xf32>) -> tensor<2x1x16xf32>
  %emb2 = tensor.concat dim(2) %freqs2, %freqs2 : (tensor<2x1x8xf32>, tensor<2x1x8xf32>) -> tensor<2x1x16xf32>
  %cos = math.cos %emb : tensor<2x1x16xf32>
  %sin = math.sin %emb2 : tensor<2x1x16xf32>
  %e1 = tensor.empty() : tensor<2x4x1x16xf32>
  %cb = linalg.broadcast ins(%cos : tensor<2x1x16xf32>) outs(%e1 : tensor<2x4x1x16xf32>) dimensions = [1]
  %sb = linalg.broadcast ins(%sin : tensor<2x1x16xf32>) outs(%e1 : tensor<2x4x1x16xf32>) dimensions = [1]
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [2, 4, 1, 8] [1, 1, 1, 1] : tensor<2x4x1x16xf32> to tensor<2x4x1x8xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 8] [2, 4, 1, 8] [1, 1, 1, 1] : tensor<2x4x1x16xf32> to tensor<2x4x1x8xf32>
  %eh = tensor.empty() : tensor<2x4x1x8xf32>
  %n2 = linalg.elementwise kind=#linalg.elementwise_kind<negf> ins(%x2 : tensor<2x4x1x8xf32>) outs(%eh : tensor<2x4x1x8xf32>) -> tensor<2x4x1x8xf32>
  %rh = tensor.concat dim(3) %n2, %x1 : (tensor<2x4x1x8xf32>, tensor<2x4x1x8xf32>) -> tensor<2x4x1x16xf32>
  %a = arith.mulf %x, %cb : tensor<2x4x1x16xf32>
  %b = arith.mulf %rh, %sb : tensor<2x4x1x16xf32>
  %r = linalg.map { arith.addf } ins(%a, %b : tensor<2x4x1x16xf32>, tensor<2x4x1x16xf32>) outs(%e1 : tensor<2x4x1x16xf32>)
  return %r : tensor<2x4x1x16xf32>
}
