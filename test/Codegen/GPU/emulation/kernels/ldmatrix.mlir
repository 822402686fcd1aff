// nvgpu.ldmatrix from workgroup memory, one warp, x1, x2 and x4, plain and
// transposed. The warp first copies a 32x16 f16 matrix S (S[i][j] = 16 i + j,
// exact in f16) into workgroup memory. For each load, lane l < 8 numTiles
// gives the address of row l % 8 of 8x8 matrix l / 8: that is row
// p(l) = (5 l + 3) mod 32 of S from column `col` (0 or 8), so matrix m is
// M_m[r][c] = S[p(8 m + r)][col + c]. Lanes from 8 numTiles on give no
// address in PTX: here they index row l + 32, outside S, which must be
// ignored. Each lane stores its registers; the host compares them with
// the PTX fragment layout: register m of lane l holds M_m[l / 4][2 (l % 4)]
// and M_m[l / 4][2 (l % 4) + 1] (plain), or M_m[2 (l % 4)][l / 4] and
// M_m[2 (l % 4) + 1][l / 4] (.trans).
// RUN: rope-opt %s --rope-emulate-gpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils | FileCheck %s

// Lane 7 of the x1 load gives row 7 + 32 too: it is one of the lanes that
// give an address, so its index is checked.
// RUN: sed 's/%hasRow1 = arith.cmpi ult, %lane, %c8 : index/%hasRow1 = arith.cmpi ult, %lane, %c7 : index/' %s | rope-opt --rope-emulate-gpu | not mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils 2>&1 | FileCheck %s --check-prefix=OOB

// Without the barrier, every lane has copied its row by the time the warp
// meets at the x1 load (fibers run until they block), but nothing orders
// those writes before the rows' reads: lane 0's row p(0) = 3 is lane 3's.
// RUN: sed 's/gpu.barrier \/\/ filled/\/\/ removed/' %s | rope-opt --rope-emulate-gpu | not mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils 2>&1 | FileCheck %s --check-prefix=RACE

// CHECK: x1 lane 5: 130, 131
// CHECK: x4 trans lane 5, matrix 3: 89, 169
// CHECK: x1: 0 mismatches
// CHECK-NEXT: x1 trans: 0 mismatches
// CHECK-NEXT: x2: 0 mismatches
// CHECK-NEXT: x2 trans: 0 mismatches
// CHECK-NEXT: x4: 0 mismatches
// CHECK-NEXT: x4 trans: 0 mismatches
// CHECK-NEXT: match

// OOB: gpu emulator: kernel 'ldmatrix': out-of-bounds access: thread (7, 0, 0) in block (0, 0, 0) indexes dimension 0 of a workgroup memref at 39, outside [0, 32)
// RACE: gpu emulator: kernel 'ldmatrix': data race: thread (0, 0, 0) in block (0, 0, 0) reads workgroup memory byte offset 96 (an ldmatrix row), which thread (3, 0, 0) in block (0, 0, 0) wrote with no barrier in between

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %s = memref.alloc() : memref<32x16xf16>
  scf.for %i = %c0 to %c32 step %c1 {
    scf.for %j = %c0 to %c16 step %c1 {
      %i16 = arith.muli %i, %c16 : index
      %v = arith.addi %i16, %j : index
      %vi = arith.index_cast %v : index to i32
      %vf = arith.sitofp %vi : i32 to f16
      memref.store %vf, %s[%i, %j] : memref<32x16xf16>
    }
  }
  // out[load][lane][2 m + e]: element e of register m.
  %out = memref.alloc() : memref<6x32x8xf16>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             function(@ldmatrix)
             workgroup(%sm : memref<32x16xf16, #gpu.address_space<workgroup>>) {
    %c7 = arith.constant 7 : index
    %lane = gpu.lane_id
    // Lane l copies row l of S.
    scf.for %j = %c0 to %c16 step %c1 {
      %v = memref.load %s[%lane, %j] : memref<32x16xf16>
      memref.store %v, %sm[%lane, %j] : memref<32x16xf16, #gpu.address_space<workgroup>>
    }
    gpu.barrier // filled
    %l5 = arith.muli %lane, %c5 : index
    %l53 = arith.addi %l5, %c3 : index
    %p = arith.remui %l53, %c32 : index
    %outside = arith.addi %lane, %c32 : index
    %hasRow1 = arith.cmpi ult, %lane, %c8 : index
    %hasRow2 = arith.cmpi ult, %lane, %c16 : index
    %row1 = arith.select %hasRow1, %p, %outside : index
    %row2 = arith.select %hasRow2, %p, %outside : index
    %x1 = nvgpu.ldmatrix %sm[%row1, %c0] {numTiles = 1 : i32, transpose = false}
        : memref<32x16xf16, #gpu.address_space<workgroup>> -> vector<1x2xf16>
    %x1t = nvgpu.ldmatrix %sm[%row1, %c8] {numTiles = 1 : i32, transpose = true}
        : memref<32x16xf16, #gpu.address_space<workgroup>> -> vector<1x2xf16>
    %x2 = nvgpu.ldmatrix %sm[%row2, %c8] {numTiles = 2 : i32, transpose = false}
        : memref<32x16xf16, #gpu.address_space<workgroup>> -> vector<2x2xf16>
    %x2t = nvgpu.ldmatrix %sm[%row2, %c0] {numTiles = 2 : i32, transpose = true}
        : memref<32x16xf16, #gpu.address_space<workgroup>> -> vector<2x2xf16>
    %x4 = nvgpu.ldmatrix %sm[%p, %c0] {numTiles = 4 : i32, transpose = false}
        : memref<32x16xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
    %x4t = nvgpu.ldmatrix %sm[%p, %c8] {numTiles = 4 : i32, transpose = true}
        : memref<32x16xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
    %f1 = vector.shape_cast %x1 : vector<1x2xf16> to vector<2xf16>
    %f1t = vector.shape_cast %x1t : vector<1x2xf16> to vector<2xf16>
    %f2 = vector.shape_cast %x2 : vector<2x2xf16> to vector<4xf16>
    %f2t = vector.shape_cast %x2t : vector<2x2xf16> to vector<4xf16>
    %f4 = vector.shape_cast %x4 : vector<4x2xf16> to vector<8xf16>
    %f4t = vector.shape_cast %x4t : vector<4x2xf16> to vector<8xf16>
    vector.store %f1, %out[%c0, %lane, %c0] : memref<6x32x8xf16>, vector<2xf16>
    vector.store %f1t, %out[%c1, %lane, %c0] : memref<6x32x8xf16>, vector<2xf16>
    vector.store %f2, %out[%c2, %lane, %c0] : memref<6x32x8xf16>, vector<4xf16>
    vector.store %f2t, %out[%c3, %lane, %c0] : memref<6x32x8xf16>, vector<4xf16>
    vector.store %f4, %out[%c4, %lane, %c0] : memref<6x32x8xf16>, vector<8xf16>
    vector.store %f4t, %out[%c5, %lane, %c0] : memref<6x32x8xf16>, vector<8xf16>
    gpu.terminator
  }
  // Two samples: lane 5 of x1 holds M_0[1][2, 3] = S[p(1)][2, 3] =
  // S[8][2, 3]; lane 5 of x4 trans, register 3, holds M_3[2, 3][1] =
  // S[p(26), p(27)][8 + 1] = S[5][9], S[10][9].
  %e0 = memref.load %out[%c0, %c5, %c0] : memref<6x32x8xf16>
  %e1 = memref.load %out[%c0, %c5, %c1] : memref<6x32x8xf16>
  %f0 = memref.load %out[%c5, %c5, %c6] : memref<6x32x8xf16>
  %c7 = arith.constant 7 : index
  %f1 = memref.load %out[%c5, %c5, %c7] : memref<6x32x8xf16>
  vector.print str "x1 lane 5: "
  vector.print %e0 : f16 punctuation <comma>
  vector.print str " "
  vector.print %e1 : f16
  vector.print str "x4 trans lane 5, matrix 3: "
  vector.print %f0 : f16 punctuation <comma>
  vector.print str " "
  vector.print %f1 : f16
  %false = arith.constant false
  %true = arith.constant true
  %n0 = func.call @check(%s, %out, %c0, %c1, %false, %c0) : (memref<32x16xf16>, memref<6x32x8xf16>, index, index, i1, index) -> i64
  vector.print str "x1: "
  func.call @printCount(%n0) : (i64) -> ()
  %n1 = func.call @check(%s, %out, %c1, %c1, %true, %c8) : (memref<32x16xf16>, memref<6x32x8xf16>, index, index, i1, index) -> i64
  vector.print str "x1 trans: "
  func.call @printCount(%n1) : (i64) -> ()
  %n2 = func.call @check(%s, %out, %c2, %c2, %false, %c8) : (memref<32x16xf16>, memref<6x32x8xf16>, index, index, i1, index) -> i64
  vector.print str "x2: "
  func.call @printCount(%n2) : (i64) -> ()
  %n3 = func.call @check(%s, %out, %c3, %c2, %true, %c0) : (memref<32x16xf16>, memref<6x32x8xf16>, index, index, i1, index) -> i64
  vector.print str "x2 trans: "
  func.call @printCount(%n3) : (i64) -> ()
  %n4 = func.call @check(%s, %out, %c4, %c4, %false, %c0) : (memref<32x16xf16>, memref<6x32x8xf16>, index, index, i1, index) -> i64
  vector.print str "x4: "
  func.call @printCount(%n4) : (i64) -> ()
  %n5 = func.call @check(%s, %out, %c5, %c4, %true, %c8) : (memref<32x16xf16>, memref<6x32x8xf16>, index, index, i1, index) -> i64
  vector.print str "x4 trans: "
  func.call @printCount(%n5) : (i64) -> ()
  %s01 = arith.addi %n0, %n1 : i64
  %s23 = arith.addi %n2, %n3 : i64
  %s45 = arith.addi %n4, %n5 : i64
  %s03 = arith.addi %s01, %s23 : i64
  %all = arith.addi %s03, %s45 : i64
  %none = arith.constant 0 : i64
  %ok = arith.cmpi eq, %all, %none : i64
  scf.if %ok {
    vector.print str "match\n"
  } else {
    vector.print str "mismatch\n"
  }
  memref.dealloc %s : memref<32x16xf16>
  memref.dealloc %out : memref<6x32x8xf16>
  return
}

// The elements of load `load` (numTiles `tiles`, transposed or not, from
// column `col`) that differ from the PTX layout, compared in f64.
func.func @check(%s: memref<32x16xf16>, %out: memref<6x32x8xf16>, %load: index,
                 %tiles: index, %trans: i1, %col: index) -> i64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %n = scf.for %l = %c0 to %c32 step %c1 iter_args(%accL = %zero) -> i64 {
    %nm = scf.for %m = %c0 to %tiles step %c1 iter_args(%accM = %accL) -> i64 {
      %ne = scf.for %e = %c0 to %c2 step %c1 iter_args(%acc = %accM) -> i64 {
        // Plain: M[l / 4][2 (l % 4) + e]; trans: M[2 (l % 4) + e][l / 4].
        %q = arith.divui %l, %c4 : index
        %r4 = arith.remui %l, %c4 : index
        %r2 = arith.muli %r4, %c2 : index
        %pe = arith.addi %r2, %e : index
        %mr = arith.select %trans, %pe, %q : index
        %mc = arith.select %trans, %q, %pe : index
        // M_m[mr][mc] = S[p(8 m + mr)][col + mc].
        %m8 = arith.muli %m, %c8 : index
        %lane = arith.addi %m8, %mr : index
        %l5 = arith.muli %lane, %c5 : index
        %l53 = arith.addi %l5, %c3 : index
        %srow = arith.remui %l53, %c32 : index
        %scol = arith.addi %col, %mc : index
        %want = memref.load %s[%srow, %scol] : memref<32x16xf16>
        %wd = arith.extf %want : f16 to f64
        %m2 = arith.muli %m, %c2 : index
        %slot = arith.addi %m2, %e : index
        %got = memref.load %out[%load, %l, %slot] : memref<6x32x8xf16>
        %gd = arith.extf %got : f16 to f64
        %differ = arith.cmpf une, %gd, %wd : f64
        %inc = arith.select %differ, %one, %zero : i64
        %next = arith.addi %acc, %inc : i64
        scf.yield %next : i64
      }
      scf.yield %ne : i64
    }
    scf.yield %nm : i64
  }
  return %n : i64
}

func.func @printCount(%n: i64) {
  vector.print %n : i64 punctuation <no_punctuation>
  vector.print str " mismatches\n"
  return
}
