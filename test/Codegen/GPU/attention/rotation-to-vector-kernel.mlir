// RUN: rope-opt %s --rope-rotation-to-vector-kernel --split-input-file | FileCheck %s
// RUN: rope-opt %s --split-input-file --rope-lower-to-nvvm="chip=sm_90 format=isa" \
// RUN:   | %python %rope_src_root/utils/gpu_kernels.py ptx | FileCheck %s --check-prefix=PTX

// Half layout, f16: the table, then one thread per 8 pairs of a row
// (x_i, x_{i+64}): chunks c and c + 8 of the row, 16-byte vectors in and out,
// the coefficients as vectors of the position's table row.
// CHECK-LABEL: func.func @half
// CHECK: rope.table %{{.*}} rotary(#rope.spec<base = 5.000000e+05>) head_dim = 128
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}) : memref<1x32x?x128xf16>
// CHECK: gpu.launch
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<1x32x?x128xf16>, vector<8xf16>
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<?x64xf32>, vector<8xf32>
// CHECK: vector.store %{{.*}}, %[[OUT]]{{.*}} {alignment = 16 : i64} : memref<1x32x?x128xf16>, vector<8xf16>
// CHECK: vector.store %{{.*}}, %[[OUT]]
// CHECK-NOT: gpu.launch
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable
// In the PTX, 16-byte global loads and stores.
// PTX: ld.global.v4.b32
// PTX: st.global.v4.b32
func.func @half(%x: tensor<1x32x?x128xf16>, %p: tensor<?xi64>) -> tensor<1x32x?x128xf16> {
  %r = rope.rotate %x, %p rotary(#rope.spec<base = 500000.0>) : tensor<1x32x?x128xf16>, tensor<?xi64>
  return %r : tensor<1x32x?x128xf16>
}

// -----

// Interleaved partial rotary: 4 pairs per chunk, and a second launch copies
// the chunks outside [offset, offset + r).
// CHECK-LABEL: func.func @interleaved_partial
// CHECK: gpu.launch
// CHECK: vector.shuffle
// CHECK: gpu.launch
// CHECK: arith.select
func.func @interleaved_partial(%x: tensor<2x5x64xbf16>, %p: tensor<2x5xi32>) -> tensor<2x5x64xbf16> {
  %r = rope.rotate %x, %p rotary(#rope.spec<dims = 32, offset = 16, layout = interleaved>) : tensor<2x5x64xbf16>, tensor<2x5xi32>
  return %r : tensor<2x5x64xbf16>
}

// -----

// Left to the element-wise lowering: a head dim not in whole chunks.
// CHECK-LABEL: func.func @not_taken
// CHECK-NOT: gpu.launch
// CHECK: rope.rotate
func.func @not_taken(%x: tensor<3x12xf32>, %p: tensor<3xi64>) -> tensor<3x12xf32> {
  %r = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<3x12xf32>, tensor<3xi64>
  return %r : tensor<3x12xf32>
}
