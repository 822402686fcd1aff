// A 64x64 transpose through workgroup memory: a grid of 2x2 blocks of 32x8
// threads, each block moving one 32x32 tile. Every thread stores four rows
// of the tile and, after the barrier, reads four columns of it, i.e.
// elements that other threads stored. The host transposes the same matrix
// in f64 and counts the elements that differ.
// RUN: rope-opt %s --rope-emulate-gpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils | FileCheck %s

// One host thread runs the blocks (ROPE_GPU_EMU_THREADS=1), in order, so the
// first error is always block (0, 0, 0)'s.
//
// Without the barrier, thread (0, 0) reads tile[0][8] before thread (8, 0)
// stored it: an uninitialised read of byte 8 * 4.
// RUN: sed 's/gpu.barrier \/\/ tile/\/\/ removed/' %s | rope-opt --rope-emulate-gpu | env ROPE_GPU_EMU_THREADS=1 not mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils 2>&1 | FileCheck %s --check-prefix=UNINIT
//
// A store one row too far down: thread (0, 7) stores row 7 + 24 + 1 = 32 of
// the 32-row tile, one past its end.
// RUN: sed '/\/\/ store/s/%row,/%below,/' %s | rope-opt --rope-emulate-gpu | env ROPE_GPU_EMU_THREADS=1 not mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils 2>&1 | FileCheck %s --check-prefix=OOB
//
// Two barriers, one in each branch of an if that splits the block in half
// (%upper: ty < 4): every thread waits, but not at the same barrier (the
// pass numbers each gpu.barrier, the then-branch's 0, the else-branch's 1).
// RUN: sed 's/gpu.barrier \/\/ tile/scf.if %upper { gpu.barrier } else { gpu.barrier }/' %s | rope-opt --rope-emulate-gpu | env ROPE_GPU_EMU_THREADS=1 not mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils 2>&1 | FileCheck %s --check-prefix=SITES
//
// A barrier inside a branch that only half the block (ty < 4) takes; the
// other half skips the reads too and returns.
// RUN: sed 's/gpu.barrier \/\/ tile/scf.if %upper { gpu.barrier }\n scf.if %upper {/; s/^    } \/\/ end of reads/    }}/' %s | rope-opt --rope-emulate-gpu | env ROPE_GPU_EMU_THREADS=1 not mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils 2>&1 | FileCheck %s --check-prefix=DIVERGE

// CHECK: gpu out[0][1] = 64, out[1][0] = 1, out[63][62] = 4031
// CHECK: host out[0][1] = 64, out[1][0] = 1, out[63][62] = 4031
// CHECK: transpose: 0 of 4096 elements differ
// CHECK-NEXT: match

// UNINIT: gpu emulator: kernel 'transpose': uninitialised read: thread (0, 0, 0) in block (0, 0, 0) reads workgroup memory byte offset 32 (a load), which no thread has written since the block started
// OOB: gpu emulator: kernel 'transpose': out-of-bounds access: thread (0, 7, 0) in block (0, 0, 0) indexes dimension 0 of a workgroup memref at 32, outside [0, 32)
// SITES: gpu emulator: kernel 'transpose': divergent barrier: thread (0, 0, 0) in block (0, 0, 0) waits at barrier 0, thread (0, 4, 0) in block (0, 0, 0) at barrier 1
// DIVERGE: gpu emulator: kernel 'transpose': divergent barrier: thread (0, 0, 0) in block (0, 0, 0) waits at a barrier that thread (0, 4, 0) in block (0, 0, 0) never reaches (it returned)

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c62 = arith.constant 62 : index
  %c63 = arith.constant 63 : index
  %c64 = arith.constant 64 : index
  %in = memref.alloc() : memref<64x64xf32>
  %out = memref.alloc() : memref<64x64xf32>
  // in[i][j] = 64 i + j, exact in f32.
  scf.for %i = %c0 to %c64 step %c1 {
    scf.for %j = %c0 to %c64 step %c1 {
      %ij = arith.muli %i, %c64 : index
      %v = arith.addi %ij, %j : index
      %vi = arith.index_cast %v : index to i32
      %vf = arith.sitofp %vi : i32 to f32
      memref.store %vf, %in[%i, %j] : memref<64x64xf32>
    }
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c2, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c8, %sz = %c1)
             function(@transpose)
             workgroup(%tile : memref<32x33xf32, #gpu.address_space<workgroup>>) {
    // The tile has a padding column, as bank-conflict-free transposes do.
    %x0 = arith.muli %bx, %c32 : index
    %y0 = arith.muli %by, %c32 : index
    %upper = arith.cmpi ult, %ty, %c4 : index
    // tile[r][tx] = in[y0 + r][x0 + tx] for the rows r = ty + 8 k.
    scf.for %k = %c0 to %c4 step %c1 {
      %r8 = arith.muli %k, %c8 : index
      %row = arith.addi %ty, %r8 : index
      %iy = arith.addi %y0, %row : index
      %ix = arith.addi %x0, %tx : index
      %v = memref.load %in[%iy, %ix] : memref<64x64xf32>
      %below = arith.addi %row, %c1 : index
      memref.store %v, %tile[%row, %tx] : memref<32x33xf32, #gpu.address_space<workgroup>> // store
    }
    gpu.barrier // tile
    // out[x0 + r][y0 + tx] = tile[tx][r] = in[y0 + tx][x0 + r].
    scf.for %k = %c0 to %c4 step %c1 {
      %r8 = arith.muli %k, %c8 : index
      %col = arith.addi %ty, %r8 : index
      %v = memref.load %tile[%tx, %col] : memref<32x33xf32, #gpu.address_space<workgroup>>
      %oy = arith.addi %x0, %col : index
      %ox = arith.addi %y0, %tx : index
      memref.store %v, %out[%oy, %ox] : memref<64x64xf32>
    } // end of reads
    gpu.terminator
  }
  %g01 = memref.load %out[%c0, %c1] : memref<64x64xf32>
  %g10 = memref.load %out[%c1, %c0] : memref<64x64xf32>
  %g6362 = memref.load %out[%c63, %c62] : memref<64x64xf32>
  vector.print str "gpu out[0][1] = "
  vector.print %g01 : f32 punctuation <comma>
  vector.print str " out[1][0] = "
  vector.print %g10 : f32 punctuation <comma>
  vector.print str " out[63][62] = "
  vector.print %g6362 : f32
  // The reference: ref[i][j] = in[j][i], in f64.
  %ref = memref.alloc() : memref<64x64xf64>
  scf.for %i = %c0 to %c64 step %c1 {
    scf.for %j = %c0 to %c64 step %c1 {
      %v = memref.load %in[%j, %i] : memref<64x64xf32>
      %vd = arith.extf %v : f32 to f64
      memref.store %vd, %ref[%i, %j] : memref<64x64xf64>
    }
  }
  %h01 = memref.load %ref[%c0, %c1] : memref<64x64xf64>
  %h10 = memref.load %ref[%c1, %c0] : memref<64x64xf64>
  %h6362 = memref.load %ref[%c63, %c62] : memref<64x64xf64>
  vector.print str "host out[0][1] = "
  vector.print %h01 : f64 punctuation <comma>
  vector.print str " out[1][0] = "
  vector.print %h10 : f64 punctuation <comma>
  vector.print str " out[63][62] = "
  vector.print %h6362 : f64
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %bad = scf.for %i = %c0 to %c64 step %c1 iter_args(%n = %zero) -> i64 {
    %row = scf.for %j = %c0 to %c64 step %c1 iter_args(%m = %n) -> i64 {
      %g = memref.load %out[%i, %j] : memref<64x64xf32>
      %gd = arith.extf %g : f32 to f64
      %h = memref.load %ref[%i, %j] : memref<64x64xf64>
      %differ = arith.cmpf une, %gd, %h : f64
      %inc = arith.select %differ, %one, %zero : i64
      %next = arith.addi %m, %inc : i64
      scf.yield %next : i64
    }
    scf.yield %row : i64
  }
  vector.print str "transpose: "
  vector.print %bad : i64 punctuation <no_punctuation>
  vector.print str " of 4096 elements differ\n"
  %ok = arith.cmpi eq, %bad, %zero : i64
  scf.if %ok {
    vector.print str "match\n"
  } else {
    vector.print str "mismatch\n"
  }
  memref.dealloc %in : memref<64x64xf32>
  memref.dealloc %out : memref<64x64xf32>
  memref.dealloc %ref : memref<64x64xf64>
  return
}
