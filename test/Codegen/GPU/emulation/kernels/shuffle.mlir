// gpu.shuffle in every mode, with width 32 and smaller widths, on f32, i32
// and i64, in a block of two warps: reductions, scans and broadcasts, each
// lane's result stored and compared with what the host computes in f64 from
// the operation's definition (a lane k < width reads lane k ^ o, k + o,
// k - o or o; the read is valid if that lane is below width; lanes from
// width on get their own value, invalid). The kernel adds a shuffled value
// only where it is valid.
// RUN: rope-opt %s --rope-emulate-gpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils | FileCheck %s

// v[t] = (7 t mod 19) - 9 (f32), w[t] = (5 t mod 23) + 1 (i32),
// l[t] = t * 2^33 + t + 1 (i64: both words differ between lanes).
// CHECK: warp sums (xor, width 32): -8, -3
// CHECK: last prefix sums (up, width 32): 373, 387
// CHECK: xor width 32 sum f32: 0 mismatches
// CHECK-NEXT: xor width 8 sum f32: 0 mismatches
// CHECK-NEXT: idx width 32 lane 5 f32: 0 mismatches
// CHECK-NEXT: down width 32 suffix sum i32: 0 mismatches
// CHECK-NEXT: up width 32 prefix sum i32: 0 mismatches
// CHECK-NEXT: up width 16 prefix sum i32: 0 mismatches
// CHECK-NEXT: down width 8 offset 3 i32: 0 mismatches
// CHECK-NEXT: down width 8 offset 3 valid: 0 mismatches
// CHECK-NEXT: xor width 32 offset 1 i64: 0 mismatches
// CHECK-NEXT: match

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %c9 = arith.constant 9 : index
  %c16 = arith.constant 16 : index
  %c19 = arith.constant 19 : index
  %c23 = arith.constant 23 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %vin = memref.alloc() : memref<64xf32>
  %win = memref.alloc() : memref<64xi32>
  %lin = memref.alloc() : memref<64xi64>
  scf.for %t = %c0 to %c64 step %c1 {
    %t7 = arith.muli %t, %c7 : index
    %t7m = arith.remui %t7, %c19 : index
    %vi = arith.index_cast %t7m : index to i32
    %m9 = arith.constant -9 : i32
    %vs = arith.addi %vi, %m9 : i32
    %vf = arith.sitofp %vs : i32 to f32
    memref.store %vf, %vin[%t] : memref<64xf32>
    %t5 = arith.muli %t, %c5 : index
    %t5m = arith.remui %t5, %c23 : index
    %t5p = arith.addi %t5m, %c1 : index
    %wi = arith.index_cast %t5p : index to i32
    memref.store %wi, %win[%t] : memref<64xi32>
    %ti = arith.index_cast %t : index to i64
    %s33 = arith.constant 33 : i64
    %one = arith.constant 1 : i64
    %hi = arith.shli %ti, %s33 : i64
    %lo = arith.addi %ti, %one : i64
    %li = arith.ori %hi, %lo : i64
    memref.store %li, %lin[%t] : memref<64xi64>
  }
  %fout = memref.alloc() : memref<3x64xf32>
  %iout = memref.alloc() : memref<5x64xi32>
  %lout = memref.alloc() : memref<64xi64>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             function(@shuffles) {
    %i1 = arith.constant 1 : i32
    %i3 = arith.constant 3 : i32
    %i4 = arith.constant 4 : i32
    %i5 = arith.constant 5 : i32
    %i8 = arith.constant 8 : i32
    %i16 = arith.constant 16 : i32
    %i32 = arith.constant 32 : i32
    %fzero = arith.constant 0.0 : f32
    %izero = arith.constant 0 : i32
    %v = memref.load %vin[%tx] : memref<64xf32>
    %w = memref.load %win[%tx] : memref<64xi32>
    %l = memref.load %lin[%tx] : memref<64xi64>
    // Row 0: butterfly sum over the warp (xor 16, 8, 4, 2, 1).
    %sum32 = scf.for %k = %c0 to %c5 step %c1 iter_args(%acc = %v) -> f32 {
      %ki = arith.index_cast %k : index to i32
      %off = arith.shrui %i16, %ki : i32
      %o, %ok = gpu.shuffle xor %acc, %off, %i32 : f32
      %add = arith.select %ok, %o, %fzero : f32
      %n = arith.addf %acc, %add : f32
      scf.yield %n : f32
    }
    memref.store %sum32, %fout[%c0, %tx] : memref<3x64xf32>
    // Row 1: the same over the first 8 lanes (xor 4, 2, 1, width 8).
    %sum8 = scf.for %k = %c0 to %c3 step %c1 iter_args(%acc = %v) -> f32 {
      %ki = arith.index_cast %k : index to i32
      %off = arith.shrui %i4, %ki : i32
      %o, %ok = gpu.shuffle xor %acc, %off, %i8 : f32
      %add = arith.select %ok, %o, %fzero : f32
      %n = arith.addf %acc, %add : f32
      scf.yield %n : f32
    }
    memref.store %sum8, %fout[%c1, %tx] : memref<3x64xf32>
    // Row 2: lane 5's value to every lane.
    %bcast, %bok = gpu.shuffle idx %v, %i5, %i32 : f32
    memref.store %bcast, %fout[%c2, %tx] : memref<3x64xf32>
    // Row 3: a tree reduction down (16, 8, 4, 2, 1): lane k sums lanes k
    // to 31.
    %suffix = scf.for %k = %c0 to %c5 step %c1 iter_args(%acc = %w) -> i32 {
      %ki = arith.index_cast %k : index to i32
      %off = arith.shrui %i16, %ki : i32
      %o, %ok = gpu.shuffle down %acc, %off, %i32 : i32
      %add = arith.select %ok, %o, %izero : i32
      %n = arith.addi %acc, %add : i32
      scf.yield %n : i32
    }
    memref.store %suffix, %iout[%c0, %tx] : memref<5x64xi32>
    // Row 4: an inclusive scan up (1, 2, 4, 8, 16).
    %prefix = scf.for %k = %c0 to %c5 step %c1 iter_args(%acc = %w) -> i32 {
      %ki = arith.index_cast %k : index to i32
      %off = arith.shli %i1, %ki : i32
      %o, %ok = gpu.shuffle up %acc, %off, %i32 : i32
      %add = arith.select %ok, %o, %izero : i32
      %n = arith.addi %acc, %add : i32
      scf.yield %n : i32
    }
    memref.store %prefix, %iout[%c1, %tx] : memref<5x64xi32>
    // Row 5: the scan over the first 16 lanes.
    %prefix16 = scf.for %k = %c0 to %c4 step %c1 iter_args(%acc = %w) -> i32 {
      %ki = arith.index_cast %k : index to i32
      %off = arith.shli %i1, %ki : i32
      %o, %ok = gpu.shuffle up %acc, %off, %i16 : i32
      %add = arith.select %ok, %o, %izero : i32
      %n = arith.addi %acc, %add : i32
      scf.yield %n : i32
    }
    memref.store %prefix16, %iout[%c2, %tx] : memref<5x64xi32>
    // Rows 6 and 7: one shuffle down by 3 in width 8, its value and whether
    // it is valid.
    %down3, %down3ok = gpu.shuffle down %w, %i3, %i8 : i32
    %valid = arith.extui %down3ok : i1 to i32
    memref.store %down3, %iout[%c3, %tx] : memref<5x64xi32>
    memref.store %valid, %iout[%c4, %tx] : memref<5x64xi32>
    // Row 8: a 64-bit value from the neighbouring lane.
    %swap, %swapok = gpu.shuffle xor %l, %i1, %i32 : i64
    memref.store %swap, %lout[%tx] : memref<64xi64>
    gpu.terminator
  }
  // The results as f64 rows.
  %gpu = memref.alloc() : memref<9x64xf64>
  scf.for %t = %c0 to %c64 step %c1 {
    scf.for %r = %c0 to %c3 step %c1 {
      %x = memref.load %fout[%r, %t] : memref<3x64xf32>
      %xd = arith.extf %x : f32 to f64
      memref.store %xd, %gpu[%r, %t] : memref<9x64xf64>
    }
    scf.for %r = %c0 to %c5 step %c1 {
      %x = memref.load %iout[%r, %t] : memref<5x64xi32>
      %xd = arith.sitofp %x : i32 to f64
      %row = arith.addi %r, %c3 : index
      memref.store %xd, %gpu[%row, %t] : memref<9x64xf64>
    }
    %x = memref.load %lout[%t] : memref<64xi64>
    %xd = arith.sitofp %x : i64 to f64
    memref.store %xd, %gpu[%c8, %t] : memref<9x64xf64>
  }
  // The reference, from the definitions, in f64.
  %ref = memref.alloc() : memref<9x64xf64>
  %zero = arith.constant 0.0 : f64
  %onef = arith.constant 1.0 : f64
  scf.for %t = %c0 to %c64 step %c1 {
    %lane = arith.remui %t, %c32 : index
    %base = arith.subi %t, %lane : index
    %vt = func.call @vAt(%vin, %t) : (memref<64xf32>, index) -> f64
    %wt = func.call @wAt(%win, %t) : (memref<64xi32>, index) -> f64
    %warp = func.call @sumV(%vin, %base, %c32) : (memref<64xf32>, index, index) -> f64
    memref.store %warp, %ref[%c0, %t] : memref<9x64xf64>
    %first8 = arith.cmpi ult, %lane, %c8 : index
    %sum8 = func.call @sumV(%vin, %base, %c8) : (memref<64xf32>, index, index) -> f64
    %r1 = arith.select %first8, %sum8, %vt : f64
    memref.store %r1, %ref[%c1, %t] : memref<9x64xf64>
    %at5 = arith.addi %base, %c5 : index
    %v5 = func.call @vAt(%vin, %at5) : (memref<64xf32>, index) -> f64
    memref.store %v5, %ref[%c2, %t] : memref<9x64xf64>
    %warpEnd = arith.addi %base, %c32 : index
    %toEnd = arith.subi %warpEnd, %t : index
    %suffix = func.call @sumW(%win, %t, %toEnd) : (memref<64xi32>, index, index) -> f64
    memref.store %suffix, %ref[%c3, %t] : memref<9x64xf64>
    %upTo = arith.addi %lane, %c1 : index
    %prefix = func.call @sumW(%win, %base, %upTo) : (memref<64xi32>, index, index) -> f64
    memref.store %prefix, %ref[%c4, %t] : memref<9x64xf64>
    %first16 = arith.cmpi ult, %lane, %c16 : index
    %r5 = arith.select %first16, %prefix, %wt : f64
    memref.store %r5, %ref[%c5, %t] : memref<9x64xf64>
    %first5 = arith.cmpi ult, %lane, %c5 : index
    %at3 = arith.addi %t, %c3 : index
    // (Only lanes below 5 use it; the others clamp to stay inside.)
    %last = arith.constant 63 : index
    %at3s = arith.minui %at3, %last : index
    %w3 = func.call @wAt(%win, %at3s) : (memref<64xi32>, index) -> f64
    %r6 = arith.select %first5, %w3, %wt : f64
    memref.store %r6, %ref[%c6, %t] : memref<9x64xf64>
    %r7 = arith.select %first5, %onef, %zero : f64
    memref.store %r7, %ref[%c7, %t] : memref<9x64xf64>
    %partner = arith.xori %t, %c1 : index
    %lp = memref.load %lin[%partner] : memref<64xi64>
    %lpd = arith.sitofp %lp : i64 to f64
    memref.store %lpd, %ref[%c8, %t] : memref<9x64xf64>
  }
  %g00 = memref.load %gpu[%c0, %c0] : memref<9x64xf64>
  %c40 = arith.constant 40 : index
  %g040 = memref.load %gpu[%c0, %c40] : memref<9x64xf64>
  vector.print str "warp sums (xor, width 32): "
  vector.print %g00 : f64 punctuation <comma>
  vector.print str " "
  vector.print %g040 : f64
  %c31 = arith.constant 31 : index
  %c63 = arith.constant 63 : index
  %g431 = memref.load %gpu[%c4, %c31] : memref<9x64xf64>
  %g463 = memref.load %gpu[%c4, %c63] : memref<9x64xf64>
  vector.print str "last prefix sums (up, width 32): "
  vector.print %g431 : f64 punctuation <comma>
  vector.print str " "
  vector.print %g463 : f64
  %n0 = func.call @report(%gpu, %ref, %c0) : (memref<9x64xf64>, memref<9x64xf64>, index) -> i64
  vector.print str "xor width 32 sum f32: "
  func.call @printCount(%n0) : (i64) -> ()
  %n1 = func.call @report(%gpu, %ref, %c1) : (memref<9x64xf64>, memref<9x64xf64>, index) -> i64
  vector.print str "xor width 8 sum f32: "
  func.call @printCount(%n1) : (i64) -> ()
  %n2 = func.call @report(%gpu, %ref, %c2) : (memref<9x64xf64>, memref<9x64xf64>, index) -> i64
  vector.print str "idx width 32 lane 5 f32: "
  func.call @printCount(%n2) : (i64) -> ()
  %n3 = func.call @report(%gpu, %ref, %c3) : (memref<9x64xf64>, memref<9x64xf64>, index) -> i64
  vector.print str "down width 32 suffix sum i32: "
  func.call @printCount(%n3) : (i64) -> ()
  %n4 = func.call @report(%gpu, %ref, %c4) : (memref<9x64xf64>, memref<9x64xf64>, index) -> i64
  vector.print str "up width 32 prefix sum i32: "
  func.call @printCount(%n4) : (i64) -> ()
  %n5 = func.call @report(%gpu, %ref, %c5) : (memref<9x64xf64>, memref<9x64xf64>, index) -> i64
  vector.print str "up width 16 prefix sum i32: "
  func.call @printCount(%n5) : (i64) -> ()
  %n6 = func.call @report(%gpu, %ref, %c6) : (memref<9x64xf64>, memref<9x64xf64>, index) -> i64
  vector.print str "down width 8 offset 3 i32: "
  func.call @printCount(%n6) : (i64) -> ()
  %n7 = func.call @report(%gpu, %ref, %c7) : (memref<9x64xf64>, memref<9x64xf64>, index) -> i64
  vector.print str "down width 8 offset 3 valid: "
  func.call @printCount(%n7) : (i64) -> ()
  %n8 = func.call @report(%gpu, %ref, %c8) : (memref<9x64xf64>, memref<9x64xf64>, index) -> i64
  vector.print str "xor width 32 offset 1 i64: "
  func.call @printCount(%n8) : (i64) -> ()
  %s01 = arith.addi %n0, %n1 : i64
  %s23 = arith.addi %n2, %n3 : i64
  %s45 = arith.addi %n4, %n5 : i64
  %s67 = arith.addi %n6, %n7 : i64
  %s03 = arith.addi %s01, %s23 : i64
  %s47 = arith.addi %s45, %s67 : i64
  %s07 = arith.addi %s03, %s47 : i64
  %all = arith.addi %s07, %n8 : i64
  %none = arith.constant 0 : i64
  %ok = arith.cmpi eq, %all, %none : i64
  scf.if %ok {
    vector.print str "match\n"
  } else {
    vector.print str "mismatch\n"
  }
  memref.dealloc %vin : memref<64xf32>
  memref.dealloc %win : memref<64xi32>
  memref.dealloc %lin : memref<64xi64>
  memref.dealloc %fout : memref<3x64xf32>
  memref.dealloc %iout : memref<5x64xi32>
  memref.dealloc %lout : memref<64xi64>
  memref.dealloc %gpu : memref<9x64xf64>
  memref.dealloc %ref : memref<9x64xf64>
  return
}

func.func @vAt(%v: memref<64xf32>, %i: index) -> f64 {
  %x = memref.load %v[%i] : memref<64xf32>
  %xd = arith.extf %x : f32 to f64
  return %xd : f64
}

func.func @wAt(%w: memref<64xi32>, %i: index) -> f64 {
  %x = memref.load %w[%i] : memref<64xi32>
  %xd = arith.sitofp %x : i32 to f64
  return %xd : f64
}

// v[first] + ... + v[first + count - 1].
func.func @sumV(%v: memref<64xf32>, %first: index, %count: index) -> f64 {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %end = arith.addi %first, %count : index
  %s = scf.for %i = %first to %end step %c1 iter_args(%acc = %zero) -> f64 {
    %x = func.call @vAt(%v, %i) : (memref<64xf32>, index) -> f64
    %n = arith.addf %acc, %x : f64
    scf.yield %n : f64
  }
  return %s : f64
}

func.func @sumW(%w: memref<64xi32>, %first: index, %count: index) -> f64 {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %end = arith.addi %first, %count : index
  %s = scf.for %i = %first to %end step %c1 iter_args(%acc = %zero) -> f64 {
    %x = func.call @wAt(%w, %i) : (memref<64xi32>, index) -> f64
    %n = arith.addf %acc, %x : f64
    scf.yield %n : f64
  }
  return %s : f64
}

// The lanes where row `row` of the results differs from the reference.
func.func @report(%gpu: memref<9x64xf64>, %ref: memref<9x64xf64>, %row: index) -> i64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %n = scf.for %t = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> i64 {
    %g = memref.load %gpu[%row, %t] : memref<9x64xf64>
    %h = memref.load %ref[%row, %t] : memref<9x64xf64>
    %differ = arith.cmpf une, %g, %h : f64
    %inc = arith.select %differ, %one, %zero : i64
    %next = arith.addi %acc, %inc : i64
    scf.yield %next : i64
  }
  return %n : i64
}

func.func @printCount(%n: i64) {
  vector.print %n : i64 punctuation <no_punctuation>
  vector.print str " mismatches\n"
  return
}
