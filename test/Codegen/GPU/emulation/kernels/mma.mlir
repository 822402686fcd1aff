// nvgpu.mma.sync on one warp: D = A * B + C for a 16x8 tile, m16n8k16 with
// f16 inputs (and, through sed, bf16 inputs) and m16n8k8 with tf32 inputs,
// f32 accumulators. Each lane builds its fragments from global memory with
// the PTX layouts (groupID = lane / 4, threadID_in_group = lane % 4):
//   A (m16n8k16): register r holds A[groupID + 8 (r % 2)][2 tig + 8 (r / 2)]
//                 and the next column;
//   B (m16n8k16): register r holds B[2 tig + 8 r][groupID] and the next row;
//   C, D:         register r holds C[groupID + 8 r][2 tig] and the next column;
//   A (m16n8k8 tf32): a_i = A[groupID + 8 (i % 2)][tig + 4 (i / 2)];
//   B (m16n8k8 tf32): b_i = B[tig + 4 i][groupID].
// The host computes every element of D in f64 from the same rounded inputs
// (f16/bf16 as rounded by truncf; tf32 as the tensor core reads an f32: its
// low 13 mantissa bits dropped) and counts elements off by more than 1e-5
// (the f32 rounding of 16 additions of sums below 8 stays under 8e-6; the
// runtime's adds in increasing k, a GPU in its own order, within the same
// bound).
// RUN: rope-opt %s --rope-emulate-gpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils | FileCheck %s
// RUN: sed 's/f16/bf16/g' %s | rope-opt --rope-emulate-gpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils | FileCheck %s --check-prefix=BF16

// A wrong fragment index: lane l puts A row groupID (not groupID + 8) into
// register 1, so rows 8 to 15 of D get rows 0 to 7's products for k < 8
// (and rows 0 to 7 stay right).
// RUN: sed '/\/\/ a1$/s/%rowHi/%rowLo/' %s | rope-opt --rope-emulate-gpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils | FileCheck %s --check-prefix=WRONG

// CHECK: f16: 0 of 128 elements differ by more than 1e-5
// CHECK-NEXT: f16: match
// CHECK: tf32: 0 of 128 elements differ by more than 1e-5
// CHECK-NEXT: tf32: match

// BF16: bf16: 0 of 128 elements differ by more than 1e-5
// BF16-NEXT: bf16: match
// BF16: tf32: 0 of 128 elements differ by more than 1e-5
// BF16-NEXT: tf32: match

// WRONG: f16: first difference at D[8][0]: 2.504, expected -1.21027
// WRONG-NEXT: f16: 64 of 128 elements differ by more than 1e-5
// WRONG-NEXT: f16: mismatch
// WRONG: tf32: 0 of 128 elements differ by more than 1e-5
// WRONG-NEXT: tf32: match

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %c11 = arith.constant 11 : index
  %c13 = arith.constant 13 : index
  %c19 = arith.constant 19 : index
  %c23 = arith.constant 23 : index
  %five = arith.constant 5.0 : f32
  %seven = arith.constant 7.0 : f32
  %nine = arith.constant 9.0 : f32
  %a = memref.alloc() : memref<16x16xf16>
  %b = memref.alloc() : memref<16x8xf16>
  %a32 = memref.alloc() : memref<16x8xf32>
  %b32 = memref.alloc() : memref<8x8xf32>
  %c = memref.alloc() : memref<16x8xf32>
  %d = memref.alloc() : memref<16x8xf32>
  %d32 = memref.alloc() : memref<16x8xf32>
  // A[m][k] = ((13 m + 7 k) mod 23 - 11) / 9, B[k][n] = ((5 k + 11 n) mod
  // 19 - 9) / 7, C[m][n] = ((m + 3 n) mod 7 - 3) / 5: not exact in f16,
  // bf16 or tf32, so the rounding of the inputs matters.
  scf.for %m = %c0 to %c16 step %c1 {
    scf.for %k = %c0 to %c16 step %c1 {
      %x = func.call @pattern(%m, %k, %c13, %c7, %c23, %nine) : (index, index, index, index, index, f32) -> f32
      %x16 = arith.truncf %x : f32 to f16
      memref.store %x16, %a[%m, %k] : memref<16x16xf16>
      %inK8 = arith.cmpi ult, %k, %c8 : index
      scf.if %inK8 {
        memref.store %x, %a32[%m, %k] : memref<16x8xf32>
      }
    }
  }
  scf.for %k = %c0 to %c16 step %c1 {
    scf.for %n = %c0 to %c8 step %c1 {
      %x = func.call @pattern(%k, %n, %c5, %c11, %c19, %seven) : (index, index, index, index, index, f32) -> f32
      %x16 = arith.truncf %x : f32 to f16
      memref.store %x16, %b[%k, %n] : memref<16x8xf16>
      %inK8 = arith.cmpi ult, %k, %c8 : index
      scf.if %inK8 {
        memref.store %x, %b32[%k, %n] : memref<8x8xf32>
      }
    }
  }
  scf.for %m = %c0 to %c16 step %c1 {
    scf.for %n = %c0 to %c8 step %c1 {
      %x = func.call @pattern(%m, %n, %c1, %c3, %c7, %five) : (index, index, index, index, index, f32) -> f32
      memref.store %x, %c[%m, %n] : memref<16x8xf32>
    }
  }
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             function(@mma_f16) {
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %lane = gpu.lane_id
    %group = arith.divui %lane, %c4 : index
    %tig = arith.remui %lane, %c4 : index
    %rowLo = arith.addi %group, %c0 : index
    %rowHi = arith.addi %group, %c8 : index
    %colLo = arith.muli %tig, %c2 : index
    %colHi = arith.addi %colLo, %c8 : index
    %colLo1 = arith.addi %colLo, %c1 : index
    %colHi1 = arith.addi %colHi, %c1 : index
    // A: four registers of two consecutive elements of a row.
    %a0 = vector.load %a[%rowLo, %colLo] : memref<16x16xf16>, vector<2xf16>
    %a1 = vector.load %a[%rowHi, %colLo] : memref<16x16xf16>, vector<2xf16> // a1
    %a2 = vector.load %a[%rowLo, %colHi] : memref<16x16xf16>, vector<2xf16>
    %a3 = vector.load %a[%rowHi, %colHi] : memref<16x16xf16>, vector<2xf16>
    %a01 = vector.shuffle %a0, %a1 [0, 1, 2, 3] : vector<2xf16>, vector<2xf16>
    %a23 = vector.shuffle %a2, %a3 [0, 1, 2, 3] : vector<2xf16>, vector<2xf16>
    %aFlat = vector.shuffle %a01, %a23 [0, 1, 2, 3, 4, 5, 6, 7] : vector<4xf16>, vector<4xf16>
    %aFrag = vector.shape_cast %aFlat : vector<8xf16> to vector<4x2xf16>
    // B: two registers of two consecutive rows (k) of column groupID.
    %b0 = memref.load %b[%colLo, %group] : memref<16x8xf16>
    %b1 = memref.load %b[%colLo1, %group] : memref<16x8xf16>
    %b2 = memref.load %b[%colHi, %group] : memref<16x8xf16>
    %b3 = memref.load %b[%colHi1, %group] : memref<16x8xf16>
    %bFlat = vector.from_elements %b0, %b1, %b2, %b3 : vector<4xf16>
    %bFrag = vector.shape_cast %bFlat : vector<4xf16> to vector<2x2xf16>
    // C: two registers of two consecutive elements of a row.
    %cLo = vector.load %c[%rowLo, %colLo] : memref<16x8xf32>, vector<2xf32>
    %cHi = vector.load %c[%rowHi, %colLo] : memref<16x8xf32>, vector<2xf32>
    %cFlat = vector.shuffle %cLo, %cHi [0, 1, 2, 3] : vector<2xf32>, vector<2xf32>
    %cFrag = vector.shape_cast %cFlat : vector<4xf32> to vector<2x2xf32>
    %dFrag = nvgpu.mma.sync (%aFrag, %bFrag, %cFrag) {mmaShape = [16, 8, 16]}
        : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
    %dLo = vector.extract %dFrag[0] : vector<2xf32> from vector<2x2xf32>
    %dHi = vector.extract %dFrag[1] : vector<2xf32> from vector<2x2xf32>
    vector.store %dLo, %d[%rowLo, %colLo] : memref<16x8xf32>, vector<2xf32>
    vector.store %dHi, %d[%rowHi, %colLo] : memref<16x8xf32>, vector<2xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             function(@mma_tf32) {
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %lane = gpu.lane_id
    %group = arith.divui %lane, %c4 : index
    %tig = arith.remui %lane, %c4 : index
    %rowHi = arith.addi %group, %c8 : index
    %tig4 = arith.addi %tig, %c4 : index
    %colLo = arith.muli %tig, %c2 : index
    // A: a_i = A[groupID + 8 (i % 2)][tig + 4 (i / 2)].
    %x0 = memref.load %a32[%group, %tig] : memref<16x8xf32>
    %x1 = memref.load %a32[%rowHi, %tig] : memref<16x8xf32>
    %x2 = memref.load %a32[%group, %tig4] : memref<16x8xf32>
    %x3 = memref.load %a32[%rowHi, %tig4] : memref<16x8xf32>
    %aFlat = vector.from_elements %x0, %x1, %x2, %x3 : vector<4xf32>
    %aFrag = vector.shape_cast %aFlat : vector<4xf32> to vector<4x1xf32>
    // B: b_i = B[tig + 4 i][groupID].
    %y0 = memref.load %b32[%tig, %group] : memref<8x8xf32>
    %y1 = memref.load %b32[%tig4, %group] : memref<8x8xf32>
    %bFlat = vector.from_elements %y0, %y1 : vector<2xf32>
    %bFrag = vector.shape_cast %bFlat : vector<2xf32> to vector<2x1xf32>
    %cLo = vector.load %c[%group, %colLo] : memref<16x8xf32>, vector<2xf32>
    %cHi = vector.load %c[%rowHi, %colLo] : memref<16x8xf32>, vector<2xf32>
    %cFlat = vector.shuffle %cLo, %cHi [0, 1, 2, 3] : vector<2xf32>, vector<2xf32>
    %cFrag = vector.shape_cast %cFlat : vector<4xf32> to vector<2x2xf32>
    %dFrag = nvgpu.mma.sync (%aFrag, %bFrag, %cFrag) {mmaShape = [16, 8, 8], tf32Enabled}
        : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
    %dLo = vector.extract %dFrag[0] : vector<2xf32> from vector<2x2xf32>
    %dHi = vector.extract %dFrag[1] : vector<2xf32> from vector<2x2xf32>
    vector.store %dLo, %d32[%group, %colLo] : memref<16x8xf32>, vector<2xf32>
    vector.store %dHi, %d32[%rowHi, %colLo] : memref<16x8xf32>, vector<2xf32>
    gpu.terminator
  }
  // The references, in f64: ref[m][n] = C[m][n] + sum_k A[m][k] B[k][n].
  %ref = memref.alloc() : memref<16x8xf64>
  %ref32 = memref.alloc() : memref<16x8xf64>
  %zero = arith.constant 0.0 : f64
  scf.for %m = %c0 to %c16 step %c1 {
    scf.for %n = %c0 to %c8 step %c1 {
      %cmn = memref.load %c[%m, %n] : memref<16x8xf32>
      %start = arith.extf %cmn : f32 to f64
      %s = scf.for %k = %c0 to %c16 step %c1 iter_args(%acc = %start) -> f64 {
        %x = memref.load %a[%m, %k] : memref<16x16xf16>
        %y = memref.load %b[%k, %n] : memref<16x8xf16>
        %xd = arith.extf %x : f16 to f64
        %yd = arith.extf %y : f16 to f64
        %p = arith.mulf %xd, %yd : f64
        %next = arith.addf %acc, %p : f64
        scf.yield %next : f64
      }
      memref.store %s, %ref[%m, %n] : memref<16x8xf64>
      %s32 = scf.for %k = %c0 to %c8 step %c1 iter_args(%acc = %start) -> f64 {
        %x = memref.load %a32[%m, %k] : memref<16x8xf32>
        %y = memref.load %b32[%k, %n] : memref<8x8xf32>
        %xd = func.call @tf32(%x) : (f32) -> f64
        %yd = func.call @tf32(%y) : (f32) -> f64
        %p = arith.mulf %xd, %yd : f64
        %next = arith.addf %acc, %p : f64
        scf.yield %next : f64
      }
      memref.store %s32, %ref32[%m, %n] : memref<16x8xf64>
    }
  }
  %f16 = arith.constant 0 : i32
  %tf32 = arith.constant 1 : i32
  func.call @compare(%f16, %d, %ref) : (i32, memref<16x8xf32>, memref<16x8xf64>) -> ()
  func.call @compare(%tf32, %d32, %ref32) : (i32, memref<16x8xf32>, memref<16x8xf64>) -> ()
  memref.dealloc %a : memref<16x16xf16>
  memref.dealloc %b : memref<16x8xf16>
  memref.dealloc %a32 : memref<16x8xf32>
  memref.dealloc %b32 : memref<8x8xf32>
  memref.dealloc %c : memref<16x8xf32>
  memref.dealloc %d : memref<16x8xf32>
  memref.dealloc %d32 : memref<16x8xf32>
  memref.dealloc %ref : memref<16x8xf64>
  memref.dealloc %ref32 : memref<16x8xf64>
  return
}

// ((i * fi + j * fj) mod mod - mod / 2) / div, in f32.
func.func @pattern(%i: index, %j: index, %fi: index, %fj: index, %mod: index, %div: f32) -> f32 {
  %c2 = arith.constant 2 : index
  %ii = arith.muli %i, %fi : index
  %jj = arith.muli %j, %fj : index
  %sum = arith.addi %ii, %jj : index
  %r = arith.remui %sum, %mod : index
  %half = arith.divui %mod, %c2 : index
  %ri = arith.index_cast %r : index to i32
  %hi = arith.index_cast %half : index to i32
  %centered = arith.subi %ri, %hi : i32
  %x = arith.sitofp %centered : i32 to f32
  %y = arith.divf %x, %div : f32
  return %y : f32
}

// An f32 as an mma.sync .tf32 operand reads it: without its low 13 bits.
func.func @tf32(%x: f32) -> f64 {
  %bits = arith.bitcast %x : f32 to i32
  %mask = arith.constant -8192 : i32
  %kept = arith.andi %bits, %mask : i32
  %y = arith.bitcast %kept : i32 to f32
  %yd = arith.extf %y : f32 to f64
  return %yd : f64
}

// "f16" for 0, "tf32" for 1: the start of each line of a comparison.
func.func @label(%which: i32) {
  %zero = arith.constant 0 : i32
  %isF16 = arith.cmpi eq, %which, %zero : i32
  scf.if %isF16 {
    vector.print str "f16"
  } else {
    vector.print str "tf32"
  }
  return
}

// Prints the first element of `d` off from `ref` by more than 1e-5 (if
// any), how many are, and match or mismatch.
func.func @compare(%which: i32, %d: memref<16x8xf32>, %ref: memref<16x8xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %true = arith.constant true
  %tolerance = arith.constant 1.0e-5 : f64
  %bad = scf.for %m = %c0 to %c16 step %c1 iter_args(%acc = %zero) -> i64 {
    %row = scf.for %n = %c0 to %c8 step %c1 iter_args(%count = %acc) -> i64 {
      %g = memref.load %d[%m, %n] : memref<16x8xf32>
      %gd = arith.extf %g : f32 to f64
      %h = memref.load %ref[%m, %n] : memref<16x8xf64>
      %diff = arith.subf %gd, %h : f64
      %err = math.absf %diff : f64
      // NaN counts as off.
      %within = arith.cmpf ole, %err, %tolerance : f64
      %off = arith.xori %within, %true : i1
      %first = arith.cmpi eq, %count, %zero : i64
      %report = arith.andi %off, %first : i1
      scf.if %report {
        func.call @label(%which) : (i32) -> ()
        vector.print str ": first difference at D["
        vector.print %m : index punctuation <no_punctuation>
        vector.print str "]["
        vector.print %n : index punctuation <no_punctuation>
        vector.print str "]: "
        vector.print %g : f32 punctuation <comma>
        vector.print str " expected "
        vector.print %h : f64
      }
      %inc = arith.select %off, %one, %zero : i64
      %next = arith.addi %count, %inc : i64
      scf.yield %next : i64
    }
    scf.yield %row : i64
  }
  func.call @label(%which) : (i32) -> ()
  vector.print str ": "
  vector.print %bad : i64 punctuation <no_punctuation>
  vector.print str " of 128 elements differ by more than 1e-5\n"
  func.call @label(%which) : (i32) -> ()
  %ok = arith.cmpi eq, %bad, %zero : i64
  scf.if %ok {
    vector.print str ": match\n"
  } else {
    vector.print str ": mismatch\n"
  }
  return
}
