// Named barriers between warpgroups, as warp-specialised kernels order their
// roles: warpgroup 0 writes its values to workgroup memory and arrives at
// barrier 1 for 256 threads (nvvm.barrier.arrive, no wait); warpgroup 1
// waits there (nvvm.barrier) and reads them back reversed, with no
// block-wide barrier in between. Without the arrival warpgroup 1 would wait
// for ever (the emulator reports the deadlock); without the wait its reads
// race with the writes.
// RUN: rope-opt %s --rope-emulate-gpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils | FileCheck %s
// RUN: sed '/nvvm.barrier.arrive/d' %s | rope-opt --rope-emulate-gpu | not mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils 2>&1 | FileCheck %s --check-prefix=DEADLOCK
// RUN: sed '/nvvm.barrier id/d' %s | rope-opt --rope-emulate-gpu | not mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils 2>&1 | FileCheck %s --check-prefix=RACE

// CHECK: values that differ: 0
// DEADLOCK: gpu emulator: kernel 'main_kernel0': deadlock: every thread of the block waits and nothing in flight can wake one: warp 0: threads 0-31 returned;{{.*}}; warp 4: threads 128-159 wait at named barrier 1;
// RACE: gpu emulator: kernel 'main_kernel0': data race: thread (128, 0, 0) in block (0, 0, 0) reads workgroup memory byte offset 508 (a load), which thread (127, 0, 0) in block (0, 0, 0) wrote with no barrier or mbarrier wait in between

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %out = memref.alloc() : memref<128xi32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1)
             workgroup(%data : memref<128xi32, #gpu.address_space<workgroup>>) {
    %one = arith.constant 1 : i32
    %count = arith.constant 256 : i32
    %five = arith.constant 5 : i32
    %n128 = arith.constant 128 : index
    %n127 = arith.constant 127 : index
    %producer = arith.cmpi ult, %tx, %n128 : index
    scf.if %producer {
      %t = arith.index_cast %tx : index to i32
      %v = arith.muli %t, %five : i32
      memref.store %v, %data[%tx] : memref<128xi32, #gpu.address_space<workgroup>>
      nvvm.barrier.arrive id = %one number_of_threads = %count
    } else {
      nvvm.barrier id = %one number_of_threads = %count
      %i = arith.subi %tx, %n128 : index
      %j = arith.subi %n127, %i : index
      %v = memref.load %data[%j] : memref<128xi32, #gpu.address_space<workgroup>>
      memref.store %v, %out[%i] : memref<128xi32>
    }
    gpu.terminator
  }
  // out[i] must be 5 (127 - i).
  %five = arith.constant 5 : i32
  %c127 = arith.constant 127 : index
  %bad = scf.for %i = %c0 to %c128 step %c1 iter_args(%b = %c0) -> (index) {
    %got = memref.load %out[%i] : memref<128xi32>
    %r = arith.subi %c127, %i : index
    %ri = arith.index_cast %r : index to i32
    %want = arith.muli %ri, %five : i32
    %same = arith.cmpi eq, %got, %want : i32
    %inc = arith.select %same, %c0, %c1 : index
    %nb = arith.addi %b, %inc : index
    scf.yield %nb : index
  }
  %count = arith.index_cast %bad : index to i64
  vector.print str "values that differ: "
  vector.print %count : i64
  memref.dealloc %out : memref<128xi32>
  return
}
