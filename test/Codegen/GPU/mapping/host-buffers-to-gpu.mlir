// RUN: rope-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(rope-host-buffers-to-gpu))' --verify-diagnostics | FileCheck %s

// A temporary is allocated on the GPU and freed before the return; the
// returned buffer is the caller's.
// CHECK-LABEL: func.func @temporary_and_result
//  CHECK-SAME:   (%[[X:.+]]: memref<8xf32>)
//       CHECK:   %[[TMP:.+]] = gpu.alloc () : memref<8xf32>
//       CHECK:   %[[OUT:.+]] = gpu.alloc () : memref<2x4xf32>
//   CHECK-NOT:   memref.alloc
//       CHECK:   linalg.copy ins(%[[X]] : memref<8xf32>) outs(%[[TMP]] : memref<8xf32>)
//   CHECK-NOT:   memref.copy
//       CHECK:   %[[VIEW:.+]] = memref.expand_shape %[[TMP]]
//       CHECK:   linalg.copy ins(%[[VIEW]] : memref<2x4xf32>) outs(%[[OUT]] : memref<2x4xf32>)
//       CHECK:   gpu.dealloc %[[TMP]] : memref<8xf32>
//   CHECK-NOT:   gpu.dealloc %[[OUT]]
//       CHECK:   return %[[OUT]]
func.func @temporary_and_result(%x: memref<8xf32>) -> memref<2x4xf32> {
  %tmp = memref.alloc() : memref<8xf32>
  %out = memref.alloc() : memref<2x4xf32>
  memref.copy %x, %tmp : memref<8xf32> to memref<8xf32>
  %view = memref.expand_shape %tmp [[0, 1]] output_shape [2, 4] : memref<8xf32> into memref<2x4xf32>
  memref.copy %view, %out : memref<2x4xf32> to memref<2x4xf32>
  return %out : memref<2x4xf32>
}

// -----

// A result returned through a view (reshape) is still the caller's; dynamic
// sizes carry over.
// CHECK-LABEL: func.func @returned_view
//       CHECK:   %[[B:.+]] = gpu.alloc (%{{.+}}) : memref<?x4xf32>
//       CHECK:   %[[V:.+]] = memref.collapse_shape %[[B]]
//   CHECK-NOT:   gpu.dealloc
//       CHECK:   return %[[V]]
func.func @returned_view(%n: index) -> memref<?xf32> {
  %b = memref.alloc(%n) : memref<?x4xf32>
  %v = memref.collapse_shape %b [[0, 1]] : memref<?x4xf32> into memref<?xf32>
  return %v : memref<?xf32>
}

// -----

// Constant tables get a device copy per call.
memref.global "private" constant @inv_freq : memref<4xf64> = dense<[1.0, 0.1, 0.01, 0.001]>

// CHECK-LABEL: func.func @constant_table
//       CHECK:   %[[HOST:.+]] = memref.get_global @inv_freq : memref<4xf64>
//       CHECK:   %[[DEV:.+]] = gpu.alloc () : memref<4xf64>
//       CHECK:   gpu.memcpy %[[DEV]], %[[HOST]] : memref<4xf64>, memref<4xf64>
//       CHECK:   linalg.copy ins(%[[DEV]] : memref<4xf64>)
//       CHECK:   gpu.dealloc %[[DEV]] : memref<4xf64>
//  CHECK-NEXT:   return
func.func @constant_table(%out: memref<4xf64>) {
  %t = memref.get_global @inv_freq : memref<4xf64>
  memref.copy %t, %out : memref<4xf64> to memref<4xf64>
  return
}

// -----

// The host reads a computed scalar through a staging copy in host memory.
// CHECK-LABEL: func.func @host_read_scalar
//  CHECK-SAME:   (%[[P:.+]]: memref<i64>)
//       CHECK:   %[[STAGE:.+]] = memref.alloca() : memref<i64>
//       CHECK:   gpu.memcpy %[[STAGE]], %[[P]] : memref<i64>, memref<i64>
//       CHECK:   %[[V:.+]] = memref.load %[[STAGE]][] : memref<i64>
//       CHECK:   return %[[V]]
func.func @host_read_scalar(%p: memref<i64>) -> i64 {
  %v = memref.load %p[] : memref<i64>
  return %v : i64
}

// -----

// An element of a larger buffer is first gathered on the device (a one-thread
// loop), since gpu.memcpy copies identity-layout buffers only.
// CHECK-LABEL: func.func @host_read_element
//  CHECK-SAME:   (%[[P:.+]]: memref<9xi64>, %[[I:.+]]: index)
//       CHECK:   %[[ONE:.+]] = gpu.alloc () : memref<i64>
//       CHECK:   scf.parallel
//       CHECK:     %[[E:.+]] = memref.load %[[P]][%[[I]]] : memref<9xi64>
//       CHECK:     memref.store %[[E]], %[[ONE]][] : memref<i64>
//       CHECK:   %[[STAGE:.+]] = memref.alloca() : memref<i64>
//       CHECK:   gpu.memcpy %[[STAGE]], %[[ONE]] : memref<i64>, memref<i64>
//       CHECK:   %[[V:.+]] = memref.load %[[STAGE]][] : memref<i64>
//       CHECK:   gpu.dealloc %[[ONE]]
//       CHECK:   return %[[V]]
func.func @host_read_element(%p: memref<9xi64>, %i: index) -> i64 {
  %v = memref.load %p[%i] : memref<9xi64>
  return %v : i64
}

// -----

// An explicit deallocation moves to the GPU and no second one is added.
// CHECK-LABEL: func.func @explicit_dealloc
//       CHECK:   %[[B:.+]] = gpu.alloc () : memref<4xf32>
//       CHECK:   gpu.dealloc %[[B]]
//   CHECK-NOT:   gpu.dealloc
//       CHECK:   return
func.func @explicit_dealloc() {
  %b = memref.alloc() : memref<4xf32>
  memref.dealloc %b : memref<4xf32>
  return
}

// -----

func.func @alloc_in_control_flow(%c: i1) {
  scf.if %c {
    // expected-error @+1 {{'memref.alloc' op in host control flow cannot be placed in GPU memory by rope-host-buffers-to-gpu}}
    %b = memref.alloc() : memref<4xf32>
  }
  return
}

// -----

// A constant result is the device copy of the constant, returned (not freed).
memref.global "private" constant @result : memref<2xf32> = dense<[1.0, 2.0]>

// CHECK-LABEL: func.func @constant_result
//       CHECK:   %[[DEV:.+]] = gpu.alloc () : memref<2xf32>
//       CHECK:   gpu.memcpy %[[DEV]]
//   CHECK-NOT:   gpu.dealloc
//       CHECK:   return %[[DEV]]
func.func @constant_result() -> memref<2xf32> {
  %r = memref.get_global @result : memref<2xf32>
  return %r : memref<2xf32>
}

// -----

// A load inside host control flow is left for rope-parallel-loops-to-gpu
// (which moves the whole branch into a kernel): no staging copy here.
// CHECK-LABEL: func.func @load_in_control_flow
//   CHECK-NOT:   gpu.memcpy
//       CHECK:   scf.if
//  CHECK-NEXT:     memref.load %{{.+}}[] : memref<f32>
func.func @load_in_control_flow(%c: i1, %m: memref<f32>, %out: memref<f32>) {
  scf.if %c {
    %v = memref.load %m[] : memref<f32>
    memref.store %v, %out[] : memref<f32>
  }
  return
}
