// RUN: rope-opt %s --rope-matmul-to-tensor-cores --split-input-file | FileCheck %s

// A projection x·Wᵀ (B stored [N, K]) in bf16: one launch per 64×64 tile of C,
// two stages of [64][64] A and B tiles in shared memory, cp.async, plain
// ldmatrix for both operands, mma.sync with bf16 registers; the zero init is
// not read.
// CHECK-LABEL: func.func @projection
// CHECK: %[[C:.*]] = memref.alloc(%{{.*}}) : memref<?x96xf32>
// CHECK: gpu.launch
// CHECK-SAME: workgroup(%[[A:.*]] : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %[[B:.*]] : memref<2x64x64xbf16, #gpu.address_space<workgroup>>)
// CHECK: nvgpu.device_async_copy {{.*}}, %[[A]]
// CHECK: nvgpu.device_async_copy {{.*}}, %[[B]]
// CHECK: nvvm.cp.async.commit.group
// CHECK: scf.for
// CHECK: nvvm.cp.async.wait.group 0
// CHECK: gpu.barrier
// CHECK: nvgpu.ldmatrix %[[A]]{{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK: nvgpu.ldmatrix %[[B]]{{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>
// CHECK-NOT: memref.load
// CHECK: memref.store %{{.*}}, %[[C]]
// CHECK: bufferization.to_tensor %[[C]] restrict writable
#proj = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
         affine_map<(m, n, k) -> (m, n)>]
func.func @projection(%x: tensor<?x128xbf16>, %w: tensor<96x128xbf16>) -> tensor<?x96xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %s = tensor.dim %x, %c0 : tensor<?x128xbf16>
  %e = tensor.empty(%s) : tensor<?x96xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x96xf32>) -> tensor<?x96xf32>
  %r = linalg.matmul indexing_maps = #proj ins(%x, %w : tensor<?x128xbf16>, tensor<96x128xbf16>)
                     outs(%f : tensor<?x96xf32>) -> tensor<?x96xf32>
  return %r : tensor<?x96xf32>
}

// -----

// batch_matmul with B stored [K, N]: V-like, ldmatrix.trans; the initial C
// is read and added.
// CHECK-LABEL: func.func @batched
// CHECK: gpu.launch
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = true}
// CHECK: nvvm.mma.sync {{.*}} : (vector<2xf16>, vector<2xf16>, f32)
// CHECK: memref.load %{{.*}} : memref<4x32x40xf16>
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @batched(%a: tensor<4x32x64xf16>, %b: tensor<4x64x40xf16>, %c: tensor<4x32x40xf16>) -> tensor<4x32x40xf16> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<4x32x64xf16>, tensor<4x64x40xf16>)
                           outs(%c : tensor<4x32x40xf16>) -> tensor<4x32x40xf16>
  return %r : tensor<4x32x40xf16>
}

// -----

// Left to the thread-per-element mapping: f32 operands, K not a multiple of
// 8, N not a multiple of 8 with B stored [K, N].
// CHECK-LABEL: func.func @not_taken
// CHECK-NOT: gpu.launch
// CHECK-COUNT-3: linalg.matmul
func.func @not_taken(%a: tensor<8x16xf32>, %b: tensor<16x8xf32>, %c: tensor<8x8xf32>,
                     %h: tensor<8x12xf16>, %hb: tensor<12x8xf16>,
                     %h16: tensor<8x16xf16>, %n6: tensor<16x6xf16>, %c6: tensor<8x6xf32>)
    -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x6xf32>) {
  %0 = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = linalg.matmul ins(%h, %hb : tensor<8x12xf16>, tensor<12x8xf16>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  %2 = linalg.matmul ins(%h16, %n6 : tensor<8x16xf16>, tensor<16x6xf16>) outs(%c6 : tensor<8x6xf32>) -> tensor<8x6xf32>
  return %0, %1, %2 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x6xf32>
}
