//===- Passes.td - rope GPU codegen passes -----------------*- tablegen -*-===//
//
// Target codegen for NVIDIA GPUs: what --rope-lower-to-nvvm runs between
// bufferization and the upstream NVVM lowering (buffers in device memory,
// loops onto grids of threads), plus the host emulation of its kernels that
// --rope-test-gpu-mapping-on-cpu uses.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_CODEGEN_GPU_PASSES_TD
#define ROPE_CODEGEN_GPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def RopeHostBuffersToGPU : Pass<"rope-host-buffers-to-gpu", "::mlir::func::FuncOp"> {
  let summary = "Place the buffers of bufferized host functions in GPU memory";
  let description = [{
    Runs on bufferized functions whose memref arguments are GPU (device)
    buffers, before their loops are mapped to the GPU:
    * `memref.alloc` becomes `gpu.alloc`; a buffer that the function does not
      return is freed with `gpu.dealloc` before each `func.return` (a
      returned buffer belongs to the caller, who frees it with the runtime's
      `mgpuMemFree`);
    * a host `memref.load` at the top level of the function (a
      `tensor.extract` of a computed scalar) reads a staging copy of its element in host memory (an element of a buffer
      of rank > 0 is first gathered into a 0-d device buffer by a
      one-iteration `scf.parallel`, since `gpu.memcpy` needs identity
      layouts);
    * `memref.get_global` (constant tables) is replaced by a device copy made
      at the start of each call and freed before it returns;
    * `memref.copy` becomes `linalg.copy`, so that it is lowered to a
      parallel loop and runs as a kernel like every other computation.
    The function's body must be straight-line at the top level where it
    allocates (what bufferizing the `--rope-lower-to-nvvm` input gives);
    an allocation nested in host control flow is reported as an error.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def RopeParallelLoopsToGPU : Pass<"rope-parallel-loops-to-gpu", "::mlir::func::FuncOp"> {
  let summary = "Map each outermost scf.parallel onto a grid of GPU threads";
  let description = [{
    Every `scf.parallel` that is not nested in another one or in a
    `gpu.launch` becomes a `gpu.launch`: its iteration space is linearised
    (last dimension fastest, so neighbouring threads touch neighbouring
    elements and global memory accesses coalesce), split into blocks of
    `block-size` threads, and each thread runs one iteration after a bounds
    check. Loops nested inside (reductions of `linalg` ops are `scf.for`)
    run sequentially in their thread. Trip counts may be dynamic; a loop with
    no iterations launches nothing. Host code that touches buffers outside
    any parallel loop (an `scf.for` or `memref.store` left by a linalg op
    with no parallel dimension, such as the largest position of a
    dynamic-NTK rotation) runs as a one-thread kernel; a host `memref.load`
    whose value the host needs is reported as an error. Loops with reductions (`scf.reduce`
    with operands) are reported as errors.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block (a multiple of the 32-thread warp)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def RopeEmulateGPUOnHost : Pass<"rope-emulate-gpu-on-host", "::mlir::func::FuncOp"> {
  let summary = "Testing aid: run gpu.launch kernels and GPU memory ops on the host";
  let description = [{
    Turns each `gpu.launch` into an `scf.parallel` over its blocks and
    threads (block and thread ids become induction variables), and
    `gpu.alloc` / `gpu.dealloc` / `gpu.memcpy` into their `memref`
    counterparts. For kernels without barriers or shared memory (those of
    `rope-parallel-loops-to-gpu`) this computes exactly what the GPU would,
    so `--rope-test-gpu-mapping-on-cpu` can check the GPU pipeline's
    mapping numerically on a machine with no GPU. A kernel with `gpu.barrier`
    or workgroup/private memory is reported as an error.
  }];
  let dependentDialects = [
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect"
  ];
}

#endif // ROPE_CODEGEN_GPU_PASSES_TD
