// RUN: rope-opt %s --rope-insert-runtime-checks --split-input-file | FileCheck %s

// A relation with a dynamic side is checked before the op, with the
// verifier's message, the op's location and both extents as values.
// CHECK-LABEL: func.func @rotate_positions
// CHECK-SAME: (%[[X:.+]]: tensor<1x2x?x16xf32>, %[[P:.+]]: tensor<?xi64>)
// CHECK: %[[NP:.+]] = tensor.dim %[[P]], %{{.+}} : tensor<?xi64>
// CHECK: %[[S:.+]] = tensor.dim %[[X]], %{{.+}} : tensor<1x2x?x16xf32>
// CHECK: %[[OK:.+]] = arith.cmpi eq, %[[NP]], %[[S]] : index
// CHECK: rope.assert %[[OK]], "{{.*}}insert-runtime-checks.mlir:[[@LINE+5]]:8: error: 'rope.rotate' op expects positions to have {1} entries along the sequence, got {0}"(%[[NP]], %[[S]] : index, index)
// The result is as large as the input: no byte count check.
// CHECK-NOT: rope.assert
// CHECK: rope.rotate
func.func @rotate_positions(%x: tensor<1x2x?x16xf32>, %p: tensor<?xi64>) -> tensor<1x2x?x16xf32> {
  %r = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<1x2x?x16xf32>, tensor<?xi64>
  return %r : tensor<1x2x?x16xf32>
}

// -----

// Static relations are the verifier's: nothing is checked at run time.
// CHECK-LABEL: func.func @rotate_static
// CHECK-NOT: rope.assert
func.func @rotate_static(%x: tensor<1x2x8x16xf32>, %p: tensor<8xi64>) -> tensor<1x2x8x16xf32> {
  %r = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<1x2x8x16xf32>, tensor<8xi64>
  return %r : tensor<1x2x8x16xf32>
}

// -----

// Attention: batch and key/value relations, a mask dim that is dynamic
// (only a static 1 broadcasts), and the byte count of a result whose shape
// comes from two operands.
// CHECK-LABEL: func.func @attention
// CHECK: rope.assert %{{.+}}, "{{.+}}'rope.attention' op expects query, key and value to share the batch extent, got {1} (query) and {0} (key)"
// CHECK: rope.assert %{{.+}}, "{{.+}}'rope.attention' op expects query, key and value to share the batch extent, got {1} (query) and {0} (value)"
// CHECK: rope.assert %{{.+}}, "{{.+}}'rope.attention' op expects query, key and value to share the batch extent, got {1} (key) and {0} (value)"
// CHECK: rope.assert %{{.+}}, "{{.+}}'rope.attention' op expects key and value to have the same sequence length, got {1} and {0}"
// CHECK: rope.assert %{{.+}}, "{{.+}}'rope.attention' op expects mask dim 1 to be 1 or {1}, got {0} (only a static 1 broadcasts; this dim is dynamic)"
// The mask's static 1 broadcasts: not checked.
// CHECK-NOT: mask dim 0
// CHECK: %[[LOW:.+]], %[[HIGH:.+]] = arith.mului_extended
// CHECK: rope.assert %{{.+}}, "{{.+}}'rope.attention' op expects result #0 to take at most 2^63 - 1 bytes, got [{0}, 4, {1}, 32] elements of 32 bits"
// CHECK-NEXT: rope.attention
func.func @attention(%q: tensor<?x4x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x32xf32>, %m: tensor<1x?xi1>) -> tensor<?x4x?x32xf32> {
  %r = rope.attention %q, %k, %v mask(%m : tensor<1x?xi1>) : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x32xf32>
  return %r : tensor<?x4x?x32xf32>
}

// -----

// Table rotations: table rows against the input, cos against sin.
// CHECK-LABEL: func.func @rotate_with_tables
// CHECK: rope.assert %{{.+}}, "{{.+}}'rope.rotate_with_tables' op expects table dim 0 to be 1 or the extent of input dim 2 ({1}), got {0} (only a static 1 broadcasts; this dim is dynamic)"
// CHECK: rope.assert %{{.+}}, "{{.+}}'rope.rotate_with_tables' op expects cos and sin of one shape, dim 0 is {1} and {0}"
func.func @rotate_with_tables(%x: tensor<1x2x?x16xf32>, %c: tensor<?x16xf32>, %s: tensor<?x16xf32>) -> tensor<1x2x?x16xf32> {
  %r = rope.rotate_with_tables %x, %c, %s : tensor<1x2x?x16xf32>, tensor<?x16xf32>
  return %r : tensor<1x2x?x16xf32>
}

// -----

// A table's result ([S, r/2] f32) may outgrow its positions ([S] i64).
// CHECK-LABEL: func.func @table
// CHECK: rope.assert %{{.+}}, "{{.+}}'rope.table' op expects result #0 to take at most 2^63 - 1 bytes, got [{0}, 32] elements of 32 bits"
// CHECK: rope.assert %{{.+}}, "{{.+}}'rope.table' op expects result #1 to take at most 2^63 - 1 bytes
func.func @table(%p: tensor<?xi64>) -> tensor<?x32xf32> {
  %c, %s = rope.table %p rotary(#rope.spec<>) head_dim = 64 : tensor<?xi64>
  return %c : tensor<?x32xf32>
}

// -----

// Only rope ops are instrumented.
// CHECK-LABEL: func.func @not_rope
// CHECK-NOT: rope.assert
func.func @not_rope(%t: tensor<?xf32>, %i: index) -> tensor<?xf32> {
  %s = tensor.extract_slice %t[%i] [2] [1] : tensor<?xf32> to tensor<2xf32>
  %r = tensor.insert_slice %s into %t[0] [2] [1] : tensor<2xf32> into tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

// A linalg op a frontend wrote checks its extents too (upstream's checks,
// lowered like ours): torch-mlir once typed batched hidden states [B, 1, 64]
// where they were [B, S, 64], and this generic then wrote S rows into one.
// CHECK-LABEL: func.func @linalg_extents
// CHECK: cf.assert %{{.+}}, "{{.*}}insert-runtime-checks.mlir:[[@LINE+5]]:8: error: 'linalg.generic' op dimension #1 of input/output operand #1 is incompatible with inferred dimension size
// CHECK: linalg.generic
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @linalg_extents(%x: tensor<?x?x64xf32>, %b: index) -> tensor<?x1x64xf32> {
  %e = tensor.empty(%b) : tensor<?x1x64xf32>
  %r = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<?x?x64xf32>) outs(%e : tensor<?x1x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<?x1x64xf32>
  return %r : tensor<?x1x64xf32>
}

// -----

// Inside a loop a linalg op is not checked (the checks would run per
// iteration); nor is one on buffers.
// CHECK-LABEL: func.func @linalg_in_loop
// CHECK-NOT: cf.assert
// CHECK: scf.for
func.func @linalg_in_loop(%x: tensor<?xf32>, %n: index) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> tensor<?xf32> {
    %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<?xf32>) outs(%acc : tensor<?xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = arith.addf %a, %o : f32
      linalg.yield %s : f32
    } -> tensor<?xf32>
    scf.yield %y : tensor<?xf32>
  }
  return %r : tensor<?xf32>
}
