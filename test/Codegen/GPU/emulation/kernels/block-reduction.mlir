// A tree reduction through workgroup memory, two blocks of 256 threads:
// each step reads what other threads wrote before the barrier. The host
// computes the same sums in f64 (exact here) as the reference.
// RUN: rope-opt %s --rope-emulate-gpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils | FileCheck %s

// Without the barrier that ends each step, thread 0 runs all eight steps
// at once, reading shared[1] in the last, before thread 1 stores its step
// one sum there: the race checker names both threads and the byte.
// Without the barrier after the first store, thread 0 reads an element its
// neighbour has not stored yet: an uninitialised read. One host thread runs
// the blocks (ROPE_GPU_EMU_THREADS=1), in order, so the first error is
// always block 0's.
// RUN: sed 's/gpu.barrier \/\/ step/\/\/ removed/' %s | rope-opt --rope-emulate-gpu | env ROPE_GPU_EMU_THREADS=1 not mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils 2>&1 | FileCheck %s --check-prefix=RACE
// RUN: sed 's/gpu.barrier \/\/ first/\/\/ removed/' %s | rope-opt --rope-emulate-gpu | env ROPE_GPU_EMU_THREADS=1 not mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils 2>&1 | FileCheck %s --check-prefix=UNINIT

// CHECK: gpu sums: 32640, 98176
// CHECK: host sums: 32640, 98176
// RACE: gpu emulator: kernel 'block_sum': data race: thread (1, 0, 0) in block (0, 0, 0) writes workgroup memory byte offset 4 (a store), which thread (0, 0, 0) in block (0, 0, 0) read with no barrier in between
// UNINIT: gpu emulator: kernel 'block_sum': uninitialised read: thread (0, 0, 0) in block (0, 0, 0) reads workgroup memory byte offset 512

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %c512 = arith.constant 512 : index
  %in = memref.alloc() : memref<512xf32>
  %out = memref.alloc() : memref<2xf32>
  scf.for %i = %c0 to %c512 step %c1 {
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    memref.store %f, %in[%i] : memref<512xf32>
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1)
             function(@block_sum)
             workgroup(%shared : memref<256xf32, #gpu.address_space<workgroup>>) {
    %base = arith.muli %bx, %c256 : index
    %g = arith.addi %base, %tx : index
    %v = memref.load %in[%g] : memref<512xf32>
    memref.store %v, %shared[%tx] : memref<256xf32, #gpu.address_space<workgroup>>
    gpu.barrier // first
    scf.for %step = %c0 to %c8 step %c1 {
      %stride = arith.shrui %c128, %step : index
      %active = arith.cmpi ult, %tx, %stride : index
      scf.if %active {
        %other = arith.addi %tx, %stride : index
        %a = memref.load %shared[%tx] : memref<256xf32, #gpu.address_space<workgroup>>
        %b = memref.load %shared[%other] : memref<256xf32, #gpu.address_space<workgroup>>
        %s = arith.addf %a, %b : f32
        memref.store %s, %shared[%tx] : memref<256xf32, #gpu.address_space<workgroup>>
      }
      gpu.barrier // step
    }
    %first = arith.cmpi eq, %tx, %c0 : index
    scf.if %first {
      %sum = memref.load %shared[%c0] : memref<256xf32, #gpu.address_space<workgroup>>
      memref.store %sum, %out[%bx] : memref<2xf32>
    }
    gpu.terminator
  }
  %s0 = memref.load %out[%c0] : memref<2xf32>
  %s1 = memref.load %out[%c1] : memref<2xf32>
  vector.print str "gpu sums: "
  vector.print %s0 : f32 punctuation <comma>
  vector.print str " "
  vector.print %s1 : f32
  // The reference: the same sums on the host, in f64.
  %zero = arith.constant 0.0 : f64
  %h0 = scf.for %i = %c0 to %c256 step %c1 iter_args(%acc = %zero) -> f64 {
    %x = memref.load %in[%i] : memref<512xf32>
    %xd = arith.extf %x : f32 to f64
    %n = arith.addf %acc, %xd : f64
    scf.yield %n : f64
  }
  %h1 = scf.for %i = %c256 to %c512 step %c1 iter_args(%acc = %zero) -> f64 {
    %x = memref.load %in[%i] : memref<512xf32>
    %xd = arith.extf %x : f32 to f64
    %n = arith.addf %acc, %xd : f64
    scf.yield %n : f64
  }
  vector.print str "host sums: "
  vector.print %h0 : f64 punctuation <comma>
  vector.print str " "
  vector.print %h1 : f64
  memref.dealloc %in : memref<512xf32>
  memref.dealloc %out : memref<2xf32>
  return
}
