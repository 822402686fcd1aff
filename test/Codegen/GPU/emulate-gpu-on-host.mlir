// RUN: rope-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(rope-emulate-gpu-on-host))' --verify-diagnostics | FileCheck %s

// A launch becomes a parallel loop over blocks and threads; GPU memory ops
// become host memory ops.
// CHECK-LABEL: func.func @launch
//  CHECK-SAME:   (%[[H:.+]]: memref<1024xf32>)
//       CHECK:   %[[D:.+]] = memref.alloc() : memref<1024xf32>
//       CHECK:   memref.copy %[[H]], %[[D]]
//       CHECK:   scf.parallel (%[[BX:[^,]+]], %{{[^,]+}}, %{{[^,]+}}, %[[TX:[^,]+]], %{{[^,]+}}, %{{[^,]+}}) = ({{.+}}) to (%[[C4:[^,]+]], %{{[^,]+}}, %{{[^,]+}}, %[[C256:[^,]+]], %{{[^,]+}}, %{{[^,]+}})
//       CHECK:     %[[BASE:.+]] = arith.muli %[[BX]], %[[C256]]
//       CHECK:     %[[I:.+]] = arith.addi %[[BASE]], %[[TX]]
//       CHECK:     memref.store %{{.+}}, %[[D]][%[[I]]]
//   CHECK-NOT:   gpu.
//       CHECK:   memref.copy %[[D]], %[[H]]
//       CHECK:   memref.dealloc %[[D]]
func.func @launch(%h: memref<1024xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c256 = arith.constant 256 : index
  %d = gpu.alloc () : memref<1024xf32>
  gpu.memcpy %d, %h : memref<1024xf32>, memref<1024xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %base = arith.muli %bx, %sx : index
    %i = arith.addi %base, %tx : index
    %one = arith.constant 1.0 : f32
    memref.store %one, %d[%i] : memref<1024xf32>
    gpu.terminator
  }
  gpu.memcpy %h, %d : memref<1024xf32>, memref<1024xf32>
  gpu.dealloc %d : memref<1024xf32>
  return
}

// -----

func.func @barrier(%m: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  // expected-error @+1 {{'gpu.launch' op with barriers cannot be emulated on the host (threads would run one after another)}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    gpu.barrier
    gpu.terminator
  }
  return
}
