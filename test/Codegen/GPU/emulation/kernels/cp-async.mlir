// A double-buffered cp.async pipeline: one warp streams 1018 floats through
// two 128-float workgroup buffers. While it computes on chunk i, the copy
// of chunk i + 1 into the other buffer is in flight: each iteration issues
// that copy, commits it as a group, waits with numGroups = 1 (every group
// but the newest, i.e. chunk i, has landed), and the loop carries the new
// group's token to the next iteration, as software pipelining does. Each
// thread copies 16 bytes per chunk; the last chunk's tail copies fewer
// source elements (srcElements, the rest zero-filled) and the copy issued
// after the last chunk reads none. Thread t then sums (i + 1) times 4
// elements that thread t + 4 copied. The host computes the same sums from
// the input (zero past its end) in f64; all values are small integers, so
// the sums must be equal.
// RUN: rope-opt %s --rope-emulate-gpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils | FileCheck %s

// Without the wait, no copy has landed when the warp reads chunk 0:
// thread 0 reads element 16 of buffer 0, at byte 64, which nothing wrote.
// RUN: sed 's/nvgpu.device_async_wait %inFlight {numGroups = 1 : i32}/\/\/ removed/' %s | rope-opt --rope-emulate-gpu | not mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils 2>&1 | FileCheck %s --check-prefix=NOWAIT
// Waiting with numGroups = 2 leaves chunk i in flight too: the same read.
// RUN: sed 's/{numGroups = 1 : i32}/{numGroups = 2 : i32}/' %s | rope-opt --rope-emulate-gpu | not mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils 2>&1 | FileCheck %s --check-prefix=NOWAIT
// Copying the tail as whole 16-byte pieces reads past the input: thread 30
// of the last chunk copies elements 1016 to 1019 of 1018.
// RUN: sed 's/, 4, %count :/, 4 :/' %s | rope-opt --rope-emulate-gpu | not mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils 2>&1 | FileCheck %s --check-prefix=TAIL

// CHECK: gpu sums: -21, 62, -54
// CHECK: host sums: -21, 62, -54
// CHECK: cp.async: 0 of 32 sums differ
// CHECK-NEXT: match

// NOWAIT: gpu emulator: kernel 'double_buffer': uninitialised read: thread (0, 0, 0) in block (0, 0, 0) reads workgroup memory byte offset 64 (a load), which no thread has written since the block started
// TAIL: gpu emulator: kernel 'double_buffer': out-of-bounds access: thread (30, 0, 0) in block (0, 0, 0) indexes dimension 0 of a global memref at 1016, outside [0, 1018)

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c26 = arith.constant 26 : index
  %c31 = arith.constant 31 : index
  %c32 = arith.constant 32 : index
  %c1018 = arith.constant 1018 : index
  %in = memref.alloc() {alignment = 16 : i64} : memref<1018xf32>
  %out = memref.alloc() : memref<32xf32>
  // in[e] = (7 e mod 31) - 15.
  scf.for %e = %c0 to %c1018 step %c1 {
    %x = func.call @input(%e) : (index) -> f32
    memref.store %x, %in[%e] : memref<1018xf32>
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             function(@double_buffer)
             workgroup(%buf : memref<2x128xf32, #gpu.address_space<workgroup>>) {
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c128 = arith.constant 128 : index
    %zero = arith.constant 0.0 : f32
    %mine = arith.muli %tx, %c4 : index
    // Chunk 0 into buffer 0.
    %count0 = func.call @sourceCount(%mine) : (index) -> index
    %t0 = nvgpu.device_async_copy %in[%mine], %buf[%c0, %mine], 4, %count0
        : memref<1018xf32> to memref<2x128xf32, #gpu.address_space<workgroup>>
    %g0 = nvgpu.device_async_create_group %t0
    %sum, %last = scf.for %i = %c0 to %c8 step %c1
        iter_args(%acc = %zero, %inFlight = %g0) -> (f32, !nvgpu.device.async.token) {
      // Chunk i + 1 into the other buffer (past the end: nothing read).
      %next = arith.addi %i, %c1 : index
      %first = arith.muli %next, %c128 : index
      %src = arith.addi %first, %mine : index
      %count = func.call @sourceCount(%src) : (index) -> index
      %nextBuf = arith.remui %next, %c2 : index
      %t = nvgpu.device_async_copy %in[%src], %buf[%nextBuf, %mine], 4, %count : memref<1018xf32> to memref<2x128xf32, #gpu.address_space<workgroup>>
      %g = nvgpu.device_async_create_group %t
      // Chunk i has landed; chunk i + 1 may still be in flight.
      nvgpu.device_async_wait %inFlight {numGroups = 1 : i32}
      gpu.barrier
      %cur = arith.remui %i, %c2 : index
      %theirs = arith.addi %mine, %c16 : index
      %part = scf.for %k = %c0 to %c4 step %c1 iter_args(%p = %zero) -> f32 {
        %j = arith.addi %theirs, %k : index
        %jj = arith.remui %j, %c128 : index
        %x = memref.load %buf[%cur, %jj] : memref<2x128xf32, #gpu.address_space<workgroup>>
        %s = arith.addf %p, %x : f32
        scf.yield %s : f32
      }
      %ni = arith.index_cast %next : index to i32
      %w = arith.sitofp %ni : i32 to f32
      %weighted = arith.mulf %w, %part : f32
      %nacc = arith.addf %acc, %weighted : f32
      // No thread overwrites buffer `cur` (next iteration's copy) before
      // every thread has read it.
      gpu.barrier
      scf.yield %nacc, %g : f32, !nvgpu.device.async.token
    }
    nvgpu.device_async_wait %last {numGroups = 0 : i32}
    memref.store %sum, %out[%tx] : memref<32xf32>
    gpu.terminator
  }
  %o0 = memref.load %out[%c0] : memref<32xf32>
  %o26 = memref.load %out[%c26] : memref<32xf32>
  %o31 = memref.load %out[%c31] : memref<32xf32>
  vector.print str "gpu sums: "
  vector.print %o0 : f32 punctuation <comma>
  vector.print str " "
  vector.print %o26 : f32 punctuation <comma>
  vector.print str " "
  vector.print %o31 : f32
  // ref[t] = sum over chunks i of (i + 1) * sum over k < 4 of
  // x[128 i + (4 t + 16 + k) mod 128], x[e] = in[e] below 1018, else 0.
  %ref = memref.alloc() : memref<32xf64>
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c128 = arith.constant 128 : index
  %zerod = arith.constant 0.0 : f64
  scf.for %t = %c0 to %c32 step %c1 {
    %total = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zerod) -> f64 {
      %part = scf.for %k = %c0 to %c4 step %c1 iter_args(%p = %zerod) -> f64 {
        %t4 = arith.muli %t, %c4 : index
        %j0 = arith.addi %t4, %c16 : index
        %j1 = arith.addi %j0, %k : index
        %j = arith.remui %j1, %c128 : index
        %base = arith.muli %i, %c128 : index
        %e = arith.addi %base, %j : index
        %inside = arith.cmpi ult, %e, %c1018 : index
        %x = scf.if %inside -> f64 {
          %v = memref.load %in[%e] : memref<1018xf32>
          %vd = arith.extf %v : f32 to f64
          scf.yield %vd : f64
        } else {
          scf.yield %zerod : f64
        }
        %s = arith.addf %p, %x : f64
        scf.yield %s : f64
      }
      %i1 = arith.addi %i, %c1 : index
      %ii = arith.index_cast %i1 : index to i64
      %w = arith.sitofp %ii : i64 to f64
      %weighted = arith.mulf %w, %part : f64
      %n = arith.addf %acc, %weighted : f64
      scf.yield %n : f64
    }
    memref.store %total, %ref[%t] : memref<32xf64>
  }
  %r0 = memref.load %ref[%c0] : memref<32xf64>
  %r26 = memref.load %ref[%c26] : memref<32xf64>
  %r31 = memref.load %ref[%c31] : memref<32xf64>
  vector.print str "host sums: "
  vector.print %r0 : f64 punctuation <comma>
  vector.print str " "
  vector.print %r26 : f64 punctuation <comma>
  vector.print str " "
  vector.print %r31 : f64
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %bad = scf.for %t = %c0 to %c32 step %c1 iter_args(%n = %zero) -> i64 {
    %g = memref.load %out[%t] : memref<32xf32>
    %gd = arith.extf %g : f32 to f64
    %h = memref.load %ref[%t] : memref<32xf64>
    %differ = arith.cmpf une, %gd, %h : f64
    %inc = arith.select %differ, %one, %zero : i64
    %next = arith.addi %n, %inc : i64
    scf.yield %next : i64
  }
  vector.print str "cp.async: "
  vector.print %bad : i64 punctuation <no_punctuation>
  vector.print str " of 32 sums differ\n"
  %ok = arith.cmpi eq, %bad, %zero : i64
  scf.if %ok {
    vector.print str "match\n"
  } else {
    vector.print str "mismatch\n"
  }
  memref.dealloc %in : memref<1018xf32>
  memref.dealloc %out : memref<32xf32>
  memref.dealloc %ref : memref<32xf64>
  return
}

// (7 e mod 31) - 15.
func.func @input(%e: index) -> f32 {
  %c7 = arith.constant 7 : index
  %c31 = arith.constant 31 : index
  %e7 = arith.muli %e, %c7 : index
  %r = arith.remui %e7, %c31 : index
  %ri = arith.index_cast %r : index to i32
  %c15 = arith.constant 15 : i32
  %v = arith.subi %ri, %c15 : i32
  %f = arith.sitofp %v : i32 to f32
  return %f : f32
}

// How many of the 4 elements from `first` on are inside the 1018 of the
// input: clamp(1018 - first, 0, 4).
func.func @sourceCount(%first: index) -> index {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1018 = arith.constant 1018 : index
  %inside = arith.cmpi ult, %first, %c1018 : index
  %left = arith.subi %c1018, %first : index
  %upTo4 = arith.minui %left, %c4 : index
  %count = arith.select %inside, %upTo4, %c0 : index
  return %count : index
}
