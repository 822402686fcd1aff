// RUN: rope-opt %s --split-input-file --rope-prefetch-streamed-tiles | FileCheck %s

// An attention key loop after bufferization, cut down: each iteration reads
// a tile of K (4 KiB: 64 keys of 64 bytes; a transposition would read it
// first), the tile's positions (256 bytes), then a Q·Kᵀ-like register-block
// nest and a P·V-like one that reads the tile of V. The first nest prefetches
// this iteration's V tile, the second the next iteration's K tile, clamped to
// the last key; 64 lines over each nest's 64 reduction steps, one per step.
// CHECK-DAG:   #[[ROW:.+]] = affine_map<(d0, d1, d2) -> (d2 + (d0 floordiv 8) * 8 + d1 floordiv 8)>
// CHECK-DAG:   #[[NEXT:.+]] = affine_map<(d0, d1, d2) -> (d2 + (d0 floordiv 8) * 8 + d1 floordiv 8 + 64)>
// CHECK-LABEL: func.func @key_loop
// CHECK-SAME:    (%[[Q:[^:]+]]: memref<64x64xf32>, %[[K:[^:]+]]: memref<1x4x256x16xf32>, %[[V:[^:]+]]: memref<1x4x256x16xf32>, %[[POS:[^:]+]]: memref<256xi64>, %[[HEAD:[^:]+]]: index
// CHECK:         scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK:           vector.transfer_read %[[K]]
// CHECK:           vector.transfer_read %[[POS]]
// CHECK:           scf.for %[[R:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK:             scf.for %[[D:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args
// CHECK:               %[[LAST:.+]] = arith.constant 255 : index
// CHECK:               %[[A:.+]] = affine.apply #[[ROW]](%[[R]], %[[D]], %[[J]])
// CHECK-NEXT:          %[[A_IN:.+]] = arith.minsi %[[A]], %[[LAST]] : index
// CHECK:               memref.prefetch %[[V]][%{{.+}}, %[[HEAD]], %[[A_IN]], %{{.+}}], read, locality<2>, data
// CHECK-NOT:           memref.prefetch
// CHECK:             scf.for %[[R2:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK:             scf.for %[[T:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args
// CHECK:               %[[LAST2:.+]] = arith.constant 255 : index
// CHECK:               %[[B:.+]] = affine.apply #[[NEXT]](%[[R2]], %[[T]], %[[J]])
// CHECK-NEXT:          %[[B_IN:.+]] = arith.minsi %[[B]], %[[LAST2]] : index
// CHECK:               memref.prefetch %[[K]][%{{.+}}, %[[HEAD]], %[[B_IN]], %{{.+}}], read, locality<2>, data
// CHECK-NOT:           memref.prefetch
// CHECK:         return
func.func @key_loop(%q: memref<64x64xf32>, %k: memref<1x4x256x16xf32>, %v: memref<1x4x256x16xf32>, %pos: memref<256xi64>, %h: index, %kt: memref<64x16xf32>, %s: memref<64x32xf32>, %o: memref<64x32xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %f0 = arith.constant 0.0 : f32
  %i0 = arith.constant 0 : i64
  %zero = arith.constant dense<0.0> : vector<8x32xf32>
  scf.for %j = %c0 to %c256 step %c64 {
    %tile = vector.transfer_read %k[%c0, %h, %j, %c0], %f0 {in_bounds = [true, true]} : memref<1x4x256x16xf32>, vector<64x16xf32>
    vector.transfer_write %tile, %kt[%c0, %c0] {in_bounds = [true, true]} : vector<64x16xf32>, memref<64x16xf32>
    %p = vector.transfer_read %pos[%j], %i0 {in_bounds = [true]} : memref<256xi64>, vector<64xi64>
    scf.for %r = %c0 to %c64 step %c8 {
      %acc = scf.for %d = %c0 to %c64 step %c8 iter_args(%a = %zero) -> (vector<8x32xf32>) {
        %x = vector.transfer_read %q[%r, %d], %f0 {in_bounds = [true]} : memref<64x64xf32>, vector<32xf32>
        %row = vector.extract %a[0] : vector<32xf32> from vector<8x32xf32>
        %f = vector.fma %x, %x, %row : vector<32xf32>
        %n = vector.insert %f, %a[0] : vector<32xf32> into vector<8x32xf32>
        scf.yield %n : vector<8x32xf32>
      }
      vector.transfer_write %acc, %s[%r, %c0] {in_bounds = [true, true]} : vector<8x32xf32>, memref<64x32xf32>
    }
    scf.for %r = %c0 to %c64 step %c8 {
      %acc = scf.for %t = %c0 to %c64 step %c8 iter_args(%a = %zero) -> (vector<8x32xf32>) {
        %key = affine.apply affine_map<()[s0, s1] -> (s0 + s1)>()[%j, %t]
        %x = vector.transfer_read %v[%c0, %h, %key, %c0], %f0 {in_bounds = [true]} : memref<1x4x256x16xf32>, vector<16xf32>
        %y = vector.transfer_read %s[%r, %t], %f0 {in_bounds = [true]} : memref<64x32xf32>, vector<32xf32>
        %row = vector.extract %a[0] : vector<32xf32> from vector<8x32xf32>
        %f = vector.fma %y, %y, %row : vector<32xf32>
        %n = vector.insert %f, %a[0] : vector<32xf32> into vector<8x32xf32>
        scf.yield %n : vector<8x32xf32>
      }
      vector.transfer_write %acc, %o[%r, %c0] {in_bounds = [true, true]} : vector<8x32xf32>, memref<64x32xf32>
    }
  }
  return
}

// -----

// One register-block nest in a loop that streams its operand (a matmul's
// column blocks): its reduction reads the tile itself, nothing is
// prefetched; nor in a loop of two nests whose only stream is a tile of
// positions (256 bytes).
// CHECK-LABEL: func.func @no_prefetch
// CHECK-NOT:     memref.prefetch
// CHECK:         return
func.func @no_prefetch(%b: memref<256x64xf32>, %pos: memref<256xi64>, %s: memref<64x32xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %f0 = arith.constant 0.0 : f32
  %i0 = arith.constant 0 : i64
  %zero = arith.constant dense<0.0> : vector<8x32xf32>
  scf.for %j = %c0 to %c256 step %c64 {
    %acc = scf.for %t = %c0 to %c64 step %c8 iter_args(%a = %zero) -> (vector<8x32xf32>) {
      %key = arith.addi %j, %t : index
      %x = vector.transfer_read %b[%key, %c0], %f0 {in_bounds = [true]} : memref<256x64xf32>, vector<32xf32>
      %row = vector.extract %a[0] : vector<32xf32> from vector<8x32xf32>
      %f = vector.fma %x, %x, %row : vector<32xf32>
      %n = vector.insert %f, %a[0] : vector<32xf32> into vector<8x32xf32>
      scf.yield %n : vector<8x32xf32>
    }
    vector.transfer_write %acc, %s[%c0, %c0] {in_bounds = [true, true]} : vector<8x32xf32>, memref<64x32xf32>
  }
  scf.for %j = %c0 to %c256 step %c64 {
    %p = vector.transfer_read %pos[%j], %i0 {in_bounds = [true]} : memref<256xi64>, vector<64xi64>
    scf.for %r = %c0 to %c64 step %c8 {
      %acc = scf.for %d = %c0 to %c64 step %c8 iter_args(%a = %zero) -> (vector<8x32xf32>) {
        %x = vector.transfer_read %s[%r, %c0], %f0 {in_bounds = [true]} : memref<64x32xf32>, vector<32xf32>
        %row = vector.extract %a[0] : vector<32xf32> from vector<8x32xf32>
        %f = vector.fma %x, %x, %row : vector<32xf32>
        %n = vector.insert %f, %a[0] : vector<32xf32> into vector<8x32xf32>
        scf.yield %n : vector<8x32xf32>
      }
      vector.transfer_write %acc, %s[%r, %c0] {in_bounds = [true, true]} : vector<8x32xf32>, memref<64x32xf32>
    }
    scf.for %r = %c0 to %c64 step %c8 {
      %acc = scf.for %d = %c0 to %c64 step %c8 iter_args(%a = %zero) -> (vector<8x32xf32>) {
        %x = vector.transfer_read %s[%r, %c0], %f0 {in_bounds = [true]} : memref<64x32xf32>, vector<32xf32>
        %row = vector.extract %a[0] : vector<32xf32> from vector<8x32xf32>
        %f = vector.fma %x, %x, %row : vector<32xf32>
        %n = vector.insert %f, %a[0] : vector<32xf32> into vector<8x32xf32>
        scf.yield %n : vector<8x32xf32>
      }
      vector.transfer_write %acc, %s[%r, %c0] {in_bounds = [true, true]} : vector<8x32xf32>, memref<64x32xf32>
    }
  }
  return
}
