// RUN: rope-opt %s --rope-test-spec-recovery -o /dev/null 2>&1 | FileCheck %s --check-prefixes=CHECK,SHORT
// RUN: rope-opt %s --rope-test-spec-recovery=max-position=100000 -o /dev/null 2>&1 | FileCheck %s --check-prefixes=CHECK,LONG

// Spec recovery (what --rope-raise does with the frequencies it finds)
// against the spec's own frequency code, for every scaling kind: spec ->
// its inverse frequencies -> recovered spec -> its inverse frequencies, which
// the pass checks are the same (2^-21 relative), as are the attention factor,
// layout and direction; any difference is an error and fails the RUN line.
// The remark says whether the recovered spec is the spec itself ("same
// spec") or another spelling of its frequencies ("same frequencies"). The
// second RUN line takes the largest position past every original context,
// where `dynamic` and `longrope` change their frequencies.

// No scaling: the base and the attention factor come back as they were
// written, in either layout and direction, for a partial rotation too.
func.func @no_scaling(%x: tensor<4x16xf32>, %p: tensor<4xi64>) {
  // CHECK: test-spec-recovery.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: same spec: #rope.spec<>
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<4x16xf32>, tensor<4xi64>
  // CHECK: test-spec-recovery.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: same spec: #rope.spec<base = 5.000000e+05>
  %1 = rope.rotate %x, %p rotary(#rope.spec<base = 500000.0>) : tensor<4x16xf32>, tensor<4xi64>
  // CHECK: test-spec-recovery.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: same spec: #rope.spec<base = 1.000000e+06, layout = interleaved, inverse = true>
  %2 = rope.rotate %x, %p rotary(#rope.spec<base = 1000000.0, layout = interleaved, inverse = true>) : tensor<4x16xf32>, tensor<4xi64>
  // CHECK: test-spec-recovery.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: same spec: #rope.spec<attention_factor = 5.000000e-01>
  %3 = rope.rotate %x, %p rotary(#rope.spec<attention_factor = 0.5>) : tensor<4x16xf32>, tensor<4xi64>
  // CHECK: test-spec-recovery.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: same spec: #rope.spec<dims = 8, offset = 4>
  %4 = rope.rotate %x, %p rotary(#rope.spec<dims = 8, offset = 4>) : tensor<4x16xf32>, tensor<4xi64>
  // One pair has one frequency, 1 whatever the base: any base is right.
  // CHECK: test-spec-recovery.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: same frequencies: #rope.spec<dims = 2>
  %5 = rope.rotate %x, %p rotary(#rope.spec<base = 500000.0, dims = 2>) : tensor<4x16xf32>, tensor<4xi64>
  return
}

// Linear: the factor comes back; a factor of 1 is no scaling.
func.func @linear(%x: tensor<4x16xf32>, %p: tensor<4xi64>) {
  // CHECK: test-spec-recovery.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: same spec: #rope.spec<scaling = #rope.linear<factor = 4.000000e+00>>
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.linear<factor = 4.0>>) : tensor<4x16xf32>, tensor<4xi64>
  // CHECK: test-spec-recovery.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: same spec: #rope.spec<base = 5.000000e+05, layout = interleaved, scaling = #rope.linear<factor = 2.500000e+00>, attention_factor = 7.500000e-01>
  %1 = rope.rotate %x, %p rotary(#rope.spec<base = 500000.0, layout = interleaved, scaling = #rope.linear<factor = 2.5>, attention_factor = 0.75>) : tensor<4x16xf32>, tensor<4xi64>
  // CHECK: test-spec-recovery.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: same frequencies: #rope.spec<>
  %2 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.linear<factor = 1.0>>) : tensor<4x16xf32>, tensor<4xi64>
  return
}

// Dynamic NTK: within the original context the frequencies are those of the
// base; past it, of a larger base, which recovery finds (a spec holds only
// the frequencies at one largest position).
func.func @dynamic(%x: tensor<4x16xf32>, %p: tensor<4xi64>) {
  // SHORT: test-spec-recovery.mlir:[[@LINE+2]]:{{[0-9]+}}: remark: same frequencies: #rope.spec<>
  // LONG: test-spec-recovery.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: same frequencies: #rope.spec<base = 8.31{{[0-9]+}}e+05>
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.dynamic<factor = 2.0, original_max_position_embeddings = 4096>>) : tensor<4x16xf32>, tensor<4xi64>
  return
}

// YaRN: per-frequency factors, 1 for the extrapolated frequencies and the
// factor for the interpolated ones; its attention factor made explicit.
func.func @yarn(%x: tensor<4x16xf32>, %p: tensor<4xi64>) {
  // CHECK: test-spec-recovery.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: same frequencies: #rope.spec<scaling = #rope.freq_factors<factors = [1.000000e+00, 1.000000e+00, 1.000000e+00, 1.230769, 1.600000e+00, 2.285714, 4.000000e+00, 4.000000e+00]>, attention_factor = 1.138629{{[0-9]+}}>
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.yarn<factor = 4.0, original_max_position_embeddings = 4096>>) : tensor<4x16xf32>, tensor<4xi64>
  // CHECK: test-spec-recovery.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: same frequencies: #rope.spec<base = 5.000000e+05, layout = interleaved, scaling = #rope.freq_factors<factors = [1.000000e+00, 1.000000e+00, 1.000000e+00, 1.306567, 1.600000e+01, 1.600000e+01, 1.600000e+01, 1.600000e+01]>, attention_factor = 0.936397{{[0-9]+}}, inverse = true>
  %1 = rope.rotate %x, %p rotary(#rope.spec<base = 500000.0, layout = interleaved, scaling = #rope.yarn<factor = 16.0, original_max_position_embeddings = 8192, beta_fast = 16.0, beta_slow = 2.0, mscale = 0.707, mscale_all_dim = 1.0, truncate = false>, inverse = true>) : tensor<4x16xf32>, tensor<4xi64>
  return
}

// Llama 3: per-frequency factors, 1 for the high frequencies, the factor for
// the low ones, smooth in between.
func.func @llama3(%x: tensor<4x16xf32>, %p: tensor<4xi64>) {
  // CHECK: test-spec-recovery.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: same frequencies: #rope.spec<base = 5.000000e+05, scaling = #rope.freq_factors<factors = [1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00, 2.694530e+00, 8.000000e+00, 8.000000e+00, 8.000000e+00]>>
  %0 = rope.rotate %x, %p rotary(#rope.spec<base = 500000.0, scaling = #rope.llama3<factor = 8.0, original_max_position_embeddings = 8192>>) : tensor<4x16xf32>, tensor<4xi64>
  return
}

// LongRoPE: the short factors within the original context, the long ones
// past it, as per-frequency factors; its attention factor made explicit.
func.func @longrope(%x: tensor<4x16xf32>, %p: tensor<4xi64>) {
  // SHORT: test-spec-recovery.mlir:[[@LINE+2]]:{{[0-9]+}}: remark: same frequencies: #rope.spec<scaling = #rope.freq_factors<factors = [1.000000e+00, 1.000000e+00, 1.500000e+00, 2.000000e+00, 2.500000e+00, 3.000000e+00, 3.500000e+00, 4.000000e+00]>, attention_factor = 1.118034>
  // LONG: test-spec-recovery.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: same frequencies: #rope.spec<scaling = #rope.freq_factors<factors = [1.000000e+00, 1.000000e+00, 2.000000e+00, 4.000000e+00, 8.000000e+00, 1.600000e+01, 3.200000e+01, 6.400000e+01]>, attention_factor = 1.118034>
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.longrope<short_factor = [1.0, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0], long_factor = [1.0, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0], factor = 8.0, original_max_position_embeddings = 4096>>) : tensor<4x16xf32>, tensor<4xi64>
  return
}

// Per-frequency factors: the spec itself when the two highest frequencies
// are unscaled (recovery takes the base from those two); else the same
// frequencies relative to the base those two imply (here 10000 · 2^8), or
// linear scaling when every factor is the same.
func.func @freq_factors(%x: tensor<4x16xf32>, %p: tensor<4xi64>) {
  // CHECK: test-spec-recovery.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: same spec: #rope.spec<base = 5.000000e+05, scaling = #rope.freq_factors<factors = [1.000000e+00, 1.000000e+00, 1.250000e+00, 2.000000e+00, 4.000000e+00, 8.000000e+00, 8.000000e+00, 8.000000e+00]>>
  %0 = rope.rotate %x, %p rotary(#rope.spec<base = 500000.0, scaling = #rope.freq_factors<factors = [1.0, 1.0, 1.25, 2.0, 4.0, 8.0, 8.0, 8.0]>>) : tensor<4x16xf32>, tensor<4xi64>
  // CHECK: test-spec-recovery.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: same frequencies: #rope.spec<base = 2.560000e+06, scaling = #rope.freq_factors<factors = [1.000000e+00, 1.000000e+00, 7.500000e-01, 5.000000e-01, 3.125000e-01, 1.875000e-01, 1.093750e-01, 6.250000e-02]>>
  %1 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.freq_factors<factors = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]>>) : tensor<4x16xf32>, tensor<4xi64>
  // CHECK: test-spec-recovery.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: same frequencies: #rope.spec<scaling = #rope.linear<factor = 3.000000e+00>>
  %2 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.freq_factors<factors = [3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0]>>) : tensor<4x16xf32>, tensor<4xi64>
  return
}

// A first frequency far below the next (a factor of 1e40 on it): the ratio
// of the two implies a base of 1e-316, below what a spec may have (its
// frequencies would grow); recovery keeps to bases above 1 and spells the
// frequencies as factors over the default base (a fuzzer's input once made
// it build the invalid spec, an assertion in RotarySpecAttr::get).
func.func @ratio_below_any_base(%x: tensor<4x16xf32>, %p: tensor<4xi64>) {
  // CHECK: test-spec-recovery.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: same spec: #rope.spec<scaling = #rope.freq_factors<factors = [1.000000e+40, 1.000000e+00
  %0 = rope.rotate %x, %p rotary(#rope.spec<scaling = #rope.freq_factors<factors = [1.0e40, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]>>) : tensor<4x16xf32>, tensor<4xi64>
  return
}
