// RUN: rope-opt %s --rope-matmul-to-register-tiles --split-input-file | FileCheck %s

// An f32 projection x·Wᵀ: 256 threads per 64×64 tile of C, shared [64][16]
// A and [16][64] B tiles (B transposed on the way in), a 4×4 register tile
// of FMAs per thread, the zero init not read.
// CHECK-LABEL: func.func @projection
// CHECK: %[[C:.*]] = memref.alloc(%{{.*}}) : memref<?x96xf32>
// CHECK: gpu.launch
// CHECK-SAME: threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c256
// CHECK-SAME: workgroup(%[[A:.*]] : memref<64x16xf32, #gpu.address_space<workgroup>>, %[[B:.*]] : memref<16x64xf32, #gpu.address_space<workgroup>>)
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %[[A]]
// CHECK: memref.store %{{.*}}, %[[B]]
// CHECK: gpu.barrier
// CHECK-COUNT-16: math.fma
// CHECK: gpu.barrier
// CHECK-NOT: memref.load {{.*}} : memref<?x96xf32>
// CHECK: memref.store %{{.*}}, %[[C]]
// CHECK: bufferization.to_tensor %[[C]] restrict writable
#proj = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
         affine_map<(m, n, k) -> (m, n)>]
func.func @projection(%x: tensor<?x128xf32>, %w: tensor<96x128xf32>) -> tensor<?x96xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %s = tensor.dim %x, %c0 : tensor<?x128xf32>
  %e = tensor.empty(%s) : tensor<?x96xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x96xf32>) -> tensor<?x96xf32>
  %r = linalg.matmul indexing_maps = #proj ins(%x, %w : tensor<?x128xf32>, tensor<96x128xf32>)
                     outs(%f : tensor<?x96xf32>) -> tensor<?x96xf32>
  return %r : tensor<?x96xf32>
}

// -----

// f16 operands are the tensor-core matmul's, not this pass's.
// CHECK-LABEL: func.func @f16
// CHECK-NOT: gpu.launch
// CHECK: linalg.matmul
func.func @f16(%a: tensor<8x16xf16>, %b: tensor<16x8xf16>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<8x16xf16>, tensor<16x8xf16>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
