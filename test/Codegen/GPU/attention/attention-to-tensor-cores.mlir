// RUN: rope-opt %s --rope-attention-to-tensor-cores --split-input-file | FileCheck %s

// f16 causal GQA with RoPE inside: the online op from the empty state
// becomes one launch of 4 warps over (query tiles, query heads, batch) with
// a 128-row Q tile and 64-row K and V tiles of shared memory; each warp
// holds two groups of 16 query rows, so per k-chunk it loads two Q fragments
// and each K fragment feeds both groups' products. The normalisation stays.
// CHECK-LABEL: func.func @rotary_gqa
// CHECK: rope.table
// CHECK-NOT: rope.online_attention
// CHECK: bufferization.to_buffer %{{.*}} read_only : tensor<1x2x2x100x64xf16> to memref<1x2x2x100x64xf16>
// CHECK: %[[ACC:.*]] = memref.alloc() : memref<1x2x2x100x64xf32>
// CHECK: gpu.launch
// CHECK-SAME: threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c128
// CHECK-SAME: workgroup(%[[Q:.*]] : memref<128x64xf16, #gpu.address_space<workgroup>>, %[[K:.*]] : memref<64x64xf16, #gpu.address_space<workgroup>>, %[[V:.*]] : memref<64x64xf16, #gpu.address_space<workgroup>>)
// Q and K: rotated chunks through registers, at 16-byte alignment.
// CHECK: vector.load {{.*}} {alignment = 16 : i64} : memref<1x2x2x100x64xf16>, vector<8xf16>
// CHECK: vector.store {{.*}}, %[[Q]]
// CHECK: nvvm.cp.async.commit.group
// CHECK: scf.for
// CHECK: nvvm.cp.async.wait.group 0
// CHECK: gpu.barrier
// CHECK: nvgpu.device_async_copy {{.*}}, %[[V]]{{.*}}, 8, %{{.*}} {bypassL1}
// CHECK: nvgpu.ldmatrix %[[Q]]{{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK-NEXT: vector.extract
// CHECK: nvgpu.ldmatrix %[[Q]]{{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK-NOT: nvvm.mma.sync
// CHECK: nvgpu.ldmatrix %[[K]]{{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK-COUNT-4: nvvm.mma.sync
// CHECK-NOT: nvgpu.ldmatrix
// CHECK: nvgpu.ldmatrix %[[K]]
// CHECK: nvvm.mma.sync {{.*}} {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK: gpu.shuffle  xor
// CHECK: math.exp2
// CHECK: nvgpu.ldmatrix %[[V]]{{.*}} {numTiles = 4 : i32, transpose = true}
// CHECK: vector.store {{.*}}, %[[ACC]]
// CHECK: bufferization.to_tensor %[[ACC]] restrict writable
// CHECK: linalg.generic
// CHECK: arith.divf
func.func @rotary_gqa(%q: tensor<1x4x100x64xf16>, %k: tensor<1x2x100x64xf16>,
                      %v: tensor<1x2x100x64xf16>) -> tensor<1x4x100x64xf16> {
  %r = rope.attention %q, %k, %v rotary(#rope.spec<base = 10000.0>) causal
      : tensor<1x4x100x64xf16>, tensor<1x2x100x64xf16>, tensor<1x2x100x64xf16>
  return %r : tensor<1x4x100x64xf16>
}

// -----

// bf16 operands travel to mma.sync as packed i32 registers.
// CHECK-LABEL: func.func @bf16
// CHECK: llvm.bitcast %{{.*}} : vector<2xbf16> to i32
// CHECK: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>
func.func @bf16(%q: tensor<2x8x?x128xbf16>, %k: tensor<2x8x?x128xbf16>,
                %v: tensor<2x8x?x128xbf16>) -> tensor<2x8x?x128xbf16> {
  %r = rope.attention %q, %k, %v
      : tensor<2x8x?x128xbf16>, tensor<2x8x?x128xbf16>, tensor<2x8x?x128xbf16>
  return %r : tensor<2x8x?x128xbf16>
}

// -----

// A mask and ALiBi: every tile is ruled element by element, the mask read
// where the op's rules (attention::buildLogit) add it.
// CHECK-LABEL: func.func @mask_alibi
// CHECK: gpu.launch
// CHECK: memref.load %{{.*}} : memref<1x1x1x1x40xi1>
// CHECK: math.absi
// CHECK: arith.select
func.func @mask_alibi(%q: tensor<1x2x40x64xf16>, %m: tensor<1x1x1x40xi1>,
                      %a: tensor<2xf32>) -> tensor<1x2x40x64xf16> {
  %r = rope.attention %q, %q, %q mask(%m : tensor<1x1x1x40xi1>) alibi(%a : tensor<2xf32>)
      : tensor<1x2x40x64xf16>, tensor<1x2x40x64xf16>, tensor<1x2x40x64xf16>
  return %r : tensor<1x2x40x64xf16>
}

// -----

// Decode (one query tile): split-K. The splits reach target-blocks (264)
// blocks, at most one per 64-key tile; the partial states carry a leading
// split dim and the op's merge reduces it (max, then rescaled sums). A warp
// holds one group of 16 rows: a 64-row Q tile. The 4 query heads of a kv
// head share a block, their queries packed as its rows: the kernel sees Q
// and the states through [.., 1, 4 · Sq, ..] views, and reads each K/V
// tile once for the group.
// CHECK-LABEL: func.func @decode
// CHECK: arith.minui
// CHECK-NEXT: arith.constant 1
// CHECK-NEXT: %[[SPLITS:.*]] = arith.maxui
// CHECK: memref.alloc(%[[SPLITS]]) : memref<?x1x8x4x1x128xf32>
// CHECK: memref.expand_shape {{.*}} into memref<1x8x1x4x128xbf16>
// CHECK: memref.expand_shape {{.*}} into memref<?x1x8x1x4x128xf32>
// CHECK: gpu.launch
// CHECK-SAME: workgroup(%{{.*}} : memref<64x128xbf16, #gpu.address_space<workgroup>>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]
// CHECK: arith.maximumf
func.func @decode(%q: tensor<1x32x1x128xbf16>, %k: tensor<1x8x?x128xbf16>,
                  %v: tensor<1x8x?x128xbf16>) -> tensor<1x32x1x128xbf16> {
  %r = rope.attention %q, %k, %v causal
      : tensor<1x32x1x128xbf16>, tensor<1x8x?x128xbf16>, tensor<1x8x?x128xbf16>
  return %r : tensor<1x32x1x128xbf16>
}

// -----

// f32: the same kernel with its products as FMA on the lanes' own fragment
// elements (no mma.sync): f32 tiles of 16-byte chunks (4 elements) copied
// by cp.async, P's row gathered from the quad by indexed shuffles.
// CHECK-LABEL: func.func @f32_rotary
// CHECK: gpu.launch
// CHECK-SAME: workgroup(%{{.*}} : memref<64x128xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64x128xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64x128xf32, #gpu.address_space<workgroup>>)
// CHECK: nvgpu.device_async_copy {{.*}}, 4, %{{.*}} {bypassL1}
// CHECK-NOT: nvvm.mma.sync
// CHECK: math.fma
// CHECK: gpu.shuffle  idx
// CHECK: math.fma
// CHECK-NOT: nvvm.mma.sync
// CHECK-NOT: rope.attention
func.func @f32_rotary(%q: tensor<1x4x100x128xf32>, %k: tensor<1x2x100x128xf32>,
                      %v: tensor<1x2x100x128xf32>) -> tensor<1x4x100x128xf32> {
  %r = rope.attention %q, %k, %v rotary(#rope.spec<base = 10000.0>) causal
      : tensor<1x4x100x128xf32>, tensor<1x2x100x128xf32>, tensor<1x2x100x128xf32>
  return %r : tensor<1x4x100x128xf32>
}

// -----

// Left to the other lowerings: D = 256, and a rotation whose pairs a lane's fragments do not hold
// (half layout, 16 rotary dims).
// CHECK-LABEL: func.func @not_taken
// CHECK-NOT: gpu.launch
// CHECK-COUNT-2: rope.attention
// CHECK-NOT: gpu.launch
func.func @not_taken(%qh: tensor<1x2x8x64xf16>, %q256: tensor<1x2x8x256xf16>)
    -> (tensor<1x2x8x256xf16>, tensor<1x2x8x64xf16>) {
  %c = rope.attention %q256, %q256, %q256
      : tensor<1x2x8x256xf16>, tensor<1x2x8x256xf16>, tensor<1x2x8x256xf16>
  %d = rope.attention %qh, %qh, %qh rotary(#rope.spec<dims = 16>)
      : tensor<1x2x8x64xf16>, tensor<1x2x8x64xf16>, tensor<1x2x8x64xf16>
  return %c, %d : tensor<1x2x8x256xf16>, tensor<1x2x8x64xf16>
}
