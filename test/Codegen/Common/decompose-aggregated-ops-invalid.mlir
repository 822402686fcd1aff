// RUN: rope-opt %s -split-input-file -verify-diagnostics --rope-decompose-aggregated-ops

// Found by the red team: linalg.softmax verifies on integers, and upstream's
// decomposition then crashed (a float identity for an integer type). The
// pass checks what the decomposition takes before handing the op to it.
func.func @softmax_on_integers(%x: tensor<4x8xi32>) -> tensor<4x8xi32> {
  %e = tensor.empty() : tensor<4x8xi32>
  // expected-error @+1 {{'linalg.softmax' op expects floating-point input and output to be decomposed, got 'tensor<4x8xi32>'}}
  %r = linalg.softmax dimension(1) ins(%x : tensor<4x8xi32>) outs(%e : tensor<4x8xi32>) -> tensor<4x8xi32>
  return %r : tensor<4x8xi32>
}

// -----

// On buffers: the decomposition builds tensor ops.
func.func @softmax_on_buffers(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
  // expected-error @+1 {{'linalg.softmax' op can be decomposed on tensors only, not on buffers}}
  linalg.softmax dimension(1) ins(%x : memref<4x8xf32>) outs(%y : memref<4x8xf32>)
  return
}
