// RUN: rope-opt %s --rope-tile-attention="query-tile=16 key-tile=32 split-keys=0" --canonicalize -split-input-file | FileCheck %s
// RUN: rope-opt %s --rope-tile-attention="key-tile=16 split-keys=4" --canonicalize -split-input-file | FileCheck %s --check-prefix=SPLIT
// RUN: rope-opt %s --rope-tile-attention="rows key-tile=32" --canonicalize -split-input-file | FileCheck %s --check-prefix=ROWS
// RUN: rope-opt %s --rope-tile-attention="query-tile=16 key-tile=32 split-keys=0" -split-input-file | FileCheck %s --check-prefix=STATIC
// RUN: rope-opt %s --rope-tile-attention="query-tile=64 key-tile=32 split-keys=0" --canonicalize -split-input-file | FileCheck %s --check-prefix=ONE
// RUN: not rope-opt %s --rope-tile-attention=key-tile=0 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: rope-opt %s --rope-tile-attention="split-keys=4" --canonicalize -split-input-file | FileCheck %s --check-prefix=HEADS
// BAD: query-tile and key-tile must be positive and split-keys -1 (automatic) or more, got 64, 0 and -1

// Parallel query tiles: an scf.forall over (kv head, 16 query rows), each
// tile slicing every operand along its own dims (Q rows, query positions;
// K, V and key positions whole); then an scf.for over 32-key tiles carrying
// the (acc, max, sum) state into a rope.online_attention on the key slices.
// The 4 query tiles each sweep every key, so K and Q are rotated once, whole
// and in f32, before the tiling (in the tiles each key would be rotated once
// per query tile), and the tiles have no rotation left.
// One query tile (query-tile=64, ONE): the query tile is rotated once, before
// its key loop, and each key tile rotates its keys with its slice of the key
// tables as it loads them.
// GPU rows (`rows`): one parallel tile per (kv head, group head, query row)
// (the batch of 1 folds away), the row rotated once, its keys in a loop.
// ROWS-LABEL: func.func @query_tiles
// ROWS: scf.forall (%{{.+}}, %{{.+}}, %[[RI:.+]]) in (2, 2, 64) shared_outs(
// ROWS: tensor.extract_slice %{{.+}}[%[[RI]]] [1] [1] : tensor<64xi64> to tensor<1xi64>
// ROWS: scf.for {{.+}} -> (tensor<1x1x1x1x16xf32>, tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32>)
// ROWS: rope.online_attention {{.+}} positions(%{{.+}}, %{{.+}} : tensor<1xi64>, tensor<32xi64>) rotary(#rope.pairs<>) key_tables(
// Rows ignore split-keys: one tile per group head, each over all 100 keys.
// ROWS-LABEL: func.func @split_keys
// ROWS: scf.forall (%[[GH:.+]]) in (4) shared_outs(
// ROWS: tensor.extract_slice %{{.+}}[0, 0, %[[GH]], 0, 0] [1, 1, 1, 1, 16]
// ROWS: scf.for %{{.+}} = %{{.+}} to %c100 step %c32
// CHECK-LABEL: func.func @query_tiles
// CHECK: linalg.generic {{.+}} outs(%{{.+}} : tensor<1x2x128x2x8xf32>)
// CHECK: tensor.collapse_shape {{.+}} into tensor<1x2x128x16xf32>
// CHECK: linalg.generic {{.+}} outs(%{{.+}} : tensor<1x2x2x64x2x8xf32>)
// CHECK: %[[QROT:.+]] = tensor.collapse_shape {{.+}} into tensor<1x2x2x64x16xf32>
// CHECK: scf.forall (%[[KH:.+]], %[[QI:.+]]) = (0, 0) to (2, 64) step (1, 16) shared_outs(%[[ACC:.+]] = %{{.+}}, %[[M:.+]] = %{{.+}}, %[[L:.+]] = %{{.+}})
// CHECK-DAG: %[[QS:.+]] = tensor.extract_slice %[[QROT]][0, %[[KH]], 0, %[[QI]], 0] [1, 1, 2, 16, 16] {{.+}} to tensor<1x1x2x16x16xf32>
// CHECK-DAG: %[[QPS:.+]] = tensor.extract_slice %{{.+}}[%[[QI]]] [16] [1] : tensor<64xi64> to tensor<16xi64>
// CHECK-NOT: tensor.insert_slice
// CHECK: scf.for %[[KJ:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(
// CHECK-DAG: tensor.extract_slice %{{.+}}[0, 0, %[[KJ]], 0] [1, 1, 32, 16]
// CHECK-DAG: %[[KPS:.+]] = tensor.extract_slice %{{.+}}[%[[KJ]]] [32] [1] : tensor<128xi64> to tensor<32xi64>
// CHECK: rope.online_attention %[[QS]], {{.+}} positions(%[[QPS]], %[[KPS]] : tensor<16xi64>, tensor<32xi64>) causal scale = 2.500000e-01
// CHECK-NOT: rotary
// CHECK: scf.yield
// CHECK: scf.forall.in_parallel
// CHECK-COUNT-3: tensor.parallel_insert_slice
// ONE-LABEL: func.func @query_tiles
// ONE: scf.forall (%{{.+}}) in (2) shared_outs(
// ONE: tensor.insert_slice {{.+}} : tensor<1x1x2x64x8xf32> into tensor<1x1x2x64x16xf32>
// ONE: %[[QROT:.+]] = tensor.insert_slice {{.+}} : tensor<1x1x2x64x8xf32> into tensor<1x1x2x64x16xf32>
// ONE: scf.for
// ONE: rope.online_attention %[[QROT]], {{.+}} rotary(#rope.pairs<>) key_tables(%{{.+}}, %{{.+}} : tensor<32x8xf32>, tensor<32x8xf32>) causal
func.func @query_tiles(%q: tensor<1x2x2x64x16xf32>, %k: tensor<1x2x128x16xf32>, %v: tensor<1x2x128x16xf32>,
                       %qp: tensor<64xi64>, %kp: tensor<128xi64>,
                       %qc: tensor<64x8xf32>, %qs: tensor<64x8xf32>, %kc: tensor<128x8xf32>, %ks: tensor<128x8xf32>,
                       %acc: tensor<1x2x2x64x16xf32>, %m: tensor<1x2x2x64xf32>, %l: tensor<1x2x2x64xf32>)
    -> (tensor<1x2x2x64x16xf32>, tensor<1x2x2x64xf32>, tensor<1x2x2x64xf32>) {
  %r:3 = rope.online_attention %q, %k, %v positions(%qp, %kp : tensor<64xi64>, tensor<128xi64>) rotary(#rope.pairs<>)
      query_tables(%qc, %qs : tensor<64x8xf32>, tensor<64x8xf32>) key_tables(%kc, %ks : tensor<128x8xf32>, tensor<128x8xf32>)
      causal scale = 0.25
      outs(%acc, %m, %l : tensor<1x2x2x64x16xf32>, tensor<1x2x2x64xf32>, tensor<1x2x2x64xf32>)
      : tensor<1x2x2x64x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>
      -> tensor<1x2x2x64x16xf32>, tensor<1x2x2x64xf32>, tensor<1x2x2x64xf32>
  return %r#0, %r#1, %r#2 : tensor<1x2x2x64x16xf32>, tensor<1x2x2x64xf32>, tensor<1x2x2x64xf32>
}

// -----

// Split-K: the keys in 4 ranges of 25 (an scf.forall), each folding its keys
// into a fresh partial state (acc 0, max −inf, sum 0) at its own index of the
// leading split dim; then the exact merge with the op's own state: the max of
// all maxima, and sums and accumulators each rescaled by exp(m_s − m).
// Without split-K: one query row (decode) is shorter than the 16-row query
// tile, so it is one whole tile of static shape (the micro-kernels need
// one) even before any canonicalization, not a tile of min(16, 1 - i) rows.
// STATIC-LABEL: func.func @split_keys
// STATIC-NOT: x4x?x
// STATIC: rope.online_attention {{.+}} outs(%{{.+}} : tensor<1x1x4x1x16xf32>, tensor<1x1x4x1xf32>, tensor<1x1x4x1xf32>)
// SPLIT-LABEL: func.func @split_keys
// SPLIT-DAG: %[[NEG_INF:.+]] = arith.constant 0xFF800000 : f32
// SPLIT-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// SPLIT: %[[PACC:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.+}} : tensor<4x1x1x4x1x16xf32>)
// SPLIT: %[[PMAX:.+]] = linalg.fill ins(%[[NEG_INF]] : f32) outs(%{{.+}} : tensor<4x1x1x4x1xf32>)
// SPLIT: %[[PSUM:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.+}} : tensor<4x1x1x4x1xf32>)
// SPLIT: %[[PARTS:.+]]:3 = scf.forall (%[[KS:.+]]) = (0) to (100) step (25) shared_outs(%{{.+}} = %[[PACC]], %{{.+}} = %[[PMAX]], %{{.+}} = %[[PSUM]])
// SPLIT: scf.for
// SPLIT: rope.online_attention
// SPLIT: scf.forall.in_parallel
// SPLIT: tensor.parallel_insert_slice %{{.+}} into %{{.+}}[%{{.+}}, 0, 0, 0, 0, 0] [1, 1, 1, 4, 1, 16]
// SPLIT: %[[MAX:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[PARTS]]#1 : tensor<4x1x1x4x1xf32>) outs(%[[M0:.+]] : tensor<1x1x4x1xf32>)
// SPLIT: arith.maximumf
// SPLIT: %[[SUM0:.+]] = linalg.generic {{.+}} ins(%[[L0:.+]], %[[M0]], %[[MAX]] :
// SPLIT: math.exp
// SPLIT: %[[SUM:.+]] = linalg.generic {{.+}} ins(%[[PARTS]]#2, %[[PARTS]]#1, %[[MAX]] : {{.+}}) outs(%[[SUM0]] :
// SPLIT: %[[ACC0:.+]] = linalg.generic {{.+}} ins(%{{.+}}, %[[M0]], %[[MAX]] :
// SPLIT: %[[ACC:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[PARTS]]#0, %[[PARTS]]#1, %[[MAX]] : {{.+}}) outs(%[[ACC0]] :
// SPLIT: return %[[ACC]], %[[MAX]], %[[SUM]]
func.func @split_keys(%q: tensor<1x1x4x1x16xf32>, %k: tensor<1x1x100x16xf32>, %v: tensor<1x1x100x16xf32>,
                      %acc: tensor<1x1x4x1x16xf32>, %m: tensor<1x1x4x1xf32>, %l: tensor<1x1x4x1xf32>)
    -> (tensor<1x1x4x1x16xf32>, tensor<1x1x4x1xf32>, tensor<1x1x4x1xf32>) {
  %r:3 = rope.online_attention %q, %k, %v scale = 0.25
      outs(%acc, %m, %l : tensor<1x1x4x1x16xf32>, tensor<1x1x4x1xf32>, tensor<1x1x4x1xf32>)
      : tensor<1x1x4x1x16xf32>, tensor<1x1x100x16xf32>, tensor<1x1x100x16xf32>
      -> tensor<1x1x4x1x16xf32>, tensor<1x1x4x1xf32>, tensor<1x1x4x1xf32>
  return %r#0, %r#1, %r#2 : tensor<1x1x4x1x16xf32>, tensor<1x1x4x1xf32>, tensor<1x1x4x1xf32>
}

// -----

// Queries of dynamic length (a prompt): each parallel tile checks whether it
// holds a whole query tile. A full one runs a copy of the tile on operands
// cast to 16 rows (the static shapes the CPU micro-kernels take), the last,
// partial tile of each head the op as tiled. GPU rows have no query tiles.
// CHECK-LABEL: func.func @dynamic_queries
// CHECK:         scf.forall (%{{.+}}, %{{.+}}) = (0, 0) to (2, %{{.+}}) step (1, 16)
// CHECK:           %[[FULL:.+]] = arith.cmpi eq, %{{.+}}, %c16 : index
// CHECK:           scf.if %[[FULL]]
// CHECK:             scf.for
// CHECK:               rope.online_attention {{.+}} : tensor<1x1x2x16x16xf32>, tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32>
// CHECK:             tensor.cast %{{.+}} : tensor<1x1x2x16x16xf32> to tensor<1x1x2x?x16xf32>
// CHECK:           } else {
// CHECK:             scf.for
// CHECK:               rope.online_attention {{.+}} : tensor<1x1x2x?x16xf32>, tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32>
// ROWS-LABEL: func.func @dynamic_queries
// ROWS-NOT:     scf.if
// ROWS:         scf.forall.in_parallel
func.func @dynamic_queries(%q: tensor<1x2x2x?x16xf32>, %k: tensor<1x2x128x16xf32>, %v: tensor<1x2x128x16xf32>,
                           %acc: tensor<1x2x2x?x16xf32>, %m: tensor<1x2x2x?xf32>, %l: tensor<1x2x2x?xf32>)
    -> (tensor<1x2x2x?x16xf32>, tensor<1x2x2x?xf32>, tensor<1x2x2x?xf32>) {
  %r:3 = rope.online_attention %q, %k, %v scale = 0.25
      outs(%acc, %m, %l : tensor<1x2x2x?x16xf32>, tensor<1x2x2x?xf32>, tensor<1x2x2x?xf32>)
      : tensor<1x2x2x?x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>
      -> tensor<1x2x2x?x16xf32>, tensor<1x2x2x?xf32>, tensor<1x2x2x?xf32>
  return %r#0, %r#1, %r#2 : tensor<1x2x2x?x16xf32>, tensor<1x2x2x?xf32>, tensor<1x2x2x?xf32>
}

// -----

// Keys of dynamic length: the key loop stops at the last whole tile, whose
// slices fold to static 32-key shapes, and the partial tile left runs in a
// loop of its own from there (at most one step) on the state the first
// leaves. GPU rows keep one loop (no contraction to hand static tiles to).
// CHECK-LABEL: func.func @dynamic_keys
// CHECK: scf.forall
// CHECK: %[[FULL:.+]] = affine.apply
// CHECK: %[[STATE:.+]]:3 = scf.for %{{.+}} = %c0 to %[[FULL]] step %c32
// CHECK: rope.online_attention {{.+}} : tensor<1x1x2x?x16xf32>, tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32>
// CHECK: scf.for %{{.+}} = %[[FULL]] to %{{.+}} step %c32 iter_args(%{{.+}} = %[[STATE]]#0, %{{.+}} = %[[STATE]]#1, %{{.+}} = %[[STATE]]#2)
// CHECK: rope.online_attention {{.+}} : tensor<1x1x2x?x16xf32>, tensor<1x1x?x16xf32>, tensor<1x1x?x16xf32>
// ROWS-LABEL: func.func @dynamic_keys
// ROWS: scf.for %
// ROWS-NOT: scf.for %
// ROWS: scf.forall.in_parallel
func.func @dynamic_keys(%q: tensor<1x2x2x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>,
                        %acc: tensor<1x2x2x?x16xf32>, %m: tensor<1x2x2x?xf32>, %l: tensor<1x2x2x?xf32>)
    -> (tensor<1x2x2x?x16xf32>, tensor<1x2x2x?xf32>, tensor<1x2x2x?xf32>) {
  %r:3 = rope.online_attention %q, %k, %v scale = 0.25
      outs(%acc, %m, %l : tensor<1x2x2x?x16xf32>, tensor<1x2x2x?xf32>, tensor<1x2x2x?xf32>)
      : tensor<1x2x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>
      -> tensor<1x2x2x?x16xf32>, tensor<1x2x2x?xf32>, tensor<1x2x2x?xf32>
  return %r#0, %r#1, %r#2 : tensor<1x2x2x?x16xf32>, tensor<1x2x2x?xf32>, tensor<1x2x2x?xf32>
}

// -----

// A decode step's split tiles hold every kv head and take at most 64 KiB
// of key rows (what the CPU pipeline prefetches a tile ahead): 16 keys of
// 8 f32 kv heads of 128.
// HEADS-LABEL: func.func @split_tiles_f32_heads
// HEADS: scf.forall
// HEADS: scf.for %{{.+}} = %c0 to %{{.+}} step %c16
// HEADS: rope.online_attention {{.+}} : tensor<1x8x4x1x128xf32>, tensor<1x8x16x128xf32>, tensor<1x8x16x128xf32>
func.func @split_tiles_f32_heads(%q: tensor<1x8x4x1x128xf32>, %k: tensor<1x8x256x128xf32>, %v: tensor<1x8x256x128xf32>,
    %acc: tensor<1x8x4x1x128xf32>, %m: tensor<1x8x4x1xf32>, %l: tensor<1x8x4x1xf32>) -> (tensor<1x8x4x1x128xf32>, tensor<1x8x4x1xf32>, tensor<1x8x4x1xf32>) {
  %r:3 = rope.online_attention %q, %k, %v scale = 0.25
      outs(%acc, %m, %l : tensor<1x8x4x1x128xf32>, tensor<1x8x4x1xf32>, tensor<1x8x4x1xf32>)
      : tensor<1x8x4x1x128xf32>, tensor<1x8x256x128xf32>, tensor<1x8x256x128xf32>
      -> tensor<1x8x4x1x128xf32>, tensor<1x8x4x1xf32>, tensor<1x8x4x1xf32>
  return %r#0, %r#1, %r#2 : tensor<1x8x4x1x128xf32>, tensor<1x8x4x1xf32>, tensor<1x8x4x1xf32>
}

// -----

// f16 rows are half as wide: 32 keys.
// HEADS-LABEL: func.func @split_tiles_f16_heads
// HEADS: scf.for %{{.+}} = %c0 to %{{.+}} step %c32
// HEADS: rope.online_attention {{.+}} : tensor<1x8x4x1x128xf16>, tensor<1x8x32x128xf16>, tensor<1x8x32x128xf16>
func.func @split_tiles_f16_heads(%q: tensor<1x8x4x1x128xf16>, %k: tensor<1x8x256x128xf16>, %v: tensor<1x8x256x128xf16>,
    %acc: tensor<1x8x4x1x128xf32>, %m: tensor<1x8x4x1xf32>, %l: tensor<1x8x4x1xf32>) -> (tensor<1x8x4x1x128xf32>, tensor<1x8x4x1xf32>, tensor<1x8x4x1xf32>) {
  %r:3 = rope.online_attention %q, %k, %v scale = 0.25
      outs(%acc, %m, %l : tensor<1x8x4x1x128xf32>, tensor<1x8x4x1xf32>, tensor<1x8x4x1xf32>)
      : tensor<1x8x4x1x128xf16>, tensor<1x8x256x128xf16>, tensor<1x8x256x128xf16>
      -> tensor<1x8x4x1x128xf32>, tensor<1x8x4x1xf32>, tensor<1x8x4x1xf32>
  return %r#0, %r#1, %r#2 : tensor<1x8x4x1x128xf32>, tensor<1x8x4x1xf32>, tensor<1x8x4x1xf32>
}

// -----

// One kv head's 64 keys are 32 KiB: key-tile's 64 keys stay.
// HEADS-LABEL: func.func @split_tiles_one_head
// HEADS: rope.online_attention {{.+}} : tensor<1x1x4x1x128xf32>, tensor<1x1x64x128xf32>, tensor<1x1x64x128xf32>
func.func @split_tiles_one_head(%q: tensor<1x1x4x1x128xf32>, %k: tensor<1x1x256x128xf32>, %v: tensor<1x1x256x128xf32>,
    %acc: tensor<1x1x4x1x128xf32>, %m: tensor<1x1x4x1xf32>, %l: tensor<1x1x4x1xf32>) -> (tensor<1x1x4x1x128xf32>, tensor<1x1x4x1xf32>, tensor<1x1x4x1xf32>) {
  %r:3 = rope.online_attention %q, %k, %v scale = 0.25
      outs(%acc, %m, %l : tensor<1x1x4x1x128xf32>, tensor<1x1x4x1xf32>, tensor<1x1x4x1xf32>)
      : tensor<1x1x4x1x128xf32>, tensor<1x1x256x128xf32>, tensor<1x1x256x128xf32>
      -> tensor<1x1x4x1x128xf32>, tensor<1x1x4x1xf32>, tensor<1x1x4x1xf32>
  return %r#0, %r#1, %r#2 : tensor<1x1x4x1x128xf32>, tensor<1x1x4x1xf32>, tensor<1x1x4x1xf32>
}
