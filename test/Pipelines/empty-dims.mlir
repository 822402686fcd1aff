// Empty dims through every pipeline (found by the red team: an empty key
// sequence crashed the default CPU pipeline inside upstream tiling; D = 0 and
// Dv = 0 failed with an internal error). Each compiles; the numbers are
// checked by test/Integration/CPU/empty_dims.py.
// RUN: rope-opt %s -split-input-file --rope-lower-to-cpu | FileCheck %s
// RUN: rope-opt %s -split-input-file --rope-lower-to-cpu="fold-rotation=0 decompose-attention=0" | FileCheck %s
// RUN: rope-opt %s -split-input-file --rope-lower-to-cpu="split-keys=2 key-tile=3 query-tile=3" | FileCheck %s
// RUN: rope-opt %s -split-input-file --rope-test-gpu-mapping-on-cpu | FileCheck %s
// RUN: rope-opt %s -split-input-file --rope-lower-to-nvvm=format=isa | FileCheck %s --check-prefix=NVVM

// CHECK: llvm.func @empty_keys16
// NVVM: llvm.func @empty_keys16
func.func @empty_keys16(%q: tensor<1x1x16x8xf32>, %k: tensor<1x1x0x8xf32>) -> tensor<1x1x16x8xf32> {
  %r = rope.attention %q, %k, %k : tensor<1x1x16x8xf32>, tensor<1x1x0x8xf32>, tensor<1x1x0x8xf32>
  return %r : tensor<1x1x16x8xf32>
}
// -----
// CHECK: llvm.func @reduce_empty
// NVVM: llvm.func @reduce_empty
func.func @reduce_empty(%x: tensor<16x0xf32>) -> tensor<16xf32> {
  %c = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<16xf32>
  %i = linalg.fill ins(%c : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<16x0xf32>) outs(%i : tensor<16xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maximumf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}
// -----
// CHECK: llvm.func @d0
// NVVM: llvm.func @d0
func.func @d0(%q: tensor<1x2x4x0xf32>, %k: tensor<1x2x5x0xf32>, %v: tensor<1x2x5x8xf32>) -> tensor<1x2x4x8xf32> {
  %r = rope.attention %q, %k, %v causal : tensor<1x2x4x0xf32>, tensor<1x2x5x0xf32>, tensor<1x2x5x8xf32>
  return %r : tensor<1x2x4x8xf32>
}
// -----
// CHECK: llvm.func @dv0
// NVVM: llvm.func @dv0
func.func @dv0(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x5x8xf32>, %v: tensor<1x2x5x0xf32>) -> tensor<1x2x4x0xf32> {
  %r = rope.attention %q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x0xf32>
  return %r : tensor<1x2x4x0xf32>
}
// -----
// CHECK: llvm.func @b0
// NVVM: llvm.func @b0
func.func @b0(%q: tensor<0x2x4x8xf32>, %k: tensor<0x2x5x8xf32>, %p: tensor<4xi64>, %kp: tensor<5xi64>) -> tensor<0x2x4x8xf32> {
  %r = rope.attention %q, %k, %k positions(%p, %kp : tensor<4xi64>, tensor<5xi64>) rotary(#rope.spec<>) causal : tensor<0x2x4x8xf32>, tensor<0x2x5x8xf32>, tensor<0x2x5x8xf32>
  return %r : tensor<0x2x4x8xf32>
}
// -----
// CHECK: llvm.func @h0
// NVVM: llvm.func @h0
func.func @h0(%q: tensor<1x0x4x8xf32>, %k: tensor<1x0x5x8xf32>) -> tensor<1x0x4x8xf32> {
  %r = rope.attention %q, %k, %k : tensor<1x0x4x8xf32>, tensor<1x0x5x8xf32>, tensor<1x0x5x8xf32>
  return %r : tensor<1x0x4x8xf32>
}
