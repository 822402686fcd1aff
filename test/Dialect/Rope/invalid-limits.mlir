// RUN: rope-opt %s -split-input-file -verify-diagnostics

// Found by fuzzing (docs/reliability.md): static extents that the verifier
// accepted but that crashed the compiler later.

// offset + rotary dims overflowed int64_t in the verifier (UBSan: signed
// overflow); the wrapped sum passed the "fits in the head dim" check and the
// lowering then sliced out of bounds.
func.func @offset_overflow(%x: tensor<1x2x8xf32>, %p: tensor<2xi64>) -> tensor<1x2x8xf32> {
  // expected-error @+1 {{'rope.rotate' op rotary dims [9223372036854775806, 9223372036854775808) exceed the head dim 8}}
  %r = rope.rotate %x, %p rotary(#rope.spec<dims = 2, offset = 9223372036854775806>) : tensor<1x2x8xf32>, tensor<2xi64>
  return %r : tensor<1x2x8xf32>
}

// -----

// A huge static head dim: the lowering built its frequencies (2^39 doubles)
// as compile-time constants and aborted with "LLVM ERROR: out of memory".
func.func @huge_head_dim(%x: tensor<1x2x1099511627776xf32>, %p: tensor<2xi64>) -> tensor<1x2x1099511627776xf32> {
  // expected-error @+1 {{'rope.rotate' op rotary dims 1099511627776 exceed the supported maximum 65536 (the frequencies are compile-time constants)}}
  %r = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<1x2x1099511627776xf32>, tensor<2xi64>
  return %r : tensor<1x2x1099511627776xf32>
}

// -----

// A partial rotation of a huge head is fine: only r frequencies exist.
func.func @huge_head_small_rotary(%x: tensor<1x2x1099511627776xf32>, %p: tensor<2xi64>) -> tensor<1x2x1099511627776xf32> {
  %r = rope.rotate %x, %p rotary(#rope.spec<dims = 64>) : tensor<1x2x1099511627776xf32>, tensor<2xi64>
  return %r : tensor<1x2x1099511627776xf32>
}

// -----

func.func @huge_table(%p: tensor<2xi64>) -> (tensor<2x549755813888xf32>, tensor<2x549755813888xf32>) {
  // expected-error @+1 {{'rope.table' op rotary dims 1099511627776 exceed the supported maximum 65536}}
  %c, %s = rope.table %p rotary(#rope.spec<>) head_dim = 1099511627776 : tensor<2xi64>
  return %c, %s : tensor<2x549755813888xf32>, tensor<2x549755813888xf32>
}

// -----

func.func @huge_attention_head(%q: tensor<1x1x2x262144xf32>) -> tensor<1x1x2x262144xf32> {
  // expected-error @+1 {{'rope.attention' op rotary dims 262144 exceed the supported maximum 65536}}
  %r = rope.attention %q, %q, %q rotary(#rope.spec<>) : tensor<1x1x2x262144xf32>, tensor<1x1x2x262144xf32>, tensor<1x1x2x262144xf32>
  return %r : tensor<1x1x2x262144xf32>
}

// -----

func.func @huge_sinusoidal(%p: tensor<2xi64>) -> tensor<2x1099511627776xf32> {
  // expected-error @+1 {{'rope.sinusoidal' op expects an encoding dim of at most 65536 (the frequencies are compile-time constants), got 1099511627776}}
  %r = rope.sinusoidal %p : tensor<2xi64> -> tensor<2x1099511627776xf32>
  return %r : tensor<2x1099511627776xf32>
}
