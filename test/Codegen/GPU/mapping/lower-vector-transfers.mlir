// RUN: rope-opt %s --split-input-file --rope-lower-vector-transfers | FileCheck %s

// An in-bounds row of a contiguous buffer, as streamed attention reads and
// writes it: a plain vector load and store.
// CHECK-LABEL: func.func @row
// CHECK-SAME:    (%[[M:.+]]: memref<8x16xf32>, %[[I:.+]]: index)
// CHECK:         %[[C0:.+]] = arith.constant 0 : index
// CHECK-NEXT:    %[[V:.+]] = vector.load %[[M]][%[[I]], %[[C0]]] : memref<8x16xf32>, vector<16xf32>
// CHECK-NEXT:    %[[W:.+]] = arith.addf %[[V]], %[[V]] : vector<16xf32>
// CHECK-NEXT:    vector.store %[[W]], %[[M]][%[[I]], %[[C0]]] : memref<8x16xf32>, vector<16xf32>
// CHECK-NOT:     vector.transfer
func.func @row(%m: memref<8x16xf32>, %i: index) {
  %c0 = arith.constant 0 : index
  %f0 = arith.constant 0.0 : f32
  %v = vector.transfer_read %m[%i, %c0], %f0 {in_bounds = [true]} : memref<8x16xf32>, vector<16xf32>
  %w = arith.addf %v, %v : vector<16xf32>
  vector.transfer_write %w, %m[%i, %c0] {in_bounds = [true]} : vector<16xf32>, memref<8x16xf32>
  return
}

// -----

// A broadcasting read: a load of the row, then a broadcast.
// CHECK-LABEL: func.func @broadcast_row
// CHECK:         %[[V:.+]] = vector.load %{{.+}} : memref<8x16xf32>, vector<1x16xf32>
// CHECK-NEXT:    %[[B:.+]] = vector.broadcast %[[V]] : vector<1x16xf32> to vector<4x16xf32>
// CHECK-NEXT:    return %[[B]]
func.func @broadcast_row(%m: memref<8x16xf32>, %i: index) -> vector<4x16xf32> {
  %c0 = arith.constant 0 : index
  %f0 = arith.constant 0.0 : f32
  %v = vector.transfer_read %m[%i, %c0], %f0 {in_bounds = [true, true], permutation_map = affine_map<(d0, d1) -> (0, d1)>} : memref<8x16xf32>, vector<4x16xf32>
  return %v : vector<4x16xf32>
}

// -----

// Left alone: a read that may go out of bounds (it needs the padding), one
// along a strided dim, and one from a tensor.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     vector.load
// CHECK:         vector.transfer_read %{{.+}} : memref<8x16xf32>, vector<16xf32>
// CHECK:         vector.transfer_read %{{.+}} : memref<8x16xf32, strided<[1, 8]>>, vector<16xf32>
// CHECK:         vector.transfer_read %{{.+}} : tensor<8x16xf32>, vector<16xf32>
// CHECK-NOT:     vector.load
func.func @left_alone(%m: memref<8x16xf32>, %s: memref<8x16xf32, strided<[1, 8]>>,
                      %t: tensor<8x16xf32>, %i: index, %j: index)
    -> (vector<16xf32>, vector<16xf32>, vector<16xf32>) {
  %c0 = arith.constant 0 : index
  %f0 = arith.constant 0.0 : f32
  %a = vector.transfer_read %m[%i, %j], %f0 : memref<8x16xf32>, vector<16xf32>
  %b = vector.transfer_read %s[%i, %c0], %f0 {in_bounds = [true]} : memref<8x16xf32, strided<[1, 8]>>, vector<16xf32>
  %c = vector.transfer_read %t[%i, %c0], %f0 {in_bounds = [true]} : tensor<8x16xf32>, vector<16xf32>
  return %a, %b, %c : vector<16xf32>, vector<16xf32>, vector<16xf32>
}
