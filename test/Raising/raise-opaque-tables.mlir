// RUN: rope-opt %s --rope-raise -split-input-file | FileCheck %s
// RUN: rope-opt %s --convert-elementwise-to-linalg --linalg-fuse-elementwise-ops --rope-raise -split-input-file | FileCheck %s

// x·cos + rot(x)·sin whose tables say no spec (function arguments, a
// model's caches sliced and gathered by position ids, float positions,
// tables that are no rotation at all) becomes rope.rotate_with_tables: the
// op applies x·cos + rot(x)·sin element for element, so any tables read
// element for element along the head are its operands, reshaped to the
// rank of x with unit dims where they broadcast. The second RUN line: the
// same after elementwise fusion.


// x·cos + rotate_half(x)·cos is no rotation of any spec, but it is
// rope.rotate_with_tables with cos as both tables.
// CHECK-LABEL: func.func @cos_in_both_products
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x4x8x16xf32>
// CHECK-NOT: rope.rotate %
// CHECK: %[[R:.+]] = rope.rotate_with_tables %[[X]], %{{.+}}, %{{.+}} : tensor<2x4x8x16xf32>, tensor<1x1x8x16xf32>
// CHECK-NEXT: return %[[R]]
func.func @cos_in_both_products(%x: tensor<2x4x8x16xf32>, %pos: tensor<8xi64>) -> tensor<2x4x8x16xf32> {
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
  %b = arith.mulf %rh, %cb : tensor<2x4x8x16xf32>
  %r = arith.addf %a, %b : tensor<2x4x8x16xf32>
  return %r : tensor<2x4x8x16xf32>
}

// -----

// cos at one set of positions, sin at another: no spec, the tables as they
// are.
// CHECK-LABEL: func.func @tables_from_different_positions
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x4x8x16xf32>
// CHECK-NOT: rope.rotate %
// CHECK: %[[R:.+]] = rope.rotate_with_tables %[[X]], %{{.+}}, %{{.+}} : tensor<2x4x8x16xf32>, tensor<1x1x8x16xf32>
// CHECK-NEXT: return %[[R]]
func.func @tables_from_different_positions(%x: tensor<2x4x8x16xf32>, %pos: tensor<8xi64>, %pos2: tensor<8xi64>) -> tensor<2x4x8x16xf32> {
  %inv = arith.constant dense<[1.000000000e+00, 3.162277639e-01, 1.000000015e-01, 3.162277862e-02, 9.999999776e-03, 3.162277862e-03, 1.000000047e-03, 3.162277862e-04]> : tensor<8xf32>
  %pf = arith.sitofp %pos : tensor<8xi64> to tensor<8xf32>
  %pf2 = arith.sitofp %pos2 : tensor<8xi64> to tensor<8xf32>
  %e0 = tensor.empty() : tensor<8x8xf32>
  %pb = linalg.broadcast ins(%pf : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [1]
  %pb2 = linalg.broadcast ins(%pf2 : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [1]
  %ib = linalg.broadcast ins(%inv : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [0]
  %freqs = arith.mulf %pb, %ib : tensor<8x8xf32>
  %freqs2 = arith.mulf %pb2, %ib : tensor<8x8xf32>
  %emb = tensor.concat dim(1) %freqs, %freqs : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x16xf32>
  %emb2 = tensor.concat dim(1) %freqs2, %freqs2 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x16xf32>
  %cos = math.cos %emb : tensor<8x16xf32>
  %sin = math.sin %emb2 : tensor<8x16xf32>
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

// cat(f, g) with g from another inv_freq: the two members of a pair turn by
// different angles, which no spec says but the tables do.
// CHECK-LABEL: func.func @frequency_halves_differ
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x4x8x16xf32>
// CHECK-NOT: rope.rotate %
// CHECK: %[[R:.+]] = rope.rotate_with_tables %[[X]], %{{.+}}, %{{.+}} : tensor<2x4x8x16xf32>, tensor<1x1x8x16xf32>
// CHECK-NEXT: return %[[R]]
func.func @frequency_halves_differ(%x: tensor<2x4x8x16xf32>, %pos: tensor<8xi64>) -> tensor<2x4x8x16xf32> {
  %inv = arith.constant dense<[1.000000000e+00, 3.162277639e-01, 1.000000015e-01, 3.162277862e-02, 9.999999776e-03, 3.162277862e-03, 1.000000047e-03, 3.162277862e-04]> : tensor<8xf32>
  %inv2 = arith.constant dense<[1.000000000e+00, 1.939227581e-01, 3.760603070e-02, 7.292665076e-03, 1.414213446e-03, 2.742481884e-04, 5.318296462e-05, 1.031338525e-05]> : tensor<8xf32>
  %pf = arith.sitofp %pos : tensor<8xi64> to tensor<8xf32>
  %e0 = tensor.empty() : tensor<8x8xf32>
  %pb = linalg.broadcast ins(%pf : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [1]
  %ib = linalg.broadcast ins(%inv : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [0]
  %ib2 = linalg.broadcast ins(%inv2 : tensor<8xf32>) outs(%e0 : tensor<8x8xf32>) dimensions = [0]
  %freqs = arith.mulf %pb, %ib : tensor<8x8xf32>
  %freqs2 = arith.mulf %pb, %ib2 : tensor<8x8xf32>
  %emb = tensor.concat dim(1) %freqs, %freqs2 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x16xf32>
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

// Tables passed in (precomputed by the caller, a model's caches) say nothing
// about the spec: they become the operands.
// CHECK-LABEL: func.func @tables_are_arguments
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x4x8x16xf32>
// CHECK-NOT: rope.rotate %
// CHECK: %[[R:.+]] = rope.rotate_with_tables %[[X]], %{{.+}}, %{{.+}} : tensor<2x4x8x16xf32>, tensor<1x1x8x16xf32>
// CHECK-NEXT: return %[[R]]
func.func @tables_are_arguments(%x: tensor<2x4x8x16xf32>, %cos: tensor<8x16xf32>, %sin: tensor<8x16xf32>) -> tensor<2x4x8x16xf32> {
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

// Float positions: rope.rotate takes integer ones, so no spec; the computed
// tables are used as they are.
// CHECK-LABEL: func.func @float_positions
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x4x8x16xf32>
// CHECK-NOT: rope.rotate %
// CHECK: %[[R:.+]] = rope.rotate_with_tables %[[X]], %{{.+}}, %{{.+}} : tensor<2x4x8x16xf32>, tensor<1x1x8x16xf32>
// CHECK-NEXT: return %[[R]]
func.func @float_positions(%x: tensor<2x4x8x16xf32>, %pf: tensor<8xf32>) -> tensor<2x4x8x16xf32> {
  %inv = arith.constant dense<[1.000000000e+00, 3.162277639e-01, 1.000000015e-01, 3.162277862e-02, 9.999999776e-03, 3.162277862e-03, 1.000000047e-03, 3.162277862e-04]> : tensor<8xf32>
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

// A model's caches [L, D] (its buffers, passed in), sliced to the sequence
// and gathered by position ids ([B, S], HF's cos[position_ids]) inside a
// generic, then unsqueezed over the heads.
// CHECK-LABEL: func.func @gathered_cache_arguments
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x4x8x16xf32>, %[[CC:[^:]+]]: tensor<64x16xf32>, %[[SC:[^:]+]]: tensor<64x16xf32>, %[[P:[^:]+]]: tensor<2x8xi64>)
// CHECK-DAG: %[[C:.+]] = tensor.expand_shape %[[COS:[^ ]+]] {{\[\[0\], \[1, 2\], \[3\]\]}} output_shape [2, 1, 8, 16] : tensor<2x8x16xf32> into tensor<2x1x8x16xf32>
// CHECK-DAG: %[[S:.+]] = tensor.expand_shape %[[SIN:[^ ]+]] {{\[\[0\], \[1, 2\], \[3\]\]}} output_shape [2, 1, 8, 16] : tensor<2x8x16xf32> into tensor<2x1x8x16xf32>
// CHECK: %[[R:.+]] = rope.rotate_with_tables %[[X]], %[[C]], %[[S]] : tensor<2x4x8x16xf32>, tensor<2x1x8x16xf32>
// CHECK-NEXT: return %[[R]]
func.func @gathered_cache_arguments(%x: tensor<2x4x8x16xf32>, %cos_cached: tensor<64x16xf32>, %sin_cached: tensor<64x16xf32>, %ids: tensor<2x8xi64>) -> tensor<2x4x8x16xf32> {
  %e0 = tensor.empty() : tensor<2x8x16xf32>
  %cs, %ss = linalg.generic {indexing_maps = [affine_map<(b, s, d) -> (b, s)>, affine_map<(b, s, d) -> (b, s, d)>, affine_map<(b, s, d) -> (b, s, d)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ids : tensor<2x8xi64>) outs(%e0, %e0 : tensor<2x8x16xf32>, tensor<2x8x16xf32>) {
  ^bb0(%id: i64, %o0: f32, %o1: f32):
    %row = arith.index_cast %id : i64 to index
    %col = linalg.index 2 : index
    %c = tensor.extract %cos_cached[%row, %col] : tensor<64x16xf32>
    %s = tensor.extract %sin_cached[%row, %col] : tensor<64x16xf32>
    linalg.yield %c, %s : f32, f32
  } -> (tensor<2x8x16xf32>, tensor<2x8x16xf32>)
  %cu = tensor.expand_shape %cs [[0, 1], [2], [3]] output_shape [2, 1, 8, 16] : tensor<2x8x16xf32> into tensor<2x1x8x16xf32>
  %su = tensor.expand_shape %ss [[0, 1], [2], [3]] output_shape [2, 1, 8, 16] : tensor<2x8x16xf32> into tensor<2x1x8x16xf32>
  %e1 = tensor.empty() : tensor<2x4x8x16xf32>
  %cb = linalg.generic {indexing_maps = [affine_map<(b, h, s, d) -> (b, 0, s, d)>, affine_map<(b, h, s, d) -> (b, h, s, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%cu : tensor<2x1x8x16xf32>) outs(%e1 : tensor<2x4x8x16xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<2x4x8x16xf32>
  %sb = linalg.generic {indexing_maps = [affine_map<(b, h, s, d) -> (b, 0, s, d)>, affine_map<(b, h, s, d) -> (b, h, s, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%su : tensor<2x1x8x16xf32>) outs(%e1 : tensor<2x4x8x16xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<2x4x8x16xf32>
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

// GPT-NeoX partial rotary (rotary_pct): the first 8 of 16 dims rotated with
// [S, 8] tables sliced from caches passed in; the others passed through.
// CHECK-LABEL: func.func @partial_sliced_caches
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x4x8x16xf32>, %[[CC:[^:]+]]: tensor<32x8xf32>, %[[SC:[^:]+]]: tensor<32x8xf32>)
// CHECK: %[[R:.+]] = rope.rotate_with_tables %[[X]], %{{.+}}, %{{.+}} dims = 8 : tensor<1x4x8x16xf32>, tensor<1x1x8x8xf32>
// CHECK-NEXT: return %[[R]]
func.func @partial_sliced_caches(%x: tensor<1x4x8x16xf32>, %cos_cached: tensor<32x8xf32>, %sin_cached: tensor<32x8xf32>) -> tensor<1x4x8x16xf32> {
  %c = tensor.extract_slice %cos_cached[0, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %s = tensor.extract_slice %sin_cached[0, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %e1 = tensor.empty() : tensor<1x4x8x8xf32>
  %cb = linalg.broadcast ins(%c : tensor<8x8xf32>) outs(%e1 : tensor<1x4x8x8xf32>) dimensions = [0, 1]
  %sb = linalg.broadcast ins(%s : tensor<8x8xf32>) outs(%e1 : tensor<1x4x8x8xf32>) dimensions = [0, 1]
  %xr = tensor.extract_slice %x[0, 0, 0, 0] [1, 4, 8, 8] [1, 1, 1, 1] : tensor<1x4x8x16xf32> to tensor<1x4x8x8xf32>
  %xp = tensor.extract_slice %x[0, 0, 0, 8] [1, 4, 8, 8] [1, 1, 1, 1] : tensor<1x4x8x16xf32> to tensor<1x4x8x8xf32>
  %x1 = tensor.extract_slice %xr[0, 0, 0, 0] [1, 4, 8, 4] [1, 1, 1, 1] : tensor<1x4x8x8xf32> to tensor<1x4x8x4xf32>
  %x2 = tensor.extract_slice %xr[0, 0, 0, 4] [1, 4, 8, 4] [1, 1, 1, 1] : tensor<1x4x8x8xf32> to tensor<1x4x8x4xf32>
  %n2 = arith.negf %x2 : tensor<1x4x8x4xf32>
  %rh = tensor.concat dim(3) %n2, %x1 : (tensor<1x4x8x4xf32>, tensor<1x4x8x4xf32>) -> tensor<1x4x8x8xf32>
  %a = arith.mulf %xr, %cb : tensor<1x4x8x8xf32>
  %b = arith.mulf %rh, %sb : tensor<1x4x8x8xf32>
  %rot = arith.addf %a, %b : tensor<1x4x8x8xf32>
  %r = tensor.concat dim(3) %rot, %xp : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x16xf32>
  return %r : tensor<1x4x8x16xf32>
}

// -----

// GPT-J rotate_every_two with tables passed in as [S, D] (already
// repeat-interleaved): interleaved pairs.
// CHECK-LABEL: func.func @interleaved_table_arguments
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x4x8x16xf32>
// CHECK: %[[R:.+]] = rope.rotate_with_tables %[[X]], %{{.+}}, %{{.+}} layout<interleaved> : tensor<1x4x8x16xf32>, tensor<1x1x8x16xf32>
// CHECK-NEXT: return %[[R]]
func.func @interleaved_table_arguments(%x: tensor<1x4x8x16xf32>, %cos: tensor<8x16xf32>, %sin: tensor<8x16xf32>) -> tensor<1x4x8x16xf32> {
  %e1 = tensor.empty() : tensor<1x4x8x16xf32>
  %cb = linalg.broadcast ins(%cos : tensor<8x16xf32>) outs(%e1 : tensor<1x4x8x16xf32>) dimensions = [0, 1]
  %sb = linalg.broadcast ins(%sin : tensor<8x16xf32>) outs(%e1 : tensor<1x4x8x16xf32>) dimensions = [0, 1]
  %x5 = tensor.expand_shape %x [[0], [1], [2], [3, 4]] output_shape [1, 4, 8, 8, 2] : tensor<1x4x8x16xf32> into tensor<1x4x8x8x2xf32>
  %xe = tensor.extract_slice %x5[0, 0, 0, 0, 0] [1, 4, 8, 8, 1] [1, 1, 1, 1, 1] : tensor<1x4x8x8x2xf32> to tensor<1x4x8x8x1xf32>
  %xo = tensor.extract_slice %x5[0, 0, 0, 0, 1] [1, 4, 8, 8, 1] [1, 1, 1, 1, 1] : tensor<1x4x8x8x2xf32> to tensor<1x4x8x8x1xf32>
  %no = arith.negf %xo : tensor<1x4x8x8x1xf32>
  %st = tensor.concat dim(4) %no, %xe : (tensor<1x4x8x8x1xf32>, tensor<1x4x8x8x1xf32>) -> tensor<1x4x8x8x2xf32>
  %rot = tensor.collapse_shape %st [[0], [1], [2], [3, 4]] : tensor<1x4x8x8x2xf32> into tensor<1x4x8x16xf32>
  %a = arith.mulf %x, %cb : tensor<1x4x8x16xf32>
  %b = arith.mulf %rot, %sb : tensor<1x4x8x16xf32>
  %r = arith.addf %a, %b : tensor<1x4x8x16xf32>
  return %r : tensor<1x4x8x16xf32>
}

// -----

// Not raised: the inverse direction (x·cos − rotate_half(x)·sin) with
// opaque tables (rope.rotate_with_tables would need −sin); tables that
// vary along the head of another dim (a transposed read).
// CHECK-LABEL: func.func @opaque_near_misses
// CHECK-NOT: rope.rotate
// CHECK: return
func.func @opaque_near_misses(%x: tensor<1x4x8x16xf32>, %cos: tensor<8x16xf32>, %sin: tensor<8x16xf32>, %cos_t: tensor<16x8xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) {
  %e1 = tensor.empty() : tensor<1x4x8x16xf32>
  %cb = linalg.broadcast ins(%cos : tensor<8x16xf32>) outs(%e1 : tensor<1x4x8x16xf32>) dimensions = [0, 1]
  %sb = linalg.broadcast ins(%sin : tensor<8x16xf32>) outs(%e1 : tensor<1x4x8x16xf32>) dimensions = [0, 1]
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [1, 4, 8, 8] [1, 1, 1, 1] : tensor<1x4x8x16xf32> to tensor<1x4x8x8xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 8] [1, 4, 8, 8] [1, 1, 1, 1] : tensor<1x4x8x16xf32> to tensor<1x4x8x8xf32>
  %n2 = arith.negf %x2 : tensor<1x4x8x8xf32>
  %rh = tensor.concat dim(3) %n2, %x1 : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x16xf32>
  %a = arith.mulf %x, %cb : tensor<1x4x8x16xf32>
  %b = arith.mulf %rh, %sb : tensor<1x4x8x16xf32>
  %inverse = arith.subf %a, %b : tensor<1x4x8x16xf32>
  %ct = linalg.generic {indexing_maps = [affine_map<(b, h, s, d) -> (d, s)>, affine_map<(b, h, s, d) -> (b, h, s, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%cos_t : tensor<16x8xf32>) outs(%e1 : tensor<1x4x8x16xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<1x4x8x16xf32>
  %a2 = arith.mulf %x, %ct : tensor<1x4x8x16xf32>
  %transposed = arith.addf %a2, %b : tensor<1x4x8x16xf32>
  return %inverse, %transposed : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>
}
