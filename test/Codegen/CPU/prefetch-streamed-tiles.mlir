// RUN: rope-opt %s --split-input-file --rope-prefetch-streamed-tiles | FileCheck %s

// An attention key loop after bufferization, cut down: each iteration reads
// a tile of K (4 KiB: 64 keys of 64 bytes; a transposition would read it
// first), the tile's positions (256 bytes), then a Q·Kᵀ-like register-block
// nest and a P·V-like one that reads the tile of V. The first nest prefetches
// this iteration's V tile, the second the next iteration's K tile, clamped to
// the last key; 64 lines over each nest's 64 reduction steps, one per step.
// The key of the line (row block r, step d, tile j): j + (8 (r / 8) + d / 8)
// mod 64 (j + 64 + ... for the next tile).
// CHECK-DAG:   #[[ROW:.+]] = affine_map<(d0, d1, d2) -> (d2 + (d0 floordiv 8) * 8 + d1 floordiv 8 - (((d0 floordiv 8) * 8 + d1 floordiv 8) floordiv 64) * 64)>
// CHECK-DAG:   #[[NEXT:.+]] = affine_map<(d0, d1, d2) -> (d2 + (d0 floordiv 8) * 8 + d1 floordiv 8 - (((d0 floordiv 8) * 8 + d1 floordiv 8) floordiv 64) * 64 + 64)>
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

// -----

// A split of the keys (from %start) whose tiles hold both heads: K's tile is
// a subview at %start + j, V is read at [h, %start + j + t] by a nest over
// heads h, so its tile spans the head dim. Each tile is 8 KiB (2 heads × 64
// keys × 64 bytes): 128 lines, two per reduction step of the 64 steps.
// A step's first line, number 64 h + 2 (t / 2), is row %start + j + (that
// mod 64) of head (that / 64) mod 2; K's rows are the next tile's, 64 on.
// CHECK-DAG:   #[[V_ROW:.+]] = affine_map<(d0, d1, d2)[s0] -> (d0 * 64 + d2 + (d1 floordiv 2) * 2 + s0 - (d0 + (d1 floordiv 2) floordiv 32) * 64)>
// CHECK-DAG:   #[[K_ROW:.+]] = affine_map<(d0, d1, d2)[s0] -> (d0 * 64 + d2 + (d1 floordiv 2) * 2 + s0 - (d0 + (d1 floordiv 2) floordiv 32) * 64 + 64)>
// CHECK-LABEL: func.func @split_tiles
// CHECK-SAME:    (%[[K:[^:]+]]: memref<1x2x256x16xf32>, %[[V:[^:]+]]: memref<1x2x256x16xf32>, %[[START:[^:]+]]: index
// CHECK:         scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK:           scf.for %[[H:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK:             scf.for %[[T:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args
// CHECK:               %[[HEAD:.+]] = affine.apply #{{.+}}(%[[H]], %[[T]])
// CHECK:               %[[ROW:.+]] = affine.apply #[[V_ROW]](%[[H]], %[[T]], %[[J]])[%[[START]]]
// CHECK-NEXT:          %[[ROW_IN:.+]] = arith.minsi %[[ROW]]
// CHECK:               memref.prefetch %[[V]][%{{.+}}, %[[HEAD]], %[[ROW_IN]], %{{.+}}]
// CHECK:               memref.prefetch %[[V]]
// CHECK-NOT:           memref.prefetch
// CHECK:           scf.for %[[H2:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK:             scf.for %[[T2:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args
// CHECK:               affine.apply #[[K_ROW]](%[[H2]], %[[T2]], %[[J]])[%[[START]]]
// CHECK:               memref.prefetch %[[K]]
// CHECK:               memref.prefetch %[[K]]
// CHECK-NOT:           memref.prefetch
// CHECK:         return
func.func @split_tiles(%k: memref<1x2x256x16xf32>, %v: memref<1x2x256x16xf32>, %start: index, %s: memref<2x64x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %f0 = arith.constant 0.0 : f32
  %zero = arith.constant dense<0.0> : vector<8x32xf32>
  scf.for %j = %c0 to %c128 step %c64 {
    %key = affine.apply affine_map<()[s0, s1] -> (s0 + s1)>()[%j, %start]
    %tile = memref.subview %k[0, 0, %key, 0] [1, 2, 64, 16] [1, 1, 1, 1] : memref<1x2x256x16xf32> to memref<1x2x64x16xf32, strided<[8192, 4096, 16, 1], offset: ?>>
    scf.for %h = %c0 to %c2 step %c1 {
      %acc = scf.for %t = %c0 to %c64 step %c2 iter_args(%a = %zero) -> (vector<8x32xf32>) {
        %x = vector.transfer_read %tile[%c0, %h, %t, %c0], %f0 {in_bounds = [true]} : memref<1x2x64x16xf32, strided<[8192, 4096, 16, 1], offset: ?>>, vector<16xf32>
        %y = vector.transfer_read %s[%h, %t, %c0], %f0 {in_bounds = [true]} : memref<2x64x32xf32>, vector<32xf32>
        %row = vector.extract %a[0] : vector<32xf32> from vector<8x32xf32>
        %f = vector.fma %y, %y, %row : vector<32xf32>
        %n = vector.insert %f, %a[0] : vector<32xf32> into vector<8x32xf32>
        scf.yield %n : vector<8x32xf32>
      }
      vector.transfer_write %acc, %s[%h, %c0, %c0] {in_bounds = [true, true]} : vector<8x32xf32>, memref<2x64x32xf32>
    }
    scf.for %h = %c0 to %c2 step %c1 {
      %acc = scf.for %t = %c0 to %c64 step %c2 iter_args(%a = %zero) -> (vector<8x32xf32>) {
        %vkey = affine.apply affine_map<()[s0, s1, s2] -> (s0 + s1 + s2)>()[%j, %start, %t]
        %x = vector.transfer_read %v[%c0, %h, %vkey, %c0], %f0 {in_bounds = [true]} : memref<1x2x256x16xf32>, vector<16xf32>
        %y = vector.transfer_read %s[%h, %t, %c0], %f0 {in_bounds = [true]} : memref<2x64x32xf32>, vector<32xf32>
        %row = vector.extract %a[0] : vector<32xf32> from vector<8x32xf32>
        %f = vector.fma %y, %y, %row : vector<32xf32>
        %n = vector.insert %f, %a[0] : vector<32xf32> into vector<8x32xf32>
        scf.yield %n : vector<8x32xf32>
      }
      vector.transfer_write %acc, %s[%h, %c0, %c0] {in_bounds = [true, true]} : vector<8x32xf32>, memref<2x64x32xf32>
    }
  }
  return
}

// -----

// Tiles over 64 KiB (a decode split's tile of every kv head: 8 heads × 64
// keys × 256 bytes here, 128 KiB) are read in one pass, which the hardware
// prefetchers follow: nothing is prefetched.
// CHECK-LABEL: func.func @large_tiles
// CHECK-NOT:     memref.prefetch
// CHECK:         return
func.func @large_tiles(%k: memref<1x8x256x64xf32>, %v: memref<1x8x256x64xf32>, %s: memref<8x64x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %f0 = arith.constant 0.0 : f32
  %zero = arith.constant dense<0.0> : vector<8x32xf32>
  scf.for %j = %c0 to %c256 step %c64 {
    scf.for %h = %c0 to %c8 step %c1 {
      %acc = scf.for %t = %c0 to %c64 step %c8 iter_args(%a = %zero) -> (vector<8x32xf32>) {
        %key = arith.addi %j, %t : index
        %x = vector.transfer_read %k[%c0, %h, %key, %c0], %f0 {in_bounds = [true]} : memref<1x8x256x64xf32>, vector<64xf32>
        %y = vector.transfer_read %s[%h, %t, %c0], %f0 {in_bounds = [true]} : memref<8x64x32xf32>, vector<32xf32>
        %row = vector.extract %a[0] : vector<32xf32> from vector<8x32xf32>
        %f = vector.fma %y, %y, %row : vector<32xf32>
        %n = vector.insert %f, %a[0] : vector<32xf32> into vector<8x32xf32>
        scf.yield %n : vector<8x32xf32>
      }
      vector.transfer_write %acc, %s[%h, %c0, %c0] {in_bounds = [true, true]} : vector<8x32xf32>, memref<8x64x32xf32>
    }
    scf.for %h = %c0 to %c8 step %c1 {
      %acc = scf.for %t = %c0 to %c64 step %c8 iter_args(%a = %zero) -> (vector<8x32xf32>) {
        %key = arith.addi %j, %t : index
        %x = vector.transfer_read %v[%c0, %h, %key, %c0], %f0 {in_bounds = [true]} : memref<1x8x256x64xf32>, vector<64xf32>
        %y = vector.transfer_read %s[%h, %t, %c0], %f0 {in_bounds = [true]} : memref<8x64x32xf32>, vector<32xf32>
        %row = vector.extract %a[0] : vector<32xf32> from vector<8x32xf32>
        %f = vector.fma %y, %y, %row : vector<32xf32>
        %n = vector.insert %f, %a[0] : vector<32xf32> into vector<8x32xf32>
        scf.yield %n : vector<8x32xf32>
      }
      vector.transfer_write %acc, %s[%h, %c0, %c0] {in_bounds = [true, true]} : vector<8x32xf32>, memref<8x64x32xf32>
    }
  }
  return
}
