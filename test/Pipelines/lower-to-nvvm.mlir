// --rope-lower-to-nvvm: rope on tensors to host code in the LLVM dialect plus
// a gpu.binary of NVIDIA kernels, checked at each stage.

// RUN: rope-opt %s --rope-lower-to-nvvm=format=isa -o /dev/null \
// RUN:   --mlir-print-ir-after=rope-host-buffers-to-gpu \
// RUN:   --mlir-print-ir-after=rope-parallel-loops-to-gpu \
// RUN:   --mlir-print-ir-after=gpu-kernel-outlining 2>&1 | FileCheck %s --check-prefix=STAGES
// RUN: rope-opt %s --rope-lower-to-nvvm=format=isa | FileCheck %s --check-prefix=SM90
// RUN: rope-opt %s --rope-lower-to-nvvm="chip=sm_80 format=isa block-size=128" | FileCheck %s --check-prefix=SM80
// ptxas (CUDA toolkit) assembles a real cubin, an ELF file:
// RUN: %if cuda-toolkit %{ rope-opt %s --rope-lower-to-nvvm="format=bin" | FileCheck %s --check-prefix=CUBIN %}
// The stock mlir-opt reaches the pipeline through the plugin:
// RUN: %mlir_opt %s --load-dialect-plugin=%rope_plugin --load-pass-plugin=%rope_plugin \
// RUN:   --pass-pipeline="builtin.module(rope-lower-to-nvvm{format=isa})" | FileCheck %s --check-prefix=SM90

func.func @rotate(%x: tensor<2x4x?x64xf16>, %p: tensor<?xi64>) -> tensor<2x4x?x64xf16> {
  %r = rope.rotate %x, %p rotary(#rope.spec<base = 500000.0>) : tensor<2x4x?x64xf16>, tensor<?xi64>
  return %r : tensor<2x4x?x64xf16>
}

// 1. Bufferized, with every buffer on the GPU: the cos/sin tables and the
//    result are gpu.alloc'ed, the frequency constants copied to the device;
//    the tables and the constants' copy are freed before the return, the
//    result (returned) is not.
// STAGES-LABEL: IR Dump After RopeHostBuffersToGPU
//       STAGES: func.func @rotate(%[[X:.+]]: memref<2x4x?x64xf16>, %[[P:.+]]: memref<?xi64>) -> memref<2x4x?x64xf16>
//       STAGES:   %[[FREQ:.+]] = gpu.alloc () : memref<32xf64>
//       STAGES:   gpu.memcpy %[[FREQ]], %{{.+}} : memref<32xf64>, memref<32xf64>
//       STAGES:   %[[COS:.+]] = gpu.alloc (%{{.+}}) : memref<?x32xf32>
//       STAGES:   %[[SIN:.+]] = gpu.alloc (%{{.+}}) : memref<?x32xf32>
//       STAGES:   linalg.generic
//       STAGES:   %[[OUT:.+]] = gpu.alloc (%{{.+}}) : memref<2x4x?x64xf16>
//       STAGES:   gpu.launch
//   STAGES-DAG:   gpu.dealloc %[[FREQ]]
//   STAGES-DAG:   gpu.dealloc %[[COS]]
//   STAGES-DAG:   gpu.dealloc %[[SIN]]
//   STAGES-NOT:   gpu.dealloc %[[OUT]]
//       STAGES:   return %[[OUT]]
// 2. Each linalg op is one launch over a linearised, bounds-checked grid
//    (the table); the rotation is the vector kernel
//    (rope-rotation-to-vector-kernel).
// STAGES-LABEL: IR Dump After RopeParallelLoopsToGPU
//   STAGES-NOT:   linalg.generic
//       STAGES:   gpu.launch blocks
//       STAGES:     math.roundeven
//       STAGES:     math.fma
//       STAGES:   gpu.launch blocks
//       STAGES:     arith.extf {{.+}} : vector<8xf16> to vector<8xf32>
//       STAGES:     arith.truncf {{.+}} : vector<8xf32> to vector<8xf16>
// 3. Outlined into a gpu.module, launched from host code.
// STAGES-LABEL: IR Dump After GpuKernelOutliningPass
//       STAGES:   gpu.launch_func @rotate_kernel::@rotate_kernel
//       STAGES:   gpu.launch_func @rotate_kernel_0::@rotate_kernel
//       STAGES:   gpu.module @rotate_kernel
//       STAGES:     gpu.func @rotate_kernel({{.+}}) kernel

// 4. Final: host code in the LLVM dialect with a C wrapper, kernels as PTX
//    for Hopper (PTX ISA 8.0), f32 math.
//   SM90-NOT: rope.
//   SM90-NOT: linalg.
//       SM90: llvm.func @rotate(
//       SM90:   llvm.call @mgpuStreamCreate()
//       SM90:   llvm.call @mgpuMemAlloc(
//       SM90:   gpu.launch_func <%{{.+}} : !llvm.ptr> @rotate_kernel::@rotate_kernel
//       SM90:   llvm.call @mgpuMemFree(
//       SM90:   llvm.call @mgpuStreamSynchronize(
//       SM90: llvm.func @_mlir_ciface_rotate(
//       SM90: gpu.binary @rotate_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">
//  SM90-SAME: .version 8.0
//  SM90-SAME: .target sm_90
//  SM90-SAME: .visible .entry rotate_kernel(
//       SM90: gpu.binary @rotate_kernel_0
//  SM90-SAME: ld.global.v4.b32
//  SM90-SAME: st.global.v4.b32

//       SM80: gpu.binary @rotate_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx80">
//  SM80-SAME: .target sm_80
//  SM80-SAME: .maxntid 128, 1, 1

//      CUBIN: gpu.binary @rotate_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, properties = {{.+}}, bin = "\7FELF
