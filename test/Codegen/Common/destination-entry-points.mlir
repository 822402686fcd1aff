// RUN: rope-opt %s --split-input-file --rope-destination-entry-points | FileCheck %s

// A dynamic rotation. @rotate__into checks the destination's extent against
// the result's (x's, reified from rope.rotate) before anything runs, and
// materializes the result into it; @rotate allocates the result from the
// same extent and calls it.
// CHECK-LABEL: func.func @rotate__into
// CHECK-SAME:    (%[[X:.+]]: tensor<4x?x16xf32>, %[[P:.+]]: tensor<?xi64>, %[[OUT:.+]]: memref<4x?x16xf32>) {
// CHECK:         %[[S:.+]] = tensor.dim %[[X]], %{{.+}} : tensor<4x?x16xf32>
// CHECK:         %[[GIVEN:.+]] = memref.dim %[[OUT]], %{{.+}} : memref<4x?x16xf32>
// CHECK:         %[[SAME:.+]] = arith.cmpi eq, %[[GIVEN]], %[[S]] : index
// CHECK:         rope.assert %[[SAME]], "{{.+}}:[[@LINE+12]]:1: error: destination #0 of @rotate has {0} entries along dim 1, but its result has {1}"(%[[GIVEN]], %[[S]] : index, index)
// CHECK:         %[[R:.+]] = rope.rotate %[[X]], %[[P]]
// CHECK:         bufferization.materialize_in_destination %[[R]] in restrict writable %[[OUT]] : (tensor<4x?x16xf32>, memref<4x?x16xf32>) -> ()
// CHECK:         return{{$}}
// CHECK-LABEL: func.func @rotate
// CHECK-SAME:    (%[[X:.+]]: tensor<4x?x16xf32>, %[[P:.+]]: tensor<?xi64>) -> tensor<4x?x16xf32> {
// CHECK:         %[[S:.+]] = tensor.dim %[[X]], %{{.+}} : tensor<4x?x16xf32>
// CHECK:         %[[BUF:.+]] = memref.alloc(%[[S]]) {alignment = 64 : i64} : memref<4x?x16xf32>
// CHECK:         call @rotate__into(%[[X]], %[[P]], %[[BUF]])
// CHECK:         %[[T:.+]] = bufferization.to_tensor %[[BUF]] restrict
// CHECK:         return %[[T]]
// CHECK-NOT:   rope.rotate
func.func @rotate(%x: tensor<4x?x16xf32>, %p: tensor<?xi64>) -> tensor<4x?x16xf32> {
  %r = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<4x?x16xf32>, tensor<?xi64>
  return %r : tensor<4x?x16xf32>
}

// -----

// Two results; the second is an expand_shape of a destination-style result,
// which is materialized into the collapsed destination (so empty-tensor
// elimination computes it there). Extents come through tensor.empty's sizes.
// CHECK-LABEL: func.func @two__into
// CHECK-SAME:    (%[[A:.+]]: tensor<?x8xf32>, %[[OUT0:.+]]: memref<?x8xf32>, %[[OUT1:.+]]: memref<?x2x4xf32>) {
// CHECK:         %[[N:.+]] = tensor.dim %[[A]]
// CHECK:         rope.assert %{{.+}}, "{{.+}}destination #0 of @two has {0} entries along dim 0, but its result has {1}"
// CHECK:         rope.assert %{{.+}}, "{{.+}}destination #1 of @two has {0} entries along dim 0, but its result has {1}"
// CHECK:         %[[VIEW:.+]] = memref.collapse_shape %[[OUT1]] {{\[}}[0], [1, 2]] : memref<?x2x4xf32> into memref<?x8xf32>
// CHECK:         %[[NEG:.+]] = linalg.negf
// CHECK:         %[[EXP:.+]] = linalg.exp
// CHECK:         bufferization.materialize_in_destination %[[NEG]] in restrict writable %[[OUT0]]
// CHECK:         bufferization.materialize_in_destination %[[EXP]] in restrict writable %[[VIEW]]
// CHECK-LABEL: func.func @two
// CHECK-SAME:    -> (tensor<?x8xf32>, tensor<?x2x4xf32>)
// CHECK:         %[[N:.+]] = tensor.dim
// CHECK:         %[[B0:.+]] = memref.alloc(%[[N]]) {alignment = 64 : i64} : memref<?x8xf32>
// CHECK:         %[[B1:.+]] = memref.alloc(%[[N]]) {alignment = 64 : i64} : memref<?x2x4xf32>
// CHECK:         call @two__into(%{{.+}}, %[[B0]], %[[B1]])
func.func @two(%a: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x2x4xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %neg = linalg.negf ins(%a : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
  %e2 = tensor.empty(%n) : tensor<?x8xf32>
  %exp = linalg.exp ins(%a : tensor<?x8xf32>) outs(%e2 : tensor<?x8xf32>) -> tensor<?x8xf32>
  %v = tensor.expand_shape %exp [[0], [1, 2]] output_shape [%n, 2, 4] : tensor<?x8xf32> into tensor<?x2x4xf32>
  return %neg, %v : tensor<?x8xf32>, tensor<?x2x4xf32>
}

// -----

// A collapse_shape result goes into the expanded destination, whose extents
// are the source's.
// CHECK-LABEL: func.func @flat__into
// CHECK-SAME:    (%[[A:.+]]: tensor<?x4xf32>, %[[OUT:.+]]: memref<?xf32>) {
// CHECK:         %[[N:.+]] = tensor.dim %[[A]]
// CHECK:         rope.assert
// CHECK:         %[[VIEW:.+]] = memref.expand_shape %[[OUT]] {{\[}}[0, 1]] output_shape [%[[N]], 4] : memref<?xf32> into memref<?x4xf32>
// CHECK:         %[[NEG:.+]] = linalg.negf
// CHECK:         bufferization.materialize_in_destination %[[NEG]] in restrict writable %[[VIEW]]
func.func @flat(%a: tensor<?x4xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?x4xf32>
  %e = tensor.empty(%n) : tensor<?x4xf32>
  %neg = linalg.negf ins(%a : tensor<?x4xf32>) outs(%e : tensor<?x4xf32>) -> tensor<?x4xf32>
  %f = tensor.collapse_shape %neg [[0, 1]] : tensor<?x4xf32> into tensor<?xf32>
  return %f : tensor<?xf32>
}

// -----

// Static shapes need no check; an argument returned as it is is
// materialized (copied) into the destination.
// CHECK-LABEL: func.func @identity__into
// CHECK-SAME:    (%[[A:.+]]: tensor<2x3xf16>, %[[OUT:.+]]: memref<2x3xf16>) {
// CHECK-NEXT:    bufferization.materialize_in_destination %[[A]] in restrict writable %[[OUT]]
// CHECK-NEXT:    return
// CHECK-LABEL: func.func @identity
// CHECK:         memref.alloc() {alignment = 64 : i64} : memref<2x3xf16>
func.func @identity(%a: tensor<2x3xf16>) -> tensor<2x3xf16> {
  return %a : tensor<2x3xf16>
}

// -----

// Left as they are: a result whose extent a loop decides (not known before
// the body runs), a private function, one without results, and one whose
// destination name the source already uses (that one, public with a
// result, gets its own).
// CHECK-LABEL: func.func @loop
// CHECK-SAME:    (%{{.+}}: tensor<?xf32>, %{{.+}}: index) -> tensor<?xf32> {
// CHECK-NEXT:    arith.constant 0
// CHECK-NEXT:    arith.constant 1
// CHECK-NEXT:    scf.for
// CHECK-LABEL: func.func private @hidden
// CHECK-SAME:    -> tensor<4xf32>
// CHECK-LABEL: func.func @nothing
// CHECK-LABEL: func.func @taken
// CHECK-SAME:    (%{{.+}}: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    return
// CHECK-LABEL: func.func @taken__into__into
// CHECK-LABEL: func.func @taken__into
// CHECK-SAME:    (%{{.+}}: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NOT:   func.func @loop__into
func.func @loop(%a: tensor<?xf32>, %n: index) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%t = %a) -> tensor<?xf32> {
    %c = tensor.concat dim(0) %t, %a : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    scf.yield %c : tensor<?xf32>
  }
  return %r : tensor<?xf32>
}
func.func private @hidden(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
func.func @nothing(%a: tensor<4xf32>) {
  return
}
func.func @taken(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
func.func @taken__into(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
