// A TMA-fed wgmma on one warpgroup, as an sm_90a kernel spells it: the host
// builds 128-byte-swizzled tensor maps of Q (64 x 64 f16) and K (64 x 64
// f16, one key per row), thread 0 arms an mbarrier with the boxes' bytes and
// issues both TMA loads, every thread waits for the phase, and four chained
// nvvm.wgmma.mma_async (k = 0, 16, 32, 48: the descriptors' start advanced
// by 32 bytes) give S = Q K^T in the accumulator fragments, whose elements
// each thread writes at the places the m64nNk16 D layout gives them. The
// descriptors are built from the buffers' addresses the GPU's way (start =
// (address & 0x3ffff) >> 4, SBO 1024, 128B swizzle). Every value is a
// multiple of 1/4 in [-2, 2], so the f32 sums are exact and S must equal
// the host's product exactly.
// RUN: rope-opt %s --rope-emulate-gpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils | FileCheck %s

// CHECK: elements of S that differ: 0
// CHECK-NEXT: tma wgmma: match

// Without the wait, the first wgmma reads Q before the TMA load lands;
// arming the mbarrier for more bytes than the boxes bring leaves its phase
// waiting for transactions no load will complete.
// RUN: sed '/nvgpu.mbarrier.try_wait.parity/d' %s | rope-opt --rope-emulate-gpu | not mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils 2>&1 | FileCheck %s --check-prefix=EARLY
// RUN: sed 's/arith.constant 16384 : index/arith.constant 20480 : index/' %s | rope-opt --rope-emulate-gpu | not mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils 2>&1 | FileCheck %s --check-prefix=TX
// A tensor map of a transposed Q (innermost stride 64) is refused: a tensor
// map's dimension 0 is contiguous.
// RUN: sed 's/%qu = memref.cast %q : memref<64x64xf16> to memref<\*xf16>/%qtr = memref.transpose %q (i, j) -> (j, i) : memref<64x64xf16> to memref<64x64xf16, strided<[1, 64]>>\n  %qu = memref.cast %qtr : memref<64x64xf16, strided<[1, 64]>> to memref<*xf16>/' %s | rope-opt --rope-emulate-gpu | not mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils 2>&1 | FileCheck %s --check-prefix=STRIDE

// EARLY: gpu emulator: kernel 'main_kernel0': read before its mbarrier phase completed: thread (0, 0, 0) in block (0, 0, 0) reads workgroup memory byte offset 0 (a wgmma A operand), which a TMA load issued by thread (0, 0, 0) in block (0, 0, 0) fills when phase 0 of the mbarrier at byte offset 16384 completes
// STRIDE: nvgpu.tma.create.descriptor: the tensor's innermost dimension must be contiguous (stride 1), as a tensor map's dimension 0 is
// TX: gpu emulator: kernel 'main_kernel0': transaction count never completes: thread (0, 0, 0) in block (0, 0, 0) waits for phase 0 of the mbarrier at workgroup memory byte offset 16384, which has all of its 1 arrivals but still expects 4096 transaction bytes

!acc = !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
!barriers = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
!map = !nvgpu.tensormap.descriptor<tensor = memref<64x64xf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %c11 = arith.constant 11 : index
  %c13 = arith.constant 13 : index
  %c17 = arith.constant 17 : index
  %q = memref.alloc() : memref<64x64xf16>
  %k = memref.alloc() : memref<64x64xf16>
  %s = memref.alloc() : memref<64x64xf32>
  // Q[m][d] = ((7 m + 3 d) mod 17 - 8) / 4, K[n][d] = ((5 n + 11 d) mod 13 - 6) / 4.
  scf.for %i = %c0 to %c64 step %c1 {
    scf.for %d = %c0 to %c64 step %c1 {
      %qv = func.call @quarter(%i, %d, %c7, %c3, %c17, %c8) : (index, index, index, index, index, index) -> f16
      memref.store %qv, %q[%i, %d] : memref<64x64xf16>
      %kv = func.call @quarter(%i, %d, %c5, %c11, %c13, %c6) : (index, index, index, index, index, index) -> f16
      memref.store %kv, %k[%i, %d] : memref<64x64xf16>
    }
  }
  %qu = memref.cast %q : memref<64x64xf16> to memref<*xf16>
  %ku = memref.cast %k : memref<64x64xf16> to memref<*xf16>
  %qmap = nvgpu.tma.create.descriptor %qu box[%c64, %c64] : memref<*xf16> -> !map
  %kmap = nvgpu.tma.create.descriptor %ku box[%c64, %c64] : memref<*xf16> -> !map
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1)
             workgroup(%qs : memref<64x64xf16, #gpu.address_space<workgroup>>,
                       %ks : memref<64x64xf16, #gpu.address_space<workgroup>>) {
    %z = arith.constant 0 : index
    %one = arith.constant 1 : index
    %bytes = arith.constant 16384 : index
    %ticks = arith.constant 10000000 : index
    %false = arith.constant false
    %bar = nvgpu.mbarrier.create -> !barriers
    %first = arith.cmpi eq, %tx, %z : index
    scf.if %first {
      nvgpu.mbarrier.init %bar[%z], %one : !barriers
    }
    gpu.barrier
    scf.if %first {
      nvgpu.mbarrier.arrive.expect_tx %bar[%z], %bytes : !barriers
      nvgpu.tma.async.load %qmap[%z, %z], %bar[%z] to %qs : !map, !barriers -> memref<64x64xf16, #gpu.address_space<workgroup>>
      nvgpu.tma.async.load %kmap[%z, %z], %bar[%z] to %ks : !map, !barriers -> memref<64x64xf16, #gpu.address_space<workgroup>>
    }
    nvgpu.mbarrier.try_wait.parity %bar[%z], %false, %ticks : !barriers
    // Matrix descriptors of the 64 x 64 f16 tiles, K-major with the
    // 128-byte swizzle: start (address & 0x3ffff) >> 4, LBO 1 (unused), SBO
    // 1024 >> 4, swizzle field 1 (128B) in bits 62-63.
    %mask = arith.constant 262143 : i64
    %four = arith.constant 4 : i64
    %fields = arith.constant 4611686293305360384 : i64
    %qAddress = memref.extract_aligned_pointer_as_index %qs : memref<64x64xf16, #gpu.address_space<workgroup>> -> index
    %qa = arith.index_cast %qAddress : index to i64
    %qLow = arith.andi %qa, %mask : i64
    %qStart = arith.shrui %qLow, %four : i64
    %descA = arith.ori %qStart, %fields : i64
    %kAddress = memref.extract_aligned_pointer_as_index %ks : memref<64x64xf16, #gpu.address_space<workgroup>> -> index
    %ka = arith.index_cast %kAddress : index to i64
    %kLow = arith.andi %ka, %mask : i64
    %kStart = arith.shrui %kLow, %four : i64
    %descB = arith.ori %kStart, %fields : i64
    %two = arith.constant 2 : i64
    %zeroF = arith.constant 0.0 : f32
    %acc0 = llvm.mlir.poison : !acc
    %init1 = llvm.insertvalue %zeroF, %acc0[0] : !acc
    %init2 = llvm.insertvalue %zeroF, %init1[1] : !acc
    %init3 = llvm.insertvalue %zeroF, %init2[2] : !acc
    %init4 = llvm.insertvalue %zeroF, %init3[3] : !acc
    %init5 = llvm.insertvalue %zeroF, %init4[4] : !acc
    %init6 = llvm.insertvalue %zeroF, %init5[5] : !acc
    %init7 = llvm.insertvalue %zeroF, %init6[6] : !acc
    %init8 = llvm.insertvalue %zeroF, %init7[7] : !acc
    %init9 = llvm.insertvalue %zeroF, %init8[8] : !acc
    %init10 = llvm.insertvalue %zeroF, %init9[9] : !acc
    %init11 = llvm.insertvalue %zeroF, %init10[10] : !acc
    %init12 = llvm.insertvalue %zeroF, %init11[11] : !acc
    %init13 = llvm.insertvalue %zeroF, %init12[12] : !acc
    %init14 = llvm.insertvalue %zeroF, %init13[13] : !acc
    %init15 = llvm.insertvalue %zeroF, %init14[14] : !acc
    %init16 = llvm.insertvalue %zeroF, %init15[15] : !acc
    %init17 = llvm.insertvalue %zeroF, %init16[16] : !acc
    %init18 = llvm.insertvalue %zeroF, %init17[17] : !acc
    %init19 = llvm.insertvalue %zeroF, %init18[18] : !acc
    %init20 = llvm.insertvalue %zeroF, %init19[19] : !acc
    %init21 = llvm.insertvalue %zeroF, %init20[20] : !acc
    %init22 = llvm.insertvalue %zeroF, %init21[21] : !acc
    %init23 = llvm.insertvalue %zeroF, %init22[22] : !acc
    %init24 = llvm.insertvalue %zeroF, %init23[23] : !acc
    %init25 = llvm.insertvalue %zeroF, %init24[24] : !acc
    %init26 = llvm.insertvalue %zeroF, %init25[25] : !acc
    %init27 = llvm.insertvalue %zeroF, %init26[26] : !acc
    %init28 = llvm.insertvalue %zeroF, %init27[27] : !acc
    %init29 = llvm.insertvalue %zeroF, %init28[28] : !acc
    %init30 = llvm.insertvalue %zeroF, %init29[29] : !acc
    %init31 = llvm.insertvalue %zeroF, %init30[30] : !acc
    %init32 = llvm.insertvalue %zeroF, %init31[31] : !acc
    nvvm.wgmma.fence.aligned
    %d0 = nvvm.wgmma.mma_async %descA, %descB, %init32,
        #nvvm.shape<m = 64, n = 64, k = 16>,
        D [<f32>, #nvvm.wgmma_scale_out<one>],
        A [<f16>, #nvvm.wgmma_scale_in<one>, <row>],
        B [<f16>, #nvvm.wgmma_scale_in<one>, <col>] : !acc -> !acc
    %descA1 = arith.addi %descA, %two : i64
    %descB1 = arith.addi %descB, %two : i64
    %d1 = nvvm.wgmma.mma_async %descA1, %descB1, %d0,
        #nvvm.shape<m = 64, n = 64, k = 16>,
        D [<f32>, #nvvm.wgmma_scale_out<one>],
        A [<f16>, #nvvm.wgmma_scale_in<one>, <row>],
        B [<f16>, #nvvm.wgmma_scale_in<one>, <col>] : !acc -> !acc
    %descA2 = arith.addi %descA1, %two : i64
    %descB2 = arith.addi %descB1, %two : i64
    %d2 = nvvm.wgmma.mma_async %descA2, %descB2, %d1,
        #nvvm.shape<m = 64, n = 64, k = 16>,
        D [<f32>, #nvvm.wgmma_scale_out<one>],
        A [<f16>, #nvvm.wgmma_scale_in<one>, <row>],
        B [<f16>, #nvvm.wgmma_scale_in<one>, <col>] : !acc -> !acc
    %descA3 = arith.addi %descA2, %two : i64
    %descB3 = arith.addi %descB2, %two : i64
    %d3 = nvvm.wgmma.mma_async %descA3, %descB3, %d2,
        #nvvm.shape<m = 64, n = 64, k = 16>,
        D [<f32>, #nvvm.wgmma_scale_out<one>],
        A [<f16>, #nvvm.wgmma_scale_in<one>, <row>],
        B [<f16>, #nvvm.wgmma_scale_in<one>, <col>] : !acc -> !acc
    nvvm.wgmma.commit.group.sync.aligned
    nvvm.wgmma.wait.group.sync.aligned 0
    // D layout: row 16 w + lane / 4 + 8 ((i / 2) mod 2), column
    // 8 (i / 4) + 2 (lane mod 4) + i mod 2.
    %n4 = arith.constant 4 : index
    %n16 = arith.constant 16 : index
    %n32 = arith.constant 32 : index
    %warp = arith.divui %tx, %n32 : index
    %lane = arith.remui %tx, %n32 : index
    %w16 = arith.muli %warp, %n16 : index
    %group = arith.divui %lane, %n4 : index
    %rowBase = arith.addi %w16, %group : index
    %inGroup = arith.remui %lane, %n4 : index
    %two_i = arith.constant 2 : index
    %colBase = arith.muli %inGroup, %two_i : index
    %off0 = arith.constant 0 : index
    %off1 = arith.constant 1 : index
    %off8 = arith.constant 8 : index
    %off9 = arith.constant 9 : index
    %off16 = arith.constant 16 : index
    %off17 = arith.constant 17 : index
    %off24 = arith.constant 24 : index
    %off25 = arith.constant 25 : index
    %off32 = arith.constant 32 : index
    %off33 = arith.constant 33 : index
    %off40 = arith.constant 40 : index
    %off41 = arith.constant 41 : index
    %off48 = arith.constant 48 : index
    %off49 = arith.constant 49 : index
    %off56 = arith.constant 56 : index
    %off57 = arith.constant 57 : index
    %v0 = llvm.extractvalue %d3[0] : !acc
    %r0 = arith.addi %rowBase, %off0 : index
    %cc0 = arith.addi %colBase, %off0 : index
    memref.store %v0, %s[%r0, %cc0] : memref<64x64xf32>
    %v1 = llvm.extractvalue %d3[1] : !acc
    %r1 = arith.addi %rowBase, %off0 : index
    %cc1 = arith.addi %colBase, %off1 : index
    memref.store %v1, %s[%r1, %cc1] : memref<64x64xf32>
    %v2 = llvm.extractvalue %d3[2] : !acc
    %r2 = arith.addi %rowBase, %off8 : index
    %cc2 = arith.addi %colBase, %off0 : index
    memref.store %v2, %s[%r2, %cc2] : memref<64x64xf32>
    %v3 = llvm.extractvalue %d3[3] : !acc
    %r3 = arith.addi %rowBase, %off8 : index
    %cc3 = arith.addi %colBase, %off1 : index
    memref.store %v3, %s[%r3, %cc3] : memref<64x64xf32>
    %v4 = llvm.extractvalue %d3[4] : !acc
    %r4 = arith.addi %rowBase, %off0 : index
    %cc4 = arith.addi %colBase, %off8 : index
    memref.store %v4, %s[%r4, %cc4] : memref<64x64xf32>
    %v5 = llvm.extractvalue %d3[5] : !acc
    %r5 = arith.addi %rowBase, %off0 : index
    %cc5 = arith.addi %colBase, %off9 : index
    memref.store %v5, %s[%r5, %cc5] : memref<64x64xf32>
    %v6 = llvm.extractvalue %d3[6] : !acc
    %r6 = arith.addi %rowBase, %off8 : index
    %cc6 = arith.addi %colBase, %off8 : index
    memref.store %v6, %s[%r6, %cc6] : memref<64x64xf32>
    %v7 = llvm.extractvalue %d3[7] : !acc
    %r7 = arith.addi %rowBase, %off8 : index
    %cc7 = arith.addi %colBase, %off9 : index
    memref.store %v7, %s[%r7, %cc7] : memref<64x64xf32>
    %v8 = llvm.extractvalue %d3[8] : !acc
    %r8 = arith.addi %rowBase, %off0 : index
    %cc8 = arith.addi %colBase, %off16 : index
    memref.store %v8, %s[%r8, %cc8] : memref<64x64xf32>
    %v9 = llvm.extractvalue %d3[9] : !acc
    %r9 = arith.addi %rowBase, %off0 : index
    %cc9 = arith.addi %colBase, %off17 : index
    memref.store %v9, %s[%r9, %cc9] : memref<64x64xf32>
    %v10 = llvm.extractvalue %d3[10] : !acc
    %r10 = arith.addi %rowBase, %off8 : index
    %cc10 = arith.addi %colBase, %off16 : index
    memref.store %v10, %s[%r10, %cc10] : memref<64x64xf32>
    %v11 = llvm.extractvalue %d3[11] : !acc
    %r11 = arith.addi %rowBase, %off8 : index
    %cc11 = arith.addi %colBase, %off17 : index
    memref.store %v11, %s[%r11, %cc11] : memref<64x64xf32>
    %v12 = llvm.extractvalue %d3[12] : !acc
    %r12 = arith.addi %rowBase, %off0 : index
    %cc12 = arith.addi %colBase, %off24 : index
    memref.store %v12, %s[%r12, %cc12] : memref<64x64xf32>
    %v13 = llvm.extractvalue %d3[13] : !acc
    %r13 = arith.addi %rowBase, %off0 : index
    %cc13 = arith.addi %colBase, %off25 : index
    memref.store %v13, %s[%r13, %cc13] : memref<64x64xf32>
    %v14 = llvm.extractvalue %d3[14] : !acc
    %r14 = arith.addi %rowBase, %off8 : index
    %cc14 = arith.addi %colBase, %off24 : index
    memref.store %v14, %s[%r14, %cc14] : memref<64x64xf32>
    %v15 = llvm.extractvalue %d3[15] : !acc
    %r15 = arith.addi %rowBase, %off8 : index
    %cc15 = arith.addi %colBase, %off25 : index
    memref.store %v15, %s[%r15, %cc15] : memref<64x64xf32>
    %v16 = llvm.extractvalue %d3[16] : !acc
    %r16 = arith.addi %rowBase, %off0 : index
    %cc16 = arith.addi %colBase, %off32 : index
    memref.store %v16, %s[%r16, %cc16] : memref<64x64xf32>
    %v17 = llvm.extractvalue %d3[17] : !acc
    %r17 = arith.addi %rowBase, %off0 : index
    %cc17 = arith.addi %colBase, %off33 : index
    memref.store %v17, %s[%r17, %cc17] : memref<64x64xf32>
    %v18 = llvm.extractvalue %d3[18] : !acc
    %r18 = arith.addi %rowBase, %off8 : index
    %cc18 = arith.addi %colBase, %off32 : index
    memref.store %v18, %s[%r18, %cc18] : memref<64x64xf32>
    %v19 = llvm.extractvalue %d3[19] : !acc
    %r19 = arith.addi %rowBase, %off8 : index
    %cc19 = arith.addi %colBase, %off33 : index
    memref.store %v19, %s[%r19, %cc19] : memref<64x64xf32>
    %v20 = llvm.extractvalue %d3[20] : !acc
    %r20 = arith.addi %rowBase, %off0 : index
    %cc20 = arith.addi %colBase, %off40 : index
    memref.store %v20, %s[%r20, %cc20] : memref<64x64xf32>
    %v21 = llvm.extractvalue %d3[21] : !acc
    %r21 = arith.addi %rowBase, %off0 : index
    %cc21 = arith.addi %colBase, %off41 : index
    memref.store %v21, %s[%r21, %cc21] : memref<64x64xf32>
    %v22 = llvm.extractvalue %d3[22] : !acc
    %r22 = arith.addi %rowBase, %off8 : index
    %cc22 = arith.addi %colBase, %off40 : index
    memref.store %v22, %s[%r22, %cc22] : memref<64x64xf32>
    %v23 = llvm.extractvalue %d3[23] : !acc
    %r23 = arith.addi %rowBase, %off8 : index
    %cc23 = arith.addi %colBase, %off41 : index
    memref.store %v23, %s[%r23, %cc23] : memref<64x64xf32>
    %v24 = llvm.extractvalue %d3[24] : !acc
    %r24 = arith.addi %rowBase, %off0 : index
    %cc24 = arith.addi %colBase, %off48 : index
    memref.store %v24, %s[%r24, %cc24] : memref<64x64xf32>
    %v25 = llvm.extractvalue %d3[25] : !acc
    %r25 = arith.addi %rowBase, %off0 : index
    %cc25 = arith.addi %colBase, %off49 : index
    memref.store %v25, %s[%r25, %cc25] : memref<64x64xf32>
    %v26 = llvm.extractvalue %d3[26] : !acc
    %r26 = arith.addi %rowBase, %off8 : index
    %cc26 = arith.addi %colBase, %off48 : index
    memref.store %v26, %s[%r26, %cc26] : memref<64x64xf32>
    %v27 = llvm.extractvalue %d3[27] : !acc
    %r27 = arith.addi %rowBase, %off8 : index
    %cc27 = arith.addi %colBase, %off49 : index
    memref.store %v27, %s[%r27, %cc27] : memref<64x64xf32>
    %v28 = llvm.extractvalue %d3[28] : !acc
    %r28 = arith.addi %rowBase, %off0 : index
    %cc28 = arith.addi %colBase, %off56 : index
    memref.store %v28, %s[%r28, %cc28] : memref<64x64xf32>
    %v29 = llvm.extractvalue %d3[29] : !acc
    %r29 = arith.addi %rowBase, %off0 : index
    %cc29 = arith.addi %colBase, %off57 : index
    memref.store %v29, %s[%r29, %cc29] : memref<64x64xf32>
    %v30 = llvm.extractvalue %d3[30] : !acc
    %r30 = arith.addi %rowBase, %off8 : index
    %cc30 = arith.addi %colBase, %off56 : index
    memref.store %v30, %s[%r30, %cc30] : memref<64x64xf32>
    %v31 = llvm.extractvalue %d3[31] : !acc
    %r31 = arith.addi %rowBase, %off8 : index
    %cc31 = arith.addi %colBase, %off57 : index
    memref.store %v31, %s[%r31, %cc31] : memref<64x64xf32>
    gpu.terminator
  }
  // The host's S = Q K^T, compared element by element.
  %mismatches = scf.for %i = %c0 to %c64 step %c1 iter_args(%bad = %c0) -> (index) {
    %rowBad = scf.for %j = %c0 to %c64 step %c1 iter_args(%b = %bad) -> (index) {
      %zero = arith.constant 0.0 : f32
      %sum = scf.for %d = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> (f32) {
        %qv = memref.load %q[%i, %d] : memref<64x64xf16>
        %kv = memref.load %k[%j, %d] : memref<64x64xf16>
        %q32 = arith.extf %qv : f16 to f32
        %k32 = arith.extf %kv : f16 to f32
        %p = arith.mulf %q32, %k32 : f32
        %next = arith.addf %acc, %p : f32
        scf.yield %next : f32
      }
      %got = memref.load %s[%i, %j] : memref<64x64xf32>
      %same = arith.cmpf oeq, %got, %sum : f32
      %inc = arith.select %same, %c0, %c1 : index
      %nb = arith.addi %b, %inc : index
      scf.yield %nb : index
    }
    scf.yield %rowBad : index
  }
  %count = arith.index_cast %mismatches : index to i64
  vector.print str "elements of S that differ: "
  vector.print %count : i64
  %ok = arith.cmpi eq, %mismatches, %c0 : index
  scf.if %ok {
    vector.print str "tma wgmma: match\n"
  }
  memref.dealloc %q : memref<64x64xf16>
  memref.dealloc %k : memref<64x64xf16>
  memref.dealloc %s : memref<64x64xf32>
  return
}

// ((a i + b d) mod m - c) / 4 as f16 (exact).
func.func @quarter(%i: index, %d: index, %a: index, %b: index, %m: index, %c: index) -> f16 {
  %ai = arith.muli %a, %i : index
  %bd = arith.muli %b, %d : index
  %s = arith.addi %ai, %bd : index
  %r = arith.remui %s, %m : index
  %v = arith.subi %r, %c : index
  %vi = arith.index_cast %v : index to i32
  %vf = arith.sitofp %vi : i32 to f32
  %four = arith.constant 4.0 : f32
  %q = arith.divf %vf, %four : f32
  %h = arith.truncf %q : f32 to f16
  return %h : f16
}

