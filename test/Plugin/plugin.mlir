// The STOCK mlir-opt of LLVM 22 loads libRopePlugin.so: the dialect plugin
// makes rope IR parse and print, the pass plugin registers our passes for
// --pass-pipeline.

// Parse, print and re-parse with the dialect plugin only (custom form and
// generic form).
// RUN: %mlir_opt %s --load-dialect-plugin=%rope_plugin | %mlir_opt --load-dialect-plugin=%rope_plugin | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: %mlir_opt %s --load-dialect-plugin=%rope_plugin --mlir-print-op-generic | %mlir_opt --load-dialect-plugin=%rope_plugin | FileCheck %s --check-prefix=ROUNDTRIP

// Run the conversion from the pass plugin, at module level and nested in a
// user pipeline on functions.
// RUN: %mlir_opt %s --load-dialect-plugin=%rope_plugin --load-pass-plugin=%rope_plugin --pass-pipeline="builtin.module(convert-rope-to-linalg)" | FileCheck %s
// RUN: %mlir_opt %s --load-dialect-plugin=%rope_plugin --load-pass-plugin=%rope_plugin --pass-pipeline="builtin.module(func.func(convert-rope-to-linalg),canonicalize,cse)" | FileCheck %s

// Without the plugin the stock mlir-opt knows no rope dialect (the
// expected-error below is only checked by this RUN line).
// RUN: %mlir_opt %s -verify-diagnostics

// ROUNDTRIP-LABEL: func.func @rope_ops
// ROUNDTRIP: rope.rotate %{{.+}}, %{{.+}} rotary(#rope.spec<base = 5.000000e+05, scaling = #rope.llama3<factor = 8.000000e+00, original_max_position_embeddings = 8192>>) : tensor<1x4x8x16xf32>, tensor<8xi64>
// ROUNDTRIP: %cos, %sin = rope.table %{{.+}} rotary(#rope.spec<layout = interleaved>) head_dim = 16 : tensor<8xi64>
// ROUNDTRIP: rope.attention %{{.+}}, %{{.+}}, %{{.+}} positions(%{{.+}}, %{{.+}} : tensor<8xi64>, tensor<8xi64>) rotary(#rope.spec<>) causal : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
// ROUNDTRIP: rope.linear_attention %{{.+}}, %{{.+}}, %{{.+}} rotary(#rope.spec<inverse = true>) causal : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
// ROUNDTRIP: rope.sinusoidal %{{.+}} base = 1.000000e+02 : tensor<8xi64> -> tensor<8x16xf32>

// CHECK-LABEL: func.func @rope_ops
// CHECK-NOT: rope.
// CHECK: linalg.generic
// CHECK: math.cos
// CHECK-NOT: rope.
// CHECK: return

func.func @rope_ops(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %p: tensor<8xi64>)
    -> (tensor<1x4x8x16xf32>, tensor<8x8xf32>, tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<8x16xf32>) {
  // expected-error @+2 {{Dialect `rope' not found for custom op 'rope.rotate'}}
  // expected-note @+1 {{Available dialects:}}
  %r = rope.rotate %q, %p rotary(#rope.spec<base = 500000.0, scaling = #rope.llama3<factor = 8.0, original_max_position_embeddings = 8192>>) : tensor<1x4x8x16xf32>, tensor<8xi64>
  %c, %s = rope.table %p rotary(#rope.spec<layout = interleaved>) head_dim = 16 : tensor<8xi64>
  %a = rope.attention %q, %k, %v positions(%p, %p : tensor<8xi64>, tensor<8xi64>) rotary(#rope.spec<>) causal : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  %l = rope.linear_attention %k, %k, %v rotary(#rope.spec<inverse = true>) causal : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  %e = rope.sinusoidal %p base = 100.0 : tensor<8xi64> -> tensor<8x16xf32>
  return %r, %c, %a, %l, %e : tensor<1x4x8x16xf32>, tensor<8x8xf32>, tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<8x16xf32>
}
