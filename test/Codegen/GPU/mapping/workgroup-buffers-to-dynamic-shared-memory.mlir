// RUN: rope-opt %s --split-input-file --rope-workgroup-buffers-to-dynamic-shared-memory | FileCheck %s
// RUN: rope-opt %s --split-input-file --rope-workgroup-buffers-to-dynamic-shared-memory=static-limit=0 | FileCheck %s --check-prefix=ALL
// RUN: not rope-opt %s --split-input-file --rope-workgroup-buffers-to-dynamic-shared-memory=static-limit=-1 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: static-limit must not be negative, got -1

// 96 KiB of tiles (the f32 attention at D = 128): one dynamic buffer, each
// tile a view at its offset, the launch sized to their total.
// CHECK-LABEL: func.func @large
// CHECK:         %[[BYTES:.+]] = arith.constant 98304 : i32
// CHECK:         gpu.launch
// CHECK-SAME:      dynamic_shared_memory_size %[[BYTES]]
// CHECK-NOT:       workgroup(
// CHECK:           %[[RAW:.+]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK:           %[[OFF0:.+]] = arith.constant 0 : index
// CHECK:           %[[A:.+]] = memref.view %[[RAW]][%[[OFF0]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x128xf32, #gpu.address_space<workgroup>>
// CHECK:           %[[OFF1:.+]] = arith.constant 32768 : index
// CHECK:           %[[B:.+]] = memref.view %[[RAW]][%[[OFF1]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x128xf32, #gpu.address_space<workgroup>>
// CHECK:           %[[OFF2:.+]] = arith.constant 65536 : index
// CHECK:           %[[C:.+]] = memref.view %[[RAW]][%[[OFF2]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x128xf32, #gpu.address_space<workgroup>>
// CHECK:           memref.store %{{.*}}, %[[A]]
// CHECK:           memref.store %{{.*}}, %[[B]]
// CHECK:           memref.store %{{.*}}, %[[C]]
func.func @large() {
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             workgroup(%a : memref<64x128xf32, #gpu.address_space<workgroup>>,
                       %b : memref<64x128xf32, #gpu.address_space<workgroup>>,
                       %c : memref<64x128xf32, #gpu.address_space<workgroup>>) {
    memref.store %f, %a[%tx, %tx] : memref<64x128xf32, #gpu.address_space<workgroup>>
    memref.store %f, %b[%tx, %tx] : memref<64x128xf32, #gpu.address_space<workgroup>>
    memref.store %f, %c[%tx, %tx] : memref<64x128xf32, #gpu.address_space<workgroup>>
    gpu.terminator
  }
  return
}

// -----

// 48 KiB fits the static limit: left alone, unless the limit is 0. Offsets
// are 16-byte aligned (the 3-byte buffer pads to 16).
// CHECK-LABEL: func.func @small
// CHECK:         gpu.launch
// CHECK-SAME:      workgroup(
// CHECK-NOT:     gpu.dynamic_shared_memory
// ALL-LABEL: func.func @small
// ALL:         %[[BYTES:.+]] = arith.constant 32 : i32
// ALL:         dynamic_shared_memory_size %[[BYTES]]
// ALL:         %[[OFF:.+]] = arith.constant 16 : index
// ALL:         memref.view %{{.*}}[%[[OFF]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4xf32, #gpu.address_space<workgroup>>
func.func @small() {
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  %i = arith.constant 1 : i8
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             workgroup(%a : memref<3xi8, #gpu.address_space<workgroup>>,
                       %b : memref<4xf32, #gpu.address_space<workgroup>>) {
    memref.store %i, %a[%tx] : memref<3xi8, #gpu.address_space<workgroup>>
    memref.store %f, %b[%tx] : memref<4xf32, #gpu.address_space<workgroup>>
    gpu.terminator
  }
  return
}
