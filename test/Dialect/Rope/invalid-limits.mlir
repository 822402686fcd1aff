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

// -----

// Found by the red team (reliability round three): specs whose parameters
// are each in range but whose frequencies are not numbers. A linear factor
// of 4.9e-324 divides every frequency into inf (256 of 256 outputs NaN).
func.func @linear_factor_denormal(%x: tensor<2x16xf32>, %p: tensor<2xi64>) -> tensor<2x16xf32> {
  // expected-error @+1 {{'rope.rotate' op implies inverse frequency INF for pair 0 (largest position 0); every frequency must be positive, normal and at most 2^20 radians per position}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.linear<factor = 4.9e-324>>) : tensor<2x16xf32>, tensor<2xi64>
  return %0 : tensor<2x16xf32>
}

// -----

// One denormal entry of the frequency factors (64 of 256 outputs NaN).
func.func @freq_factor_denormal(%x: tensor<2x8xf32>, %p: tensor<2xi64>) -> tensor<2x8xf32> {
  // expected-error @+1 {{implies inverse frequency INF for pair 1}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.freq_factors<factors = [1.0, 4.9e-324, 1.0, 1.0]>>) : tensor<2x8xf32>, tensor<2xi64>
  return %0 : tensor<2x8xf32>
}

// -----

// A yarn boundary that small makes the ramp inf/inf (16 of 256 NaN).
func.func @yarn_beta_fast_denormal(%x: tensor<2x16xf32>, %p: tensor<2xi64>) -> tensor<2x16xf32> {
  // expected-error @+1 {{implies inverse frequency nan for pair 0}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.yarn<factor = 4.0, original_max_position_embeddings = 16, beta_fast = 4.9e-324>>) : tensor<2x16xf32>, tensor<2xi64>
  return %0 : tensor<2x16xf32>
}

// -----

// A linear factor near zero: finite frequencies, far too fast to resolve.
func.func @linear_factor_tiny(%x: tensor<2x16xf32>, %p: tensor<2xi64>) -> tensor<2x16xf32> {
  // expected-error @+1 {{implies inverse frequency 1.000000e+300 for pair 0}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.linear<factor = 1.0e-300>>) : tensor<2x16xf32>, tensor<2xi64>
  return %0 : tensor<2x16xf32>
}

// -----

// The same rule on the attention ops' rotary spec (checked at its head dim).
func.func @attention_spec_denormal(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  // expected-error @+1 {{'rope.attention' op implies inverse frequency INF for pair 0}}
  %r = rope.attention %q, %q, %q rotary(#rope.spec<scaling = #rope.linear<factor = 4.9e-324>>) : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>
  return %r : tensor<1x1x4x8xf32>
}

// -----

// A static shape of more than 2^63 - 1 bytes verified and compiled (its
// size arithmetic wraps): every rope op checks every static shape it names.
func.func @byte_size_overflow(%x: tensor<2x9223372036854775807xf32>, %p: tensor<2xi64>) -> tensor<2x9223372036854775807xf32> {
  // expected-error @+1 {{'rope.rotate' op expects operand #0 to fit in memory: 'tensor<2x9223372036854775807xf32>' holds more than 2^63 - 1 bytes}}
  %0 = rope.rotate %x, %p rotary(#rope.spec<dims = 16>) : tensor<2x9223372036854775807xf32>, tensor<2xi64>
  return %0 : tensor<2x9223372036854775807xf32>
}

// -----

// 2^61 rows of 4 f32 are 2^65 bytes; the i16 positions (2^62 bytes) fit.
func.func @byte_size_overflow_by_element_size(%p: tensor<2305843009213693952xi16>) -> (tensor<2305843009213693952x4xf32>, tensor<2305843009213693952x4xf32>) {
  // expected-error @+1 {{'rope.table' op expects result #0 to fit in memory}}
  %c, %s = rope.table %p rotary(#rope.spec<>) head_dim = 8 : tensor<2305843009213693952xi16>
  return %c, %s : tensor<2305843009213693952x4xf32>, tensor<2305843009213693952x4xf32>
}

// -----

// An empty shape holds no bytes, however large its other dims.
func.func @empty_shape_fits(%x: tensor<0x9223372036854775807xf32>, %p: tensor<0xi64>) -> tensor<0x9223372036854775807xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<dims = 16>) : tensor<0x9223372036854775807xf32>, tensor<0xi64>
  return %0 : tensor<0x9223372036854775807xf32>
}
