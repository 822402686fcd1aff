// RUN: rope-opt %s --split-input-file --rope-emulate-gpu-on-host --verify-diagnostics | FileCheck %s

// A launch becomes a call of the emulator runtime with an environment that
// holds the captured values (here the device buffer and %n); its body
// becomes an llvm.func of that environment, which the runtime runs once
// per GPU thread. GPU memory ops become host memory ops.
// CHECK-LABEL: func.func @launch
//  CHECK-SAME:   (%[[H:.+]]: memref<64xf32>, %[[N:.+]]: index)
//       CHECK:   %[[D:.+]] = memref.alloc() : memref<64xf32>
//       CHECK:   memref.copy %[[H]], %[[D]]
//       CHECK:   %[[ENV:.+]] = llvm.alloca %{{.+}} x !llvm.struct<(struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>, i64)>
//       CHECK:   %[[DV:.+]] = builtin.unrealized_conversion_cast %[[D]] : memref<64xf32> to !llvm.struct
//       CHECK:   %[[F0:.+]] = llvm.getelementptr %[[ENV]][0, 0]
//       CHECK:   llvm.store %[[DV]], %[[F0]]
//       CHECK:   %[[NV:.+]] = builtin.unrealized_conversion_cast %[[N]] : index to i64
//       CHECK:   %[[F1:.+]] = llvm.getelementptr %[[ENV]][0, 1]
//       CHECK:   llvm.store %[[NV]], %[[F1]] : i64, !llvm.ptr
//       CHECK:   %[[FN:.+]] = llvm.mlir.addressof @[[KERNEL:__rope_gpu_emu_0_launch_kernel0]] : !llvm.ptr
//       CHECK:   %[[NAME:.+]] = llvm.mlir.addressof @__rope_gpu_emu_0_launch_kernel0_name
//       CHECK:   %[[NAMEPTR:.+]] = llvm.getelementptr %[[NAME]][0, 0]
// Two workgroup buffers: 132 bytes, then 128 from the next multiple of 16.
//       CHECK:   %[[SHARED:.+]] = llvm.mlir.constant(272 : i64) : i64
//       CHECK:   llvm.call @ropeGpuEmuLaunch(%[[FN]], %[[ENV]], %[[NAMEPTR]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[SHARED]])
//   CHECK-NOT:   gpu.
//       CHECK:   memref.copy %[[D]], %[[H]]
//       CHECK:   memref.dealloc %[[D]]

// The kernel: the captures from the environment, the ids from the runtime,
// the workgroup buffers at their offsets in the block's shared memory.
//       CHECK: llvm.func internal @[[KERNEL]](%[[E:.+]]: !llvm.ptr)
//       CHECK:   %[[G0:.+]] = llvm.getelementptr %[[E]][0, 0]
//       CHECK:   %[[L0:.+]] = llvm.load %[[G0]]
//       CHECK:   %[[BUF:.+]] = builtin.unrealized_conversion_cast %[[L0]] {{.+}} to memref<64xf32>
//       CHECK:   %[[G1:.+]] = llvm.getelementptr %[[E]][0, 1]
//       CHECK:   %[[L1:.+]] = llvm.load %[[G1]] : !llvm.ptr -> i64
//       CHECK:   %[[NK:.+]] = builtin.unrealized_conversion_cast %[[L1]] : i64 to index
//       CHECK:   llvm.call @ropeGpuEmuBlockId
//       CHECK:   llvm.call @ropeGpuEmuThreadId
//       CHECK:   llvm.call @ropeGpuEmuGridDim
//       CHECK:   llvm.call @ropeGpuEmuBlockDim
//       CHECK:   %[[OFF0:.+]] = llvm.mlir.constant(0 : i64) : i64
//       CHECK:   llvm.call @ropeGpuEmuShared(%[[OFF0]])
//       CHECK:   %[[OFF1:.+]] = llvm.mlir.constant(144 : i64) : i64
//       CHECK:   llvm.call @ropeGpuEmuShared(%[[OFF1]])
//       CHECK:   cf.br ^bb1(
//       CHECK: ^bb1(%[[BX:[^:]+]]: index, %{{[^:]+}}: index, %{{[^:]+}}: index, %[[TX:[^:]+]]: index, {{.+}}, %[[BDX:[^:]+]]: index, %{{[^:]+}}: index, %{{[^:]+}}: index, %[[SH:[^:]+]]: memref<33xf32>, %{{[^:]+}}: memref<64xf16>):
// A global load: its index checked against the extent first.
//       CHECK:   %[[BASE:.+]] = arith.muli %[[BX]], %[[BDX]]
//       CHECK:   %[[I:.+]] = arith.addi %[[BASE]], %[[TX]]
//       CHECK:   %[[C64:.+]] = arith.constant 64 : index
//       CHECK:   %[[OUT:.+]] = arith.cmpi uge, %[[I]], %[[C64]] : index
//       CHECK:   scf.if %[[OUT]] {
//       CHECK:     %[[GLOBAL:.+]] = llvm.mlir.constant(0 : i32) : i32
//       CHECK:     %[[DIM:.+]] = llvm.mlir.constant(0 : i64) : i64
//       CHECK:     %[[I64:.+]] = arith.index_cast %[[I]] : index to i64
//       CHECK:     %[[E64:.+]] = arith.index_cast %[[C64]] : index to i64
//       CHECK:     llvm.call @ropeGpuEmuOutOfBounds(%[[GLOBAL]], %[[DIM]], %[[I64]], %[[E64]])
//       CHECK:   }
//       CHECK:   %[[V:.+]] = memref.load %[[BUF]][%[[I]]] : memref<64xf32>
// A workgroup store: checked, then reported to the race checker as a
// 4-byte write at its address.
//       CHECK:   arith.cmpi uge, %[[TX]]
//       CHECK:   llvm.call @ropeGpuEmuOutOfBounds
//       CHECK:   memref.extract_aligned_pointer_as_index %[[SH]]
//       CHECK:   %[[ADDR:.+]] = llvm.inttoptr
//       CHECK:   %[[BYTES:.+]] = llvm.mlir.constant(4 : i64) : i64
//       CHECK:   %[[WRITE:.+]] = llvm.mlir.constant(1 : i32) : i32
//       CHECK:   llvm.call @ropeGpuEmuSharedAccess(%[[ADDR]], %[[BYTES]], %[[WRITE]])
//       CHECK:   memref.store %[[V]], %[[SH]][%[[TX]]] : memref<33xf32>
// Each gpu.barrier has its own number.
//       CHECK:   %[[SITE0:.+]] = llvm.mlir.constant(0 : i64) : i64
//       CHECK:   llvm.call @ropeGpuEmuBarrierSite(%[[SITE0]])
//       CHECK:   %[[J:.+]] = arith.subi %[[NK]], %[[TX]]
//       CHECK:   %[[READ:.+]] = llvm.mlir.constant(0 : i32) : i32
//       CHECK:   llvm.call @ropeGpuEmuSharedAccess(%{{.+}}, %{{.+}}, %[[READ]])
//       CHECK:   memref.load %[[SH]][%[[J]]]
//       CHECK:   %[[SITE1:.+]] = llvm.mlir.constant(1 : i64) : i64
//       CHECK:   llvm.call @ropeGpuEmuBarrierSite(%[[SITE1]])
//       CHECK:   llvm.return
//   CHECK-NOT:   gpu.
func.func @launch(%h: memref<64xf32>, %n: index) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %d = gpu.alloc () : memref<64xf32>
  gpu.memcpy %d, %h : memref<64xf32>, memref<64xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             workgroup(%sh : memref<33xf32, #gpu.address_space<workgroup>>,
                       %half : memref<64xf16, #gpu.address_space<workgroup>>) {
    %base = arith.muli %bx, %sx : index
    %i = arith.addi %base, %tx : index
    %v = memref.load %d[%i] : memref<64xf32>
    memref.store %v, %sh[%tx] : memref<33xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %j = arith.subi %n, %tx : index
    %w = memref.load %sh[%j] : memref<33xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    memref.store %w, %d[%i] : memref<64xf32>
    gpu.terminator
  }
  gpu.memcpy %h, %d : memref<64xf32>, memref<64xf32>
  gpu.dealloc %d : memref<64xf32>
  return
}

// -----

// Warp collectives: mma.sync gets each lane's fragments in stack buffers,
// a shuffle its value as i32 and its validity through a byte.
// CHECK-LABEL: llvm.func internal @__rope_gpu_emu_0_warp_kernel0
//       CHECK:   %[[VALID:.+]] = llvm.alloca %{{.+}} x !llvm.array<1 x i8>
//       CHECK:   %[[D:.+]] = llvm.alloca %{{.+}} x !llvm.array<16 x i8>
//       CHECK:   %[[C:.+]] = llvm.alloca %{{.+}} x !llvm.array<16 x i8>
//       CHECK:   %[[B:.+]] = llvm.alloca %{{.+}} x !llvm.array<16 x i8>
//       CHECK:   %[[A:.+]] = llvm.alloca %{{.+}} x !llvm.array<16 x i8>
//       CHECK:   %[[AF:.+]] = vector.shape_cast %{{.+}} : vector<4x2xbf16> to vector<8xbf16>
//       CHECK:   llvm.store %[[AF]], %[[A]]
//       CHECK:   %[[BF:.+]] = vector.shape_cast %{{.+}} : vector<2x2xbf16> to vector<4xbf16>
//       CHECK:   llvm.store %[[BF]], %[[B]]
//       CHECK:   %[[CF:.+]] = vector.shape_cast %{{.+}} : vector<2x2xf32> to vector<4xf32>
//       CHECK:   llvm.store %[[CF]], %[[C]]
//       CHECK:   %[[BF16:.+]] = llvm.mlir.constant(1 : i32) : i32
//       CHECK:   llvm.call @ropeGpuEmuMmaSync(%[[BF16]], %[[A]], %[[B]], %[[C]], %[[D]])
//       CHECK:   %[[DF:.+]] = llvm.load %[[D]] : !llvm.ptr -> vector<4xf32>
//       CHECK:   vector.shape_cast %[[DF]] : vector<4xf32> to vector<2x2xf32>
//       CHECK:   %[[BITS:.+]] = arith.bitcast %{{.+}} : f32 to i32
//       CHECK:   %[[XOR:.+]] = llvm.mlir.constant(0 : i32) : i32
//       CHECK:   %[[S:.+]] = llvm.call @ropeGpuEmuShuffle(%[[BITS]], %{{.+}}, %{{.+}}, %[[XOR]], %[[VALID]]) : (i32, i32, i32, i32, !llvm.ptr) -> i32
//       CHECK:   %[[OK:.+]] = llvm.load %[[VALID]] : !llvm.ptr -> i8
//       CHECK:   arith.bitcast %[[S]] : i32 to f32
func.func @warp(%a: vector<4x2xbf16>, %b: vector<2x2xbf16>, %c: vector<2x2xf32>,
                %out: memref<32x4xf32>, %x: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %d = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 16]}
        : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
    %f = vector.shape_cast %d : vector<2x2xf32> to vector<4xf32>
    vector.store %f, %out[%tx, %c0] : memref<32x4xf32>, vector<4xf32>
    %v = memref.load %x[%tx] : memref<32xf32>
    %i1 = arith.constant 1 : i32
    %w = arith.constant 32 : i32
    %s, %ok = gpu.shuffle xor %v, %i1, %w : f32
    memref.store %s, %x[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}

// -----

// ldmatrix x2: only lanes 0 to 15 give a row address (PTX ignores the
// others'), so only theirs is bounds-checked; the runtime checks the rows
// against workgroup memory and reports them to the race checker.
// CHECK-LABEL: llvm.func internal @__rope_gpu_emu_0_ldmatrix_kernel0
//       CHECK:   %[[LANE:.+]] = llvm.call @ropeGpuEmuLaneId() : () -> i64
//       CHECK:   %[[C16:.+]] = llvm.mlir.constant(16 : i64) : i64
//       CHECK:   %[[HAS:.+]] = arith.cmpi slt, %[[LANE]], %[[C16]] : i64
//       CHECK:   scf.if %[[HAS]] {
//       CHECK:     arith.cmpi uge
//       CHECK:     llvm.call @ropeGpuEmuOutOfBounds
//       CHECK:   }
//   CHECK-NOT:   ropeGpuEmuSharedAccess
//       CHECK:   %[[X2:.+]] = llvm.mlir.constant(2 : i32) : i32
//       CHECK:   %[[TRANS:.+]] = llvm.mlir.constant(1 : i32) : i32
//       CHECK:   llvm.call @ropeGpuEmuLdmatrix(%{{.+}}, %[[X2]], %[[TRANS]], %{{.+}})
func.func @ldmatrix(%out: memref<32x4xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             workgroup(%sh : memref<16x8xf16, #gpu.address_space<workgroup>>) {
    %r = nvgpu.ldmatrix %sh[%tx, %c0] {numTiles = 2 : i32, transpose = true}
        : memref<16x8xf16, #gpu.address_space<workgroup>> -> vector<2x2xf16>
    %f = vector.shape_cast %r : vector<2x2xf16> to vector<4xf16>
    vector.store %f, %out[%tx, %c0] : memref<32x4xf16>, vector<4xf16>
    gpu.terminator
  }
  return
}

// -----

// cp.async: a copy with srcElements reads that many elements (their bounds
// checked only when there are any) and zero-fills the rest; groups and
// waits become runtime calls, and the tokens, also the one the loop
// carries, become i32 zeros.
// CHECK-LABEL: llvm.func internal @__rope_gpu_emu_0_cp_async_kernel0
//       CHECK:   %[[N:.+]] = builtin.unrealized_conversion_cast %{{.+}} : i64 to index
//       CHECK:   %[[I:.+]] = arith.muli
//       CHECK:   %[[ZERO:.+]] = arith.constant 0 : index
//       CHECK:   %[[ANY:.+]] = arith.cmpi ne, %[[N]], %[[ZERO]] : index
//       CHECK:   scf.if %[[ANY]] {
//       CHECK:     %[[C100:.+]] = arith.constant 100 : index
//       CHECK:     %[[FIRST:.+]] = arith.cmpi uge, %[[I]], %[[C100]] : index
//       CHECK:     %[[END:.+]] = arith.addi %[[I]], %[[N]] : index
//       CHECK:     %[[PAST:.+]] = arith.cmpi ugt, %[[END]], %[[C100]] : index
//       CHECK:     %[[BAD:.+]] = arith.ori %[[FIRST]], %[[PAST]] : i1
//       CHECK:     scf.if %[[BAD]] {
//       CHECK:       llvm.call @ropeGpuEmuOutOfBounds
//       CHECK:   %[[SRCBYTES:.+]] = arith.muli %[[N]], %{{.+}} : index
//       CHECK:   %[[BYTES:.+]] = llvm.mlir.constant(16 : i64) : i64
//       CHECK:   %[[SRC64:.+]] = arith.index_cast %[[SRCBYTES]] : index to i64
//       CHECK:   llvm.call @ropeGpuEmuAsyncCopyPartial(%{{.+}}, %{{.+}}, %[[BYTES]], %[[SRC64]])
//       CHECK:   llvm.call @ropeGpuEmuAsyncCommit()
//       CHECK:   %[[TOKEN:.+]] = arith.constant 0 : i32
//       CHECK:   scf.for {{.+}} iter_args(%{{.+}} = %[[TOKEN]]) -> (i32) {
//       CHECK:     llvm.call @ropeGpuEmuAsyncCopy(
//       CHECK:     llvm.call @ropeGpuEmuAsyncCommit()
//       CHECK:     %[[ONE:.+]] = llvm.mlir.constant(1 : i32) : i32
//       CHECK:     llvm.call @ropeGpuEmuAsyncWait(%[[ONE]])
//       CHECK:     scf.yield %{{.+}} : i32
//       CHECK:   }
//       CHECK:   %[[ALL:.+]] = llvm.mlir.constant(0 : i32) : i32
//       CHECK:   llvm.call @ropeGpuEmuAsyncWait(%[[ALL]])
//   CHECK-NOT:   nvgpu.
func.func @cp_async(%in: memref<100xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             workgroup(%sh : memref<2x128xf32, #gpu.address_space<workgroup>>) {
    %i = arith.muli %tx, %c4 : index
    %t0 = nvgpu.device_async_copy %in[%i], %sh[%c0, %i], 4, %n
        : memref<100xf32> to memref<2x128xf32, #gpu.address_space<workgroup>>
    %g0 = nvgpu.device_async_create_group %t0
    %last = scf.for %k = %c0 to %c4 step %c1 iter_args(%g = %g0) -> (!nvgpu.device.async.token) {
      %t = nvgpu.device_async_copy %in[%i], %sh[%c1, %i], 4
          : memref<100xf32> to memref<2x128xf32, #gpu.address_space<workgroup>>
      %g1 = nvgpu.device_async_create_group %t
      nvgpu.device_async_wait %g {numGroups = 1 : i32}
      scf.yield %g1 : !nvgpu.device.async.token
    }
    nvgpu.device_async_wait %last
    gpu.terminator
  }
  return
}

// -----

// A 2-D vector.load touches a 2x4 block: each of its dims is checked
// against the block's extent there, and its two rows, 16 bytes each and
// not contiguous, are reported apart.
// CHECK-LABEL: llvm.func internal @__rope_gpu_emu_0_block_kernel0
//       CHECK:   %[[R:.+]] = builtin.unrealized_conversion_cast %{{.+}} : i64 to index
//       CHECK:   %[[C4:.+]] = arith.constant 4 : index
//       CHECK:   %[[ROWS:.+]] = arith.constant 4 : index
//       CHECK:   %[[TWO:.+]] = arith.constant 2 : index
//       CHECK:   %[[REND:.+]] = arith.addi %[[R]], %[[TWO]] : index
//       CHECK:   arith.cmpi ugt, %[[REND]], %[[ROWS]] : index
//       CHECK:   %[[COLS:.+]] = arith.constant 8 : index
//       CHECK:   %[[FOUR:.+]] = arith.constant 4 : index
//       CHECK:   %[[CEND:.+]] = arith.addi %[[C4]], %[[FOUR]] : index
//       CHECK:   arith.cmpi ugt, %[[CEND]], %[[COLS]] : index
//       CHECK:   %[[B0:.+]] = llvm.mlir.constant(16 : i64) : i64
//       CHECK:   llvm.call @ropeGpuEmuSharedAccess(%{{.+}}, %[[B0]], %{{.+}})
//       CHECK:   %[[ONE:.+]] = arith.constant 1 : index
//       CHECK:   %[[R1:.+]] = arith.addi %[[R]], %[[ONE]] : index
//       CHECK:   arith.muli %[[R1]]
//       CHECK:   %[[B1:.+]] = llvm.mlir.constant(16 : i64) : i64
//       CHECK:   llvm.call @ropeGpuEmuSharedAccess(%{{.+}}, %[[B1]], %{{.+}})
//       CHECK:   vector.load %{{.+}}[%[[R]], %[[C4]]] : memref<4x8xf32>, vector<2x4xf32>
func.func @block(%out: memref<2x4xf32>, %r: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             workgroup(%sh : memref<4x8xf32, #gpu.address_space<workgroup>>) {
    %v = vector.load %sh[%r, %c4] : memref<4x8xf32, #gpu.address_space<workgroup>>, vector<2x4xf32>
    vector.store %v, %out[%c0, %c0] : memref<2x4xf32>, vector<2x4xf32>
    gpu.terminator
  }
  return
}

// -----

func.func @dynamic_shared(%n: i32) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  // expected-error @+1 {{'gpu.launch' op with clusters, async tokens or dynamic shared memory cannot be emulated on the host}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             dynamic_shared_memory_size %n {
    gpu.terminator
  }
  return
}

// -----

// The runtime's names are the pass's to declare.
// expected-error @+1 {{'llvm.func' op is named 'ropeGpuEmuBarrierSite', a name the GPU emulator's runtime reserves}}
llvm.func @ropeGpuEmuBarrierSite(i32)

func.func @reserved_name() {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.barrier
    gpu.terminator
  }
  return
}

// -----

// m16n8k8 with f16 inputs is a PTX shape the emulator does not run.
func.func @nvvm_mma_shape(%a: vector<2xf16>, %c: f32) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    // expected-error @+1 {{'nvvm.mma.sync' op of this shape, layout and type cannot be emulated}}
    %d = nvvm.mma.sync A[%a, %a] B[%a] C[%c, %c, %c, %c]
        {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>,
         shape = #nvvm.shape<m = 16, n = 8, k = 8>}
        : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
    gpu.terminator
  }
  return
}

// -----

func.func @f16_accumulator(%a: vector<4x2xf16>, %b: vector<2x2xf16>, %c: vector<2x2xf16>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    // expected-error @+1 {{'nvgpu.mma.sync' op with a non-f32 accumulator cannot be emulated}}
    %d = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 16]}
        : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf16>) -> vector<2x2xf16>
    gpu.terminator
  }
  return
}

// -----

func.func @subgroup_reduce(%x: f32) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    // expected-error @+1 {{'gpu.subgroup_reduce' op cannot be emulated on the host}}
    %s = gpu.subgroup_reduce add %x : (f32) -> f32
    gpu.terminator
  }
  return
}

// -----

// A memref.copy in a kernel would touch memory past the bounds and race
// checkers, so the pass refuses it.
func.func @unchecked_copy(%a: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             workgroup(%sh : memref<32xf32, #gpu.address_space<workgroup>>) {
    // expected-error @+1 {{'memref.copy' op accesses memory in a way the GPU emulator cannot check}}
    memref.copy %a, %sh : memref<32xf32> to memref<32xf32, #gpu.address_space<workgroup>>
    gpu.terminator
  }
  return
}

// -----

// nvgpu's warpgroup ops tile a matrix into many wgmma; the emulator runs
// the nvvm.wgmma.mma_async a kernel spells itself, with f16/bf16 inputs.
!acc4 = !llvm.struct<(f32, f32, f32, f32)>
func.func @wgmma_type(%a: i64, %b: i64, %c: !acc4) {
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    // expected-error @+1 {{'nvvm.wgmma.mma_async' op of this shape and type cannot be emulated (m64nNk16 with f16 or bf16 inputs and f32 accumulators can)}}
    %d = nvvm.wgmma.mma_async %a, %b, %c,
        #nvvm.shape<m = 64, n = 8, k = 8>,
        D [<f32>, #nvvm.wgmma_scale_out<one>],
        A [<tf32>, #nvvm.wgmma_scale_in<one>, <row>],
        B [<tf32>, #nvvm.wgmma_scale_in<one>, <col>] : !acc4 -> !acc4
    gpu.terminator
  }
  return
}

// -----

// A wgmma in a loop keeps its accumulator buffer in the kernel's entry
// block: an alloca per iteration would grow the fiber's stack until it hit
// the guard page.
// CHECK-LABEL: llvm.func internal @__rope_gpu_emu_0_wgmma_in_loop_kernel0
// CHECK: llvm.alloca
// CHECK: scf.for
// CHECK-NOT: llvm.alloca
// CHECK: llvm.call @ropeGpuEmuWgmma
!acc4f = !llvm.struct<(f32, f32, f32, f32)>
func.func @wgmma_in_loop(%a: i64, %b: i64, %c: !acc4f) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %c1000 = arith.constant 1000 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %r = scf.for %i = %c0 to %c1000 step %c1 iter_args(%acc = %c) -> (!acc4f) {
      %d = nvvm.wgmma.mma_async %a, %b, %acc,
          #nvvm.shape<m = 64, n = 8, k = 16>,
          D [<f32>, #nvvm.wgmma_scale_out<one>],
          A [<f16>, #nvvm.wgmma_scale_in<one>, <row>],
          B [<f16>, #nvvm.wgmma_scale_in<one>, <col>] : !acc4f -> !acc4f
      scf.yield %d : !acc4f
    }
    gpu.terminator
  }
  return
}
