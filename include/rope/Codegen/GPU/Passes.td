//===- Passes.td - rope GPU codegen passes -----------------*- tablegen -*-===//
//
// Target codegen for NVIDIA GPUs: what --rope-lower-to-nvvm runs besides
// upstream passes (the target check, buffers in device memory, loops onto
// grids of threads, vector transfers the NVVM conversion can take), in
// pipeline order, plus the host emulation of its kernels that
// --rope-test-gpu-mapping-on-cpu uses.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_CODEGEN_GPU_PASSES_TD
#define ROPE_CODEGEN_GPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def RopeCheckNVVMTarget : Pass<"rope-check-nvvm-target", "::mlir::ModuleOp"> {
  let summary = "Check the chip, PTX features and binary format of "
                "--rope-lower-to-nvvm";
  let description = [{
    Rejects, before any work, an NVIDIA target that LLVM 22's NVPTX backend
    would not compile for, with an error on the module that says what to
    use instead; the IR is never changed. Reported:
    * an unknown `chip` (the backend only warns about one, and the PTX is
      then wrong for the GPU);
    * a feature other than `+ptxNN` with PTX ISA 3.2 to 9.0;
    * a PTX ISA older than the chip needs (the backend would abort the
      process: "LLVM ERROR: PTX version ... does not support target"); the
      oldest ISA for each chip was read off `llc -mcpu=<chip>
      -mattr=+ptx<N>`;
    * a `format` that `gpu-module-to-binary` does not accept.

    `--rope-lower-to-nvvm` runs it first, with its own `chip`, `features`
    and `format` (the same options with the same defaults); the messages
    name that pipeline.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "NVIDIA architecture the kernels are for (sm_90 is Hopper, "
           "sm_80 Ampere)">,
    Option<"features", "features", "std::string", /*default=*/"\"+ptx80\"",
           "NVPTX target features: comma-separated +ptxNN, the PTX ISA "
           "version (PTX 7.8 for sm_90)">,
    Option<"format", "format", "std::string", /*default=*/"\"fatbin\"",
           "What gpu.binary holds (fatbin, bin, isa or llvm)">
  ];
}

def RopeAttentionToTensorCores : Pass<"rope-attention-to-tensor-cores"> {
  let summary = "Attention as one FlashAttention-2-style kernel: tensor "
                "cores for f16/bf16, FMA in the same layout for f32 (sm_80+)";
  let description = [{
    The tensor-core configuration of attention on NVIDIA GPUs. Each
    `rope.attention` the kernel takes becomes `rope.online_attention` (from
    the empty state) and its normalisation; the online op then becomes one
    `gpu.launch` over buffers of its operands (`bufferization.to_buffer`),
    its results fresh buffers:
    * a block of 4 warps per (batch, query head, 128 query rows), each warp
      two groups of 16 rows held in `mma.sync` m16n8k16 fragments, so each
      K or V fragment it loads feeds two products (decode and f32: one
      group, 64 rows); Q is staged once into shared memory and, with a
      `rotary` spec or tables, rotated on the way in f32;
    * K and V tiles of 64 keys in swizzled shared memory, copied by
      `cp.async` (`nvgpu.device_async_copy`, keys past the end zero-filled);
      K's rotated chunks go through registers (load, rotate in f32, store);
      while Q·Kᵀ runs on one tile the copy of the other operand is in
      flight;
    * Q·Kᵀ and P·V by `nvvm.mma.sync` (f16 or bf16 operands, f32
      accumulators), B fragments by `nvgpu.ldmatrix` (transposed for V);
    * the online softmax in registers: scale (and soft-cap) folded into the
      logits in log2 units, `exp2`, row max and sum over the lane quad by
      shuffles; P is the score accumulators, rounded, as the A operand of
      P·V;
    * with the default positions, key tiles that causal or window rules hide
      from a whole query tile are not visited (loop bounds) and only tiles
      that straddle a rule or the end of the keys go through the rules
      element by element; with explicit positions, a mask, ALiBi or a T5
      bias every tile does (the op's own rules, `attention::buildLogit`);
    * GQA by the kv head of the query head; sinks through the initial state;
    * split-K for decode: with one query tile (static Sq <= 64) the blocks
      also split the keys, as many ranges as it takes to reach
      `target-blocks` blocks (at most one per key tile), each writing a
      partial state from the empty one, which the op's own exact merge
      (`mergeReductions`, with the op's initial state) combines; with GQA
      the query heads of a kv head share a block, their queries packed as
      its rows, so each K/V tile is read once per group (not with a mask,
      ALiBi or a T5 bias, which are per head).

    f32 runs the same kernel (tiles, staging, loops, softmax, rules): its
    tiles hold f32 in 16-byte chunks of 4, and its two products are FMA by
    each lane on its own fragment elements (scores as dot products over D
    from shared memory, 16 bytes at a time; P·V with P's row gathered from
    the lane's quad by indexed shuffles), since TF32 `mma.sync` would round
    the operands to 10 mantissa bits. At D = 128 its three tiles take 96 KiB,
    which `rope-lower-to-nvvm` moves into dynamic shared memory.

    Taken: Q, K, V all f16, all bf16 or all f32, static D = Dv a multiple of
    16 up to 128, rotated dims on 8-element chunks (a multiple of 32 for the
    half layout, 16 interleaved). Anything else is left to the other
    lowerings of attention.
  }];
  let options = [
    Option<"targetBlocks", "target-blocks", "int64_t", /*default=*/"264",
           "Blocks that split-K aims for in decode (two per SM of an H100 "
           "SXM); 0 never splits">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::nvgpu::NVGPUDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::rope::RopeDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def RopeMatmulToTensorCores : Pass<"rope-matmul-to-tensor-cores"> {
  let summary = "Matmuls with f16/bf16 operands as one tiled mma.sync kernel "
                "(sm_80+)";
  let description = [{
    Every linalg op on tensors that is a contraction
    `C[b?, m, n] += A[b?, m, k] · B[b?, k, n]` (or `· B[b?, n, k]`, the
    `x·Wᵀ` of a frontend's projection; `linalg.matmul`, `batch_matmul`,
    generics with such maps and a multiply-add body) with f16 or bf16 A and
    B and an f32, f16 or bf16 C becomes one `gpu.launch` over buffers of its
    operands, its result a fresh buffer:
    * a block of 4 warps per 64×64 tile of C (and batch), each warp 32×32:
      2×4 `mma.sync` m16n8k16 tiles (`nvvm.mma.sync`), f32 accumulators;
    * K in steps of 64: A's and B's [64][64] tiles copied by `cp.async` into
      swizzled shared memory, two stages (the next step's copy in flight
      while this one's products run), keys, rows and columns outside the
      operands zero-filled;
    * fragments by `ldmatrix.x4` (transposed for a B stored [K, N]);
    * C = init + A·B (the init read only when it is not a zero fill),
      rounded once to C's type.

    Taken where K (and N, for B stored [K, N]) is a static multiple of 8 (the
    16-byte chunks of `cp.async`); others are left to the thread-per-element
    mapping.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::nvgpu::NVGPUDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def RopeRotationToVectorKernel : Pass<"rope-rotation-to-vector-kernel"> {
  let summary = "rope.rotate as a GPU kernel of 16-byte vector accesses";
  let description = [{
    Each `rope.rotate` on tensors whose head dim and rotated range lie on
    whole 8-element chunks (for the half layout, each half) becomes its
    cos/sin table (`rope.table`) and one `gpu.launch` over the input's rows
    (every dim but the head dim), one thread per unit: with the half layout
    chunks `c` and `c + r/16` of a row (8 pairs), interleaved one chunk (4
    pairs), loaded as 16-byte vectors (f16/bf16; two for f32), rotated in
    f32 with coefficients loaded as vectors from the table row of the
    element's position, rounded and stored as 16-byte vectors. The dims
    outside the rotated range are copied chunk by chunk by a second launch.
    Each element is read once and written once; the result is a fresh
    buffer (`bufferization.to_tensor`).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::rope::RopeDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def RopeMatmulToRegisterTiles : Pass<"rope-matmul-to-register-tiles"> {
  let summary = "f32 matmuls as a register-tiled SIMT kernel";
  let description = [{
    The contractions `rope-matmul-to-tensor-cores` takes (one m, n, k dim, at
    most one batch dim, B stored [K, N] or [N, K]), with f32 A and B and an
    f32, f16 or bf16 C, as one `gpu.launch` on CUDA cores: a block of 256
    threads per 64×64 tile of C (and batch), each thread a 4×4 register tile
    (rows `ty + 16·i`, columns `tx + 16·j` of the 16×16 thread grid); K in
    steps of 16 through shared [64][16] A and [16][64] B tiles (B transposed
    on the way when stored [N, K]), 16 FMAs per 8 shared loads; C = init +
    A·B (the init read unless a zero fill), rounded once to C's type.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def RopePrivatizeThreadBuffers
    : Pass<"rope-privatize-thread-buffers", "::mlir::func::FuncOp"> {
  let summary = "Give each GPU thread its own temporaries (memref.alloca)";
  let description = [{
    Runs on bufferized functions after `scf.forall` became `scf.parallel`
    and before `rope-host-buffers-to-gpu`. A `memref.alloc` of static shape
    inside an `scf.parallel` body holds a temporary of one iteration, which
    becomes one GPU thread (an attention row's rotated query and key, its
    scores); it becomes a `memref.alloca` (the thread's local memory) at the
    start of the outermost enclosing `scf.parallel` body, so a thread
    allocates it once however many loop iterations reuse it, and its
    `memref.dealloc`s are erased. Allocations of dynamic shape are left
    alone (`rope-host-buffers-to-gpu` rejects them inside a loop).
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

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

def RopeReductionsInnermost
    : Pass<"rope-reductions-innermost", "::mlir::ModuleOp"> {
  let summary = "Interchange linalg.generic loops so reduction dims are innermost";
  let description = [{
    Reorders the loops of every `linalg.generic` so that all its parallel
    dims come first and all its reduction dims after them, each group in
    its original order (`linalg::interchangeGenericOp`: the indexing maps
    and iterator types are permuted, the body is unchanged). Ops already in
    that order are left alone, and so is one whose interchange fails (still
    correct, only slower).

    On the GPU each parallel iteration is a thread and the loops below the
    first reduction run inside it: P·V (`[b, h, q, k (reduction), d]`)
    would otherwise give one thread per query row, looping over the whole
    head dim. `--rope-lower-to-nvvm` runs it on the bufferized functions
    just before `convert-linalg-to-parallel-loops`.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
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

def RopeLowerVectorTransfers
    : Pass<"rope-lower-vector-transfers", "::mlir::ModuleOp"> {
  let summary = "Vector transfers to vector.load/store";
  let description = [{
    Rewrites in-bounds, unmasked `vector.transfer_read` and
    `vector.transfer_write` with a minor identity map, on memrefs whose
    innermost dim has unit stride (the rows of streamed attention), into
    plain `vector.load` and `vector.store`, followed by a
    `vector.broadcast` where a read broadcasts
    (`vector::populateVectorTransferLoweringPatterns`). Transfers that may
    go out of bounds, are masked, permute dims, read along a strided dim
    or work on tensors are left alone.

    The NVVM conversion knows `vector.load`/`vector.store` but not
    transfers, which it would leave unconverted. `--rope-lower-to-nvvm`
    runs it after the loops are mapped onto GPU threads.
  }];
  let dependentDialects = [
    "::mlir::memref::MemRefDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def RopeWorkgroupBuffersToDynamicSharedMemory
    : Pass<"rope-workgroup-buffers-to-dynamic-shared-memory"> {
  let summary = "Workgroup buffers past the static shared-memory limit as "
                "views of dynamic shared memory";
  let description = [{
    A kernel's static shared memory is limited to 48 KiB; more (up to the
    chip's opt-in limit: 227 KiB per block on Hopper, 163 KiB on A100) is
    only reachable as dynamic shared memory, sized at launch. Kernels are
    built with workgroup attributions, which the emulator and every
    reader of the IR understand; this pass moves the attributions of each
    `gpu.launch` whose buffers together exceed `static-limit` bytes into
    one `gpu.dynamic_shared_memory` buffer: each becomes a `memref.view`
    at its offset (16-byte aligned, in order), and the launch's
    `dynamic_shared_memory_size` is their total. Launches within the limit,
    or that already use dynamic shared memory, are left alone.

    The runtime opts a kernel into more than 48 KiB when it launches it.
    `--rope-lower-to-nvvm` runs this pass before outlining (the f32
    attention kernel at D = 128 holds three 32 KiB tiles).
  }];
  let options = [
    Option<"staticLimit", "static-limit", "int64_t", /*default=*/"49152",
           "Bytes of workgroup buffers a launch may keep static">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def RopeSetKernelMinBlocksPerSM
    : Pass<"rope-set-kernel-min-blocks-per-sm", "::mlir::ModuleOp"> {
  let summary = "State each GPU kernel's minimum resident blocks per SM "
                "(nvvm.minctasm), so that ptxas does not spill for occupancy";
  let description = [{
    Sets `nvvm.minctasm` (PTX `.minnctapersm`) to `min-blocks` on every
    `gpu.func` kernel that has none. A kernel with a known block size gets
    `.maxntid`, and ptxas, told the block size but no minimum, picks an
    occupancy target of its own and spills registers to meet it: with
    CUDA 13.0 the attention kernels came out at exactly 128 registers with
    4 to 28 bytes of spills, while with the minimum stated as 1 the same
    kernels use 150 to 255 registers and spill nothing. Shared memory, not
    registers, then bounds how many blocks share an SM.

    `--rope-lower-to-nvvm` runs it after outlining, with 1.
  }];
  let options = [
    Option<"minBlocks", "min-blocks", "int64_t", /*default=*/"1",
           "Blocks of a kernel that must fit on one SM at once">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def RopeEmulateGPUOnHost : Pass<"rope-emulate-gpu-on-host", "::mlir::ModuleOp"> {
  let summary = "Run gpu.launch kernels on the CPU, every GPU thread a fiber, "
                "with race, bounds and divergence checks";
  let description = [{
    Turns each `gpu.launch` into a call of the GPU emulator runtime
    (`libRopeGpuEmulator.so`), which runs the kernel once per GPU thread,
    each thread a fiber of its block, so that what the threads of a block
    say to each other behaves as on the GPU:

    * `gpu.barrier` suspends a thread until its whole block arrives; a
      barrier that some threads of the block never reach, or threads
      waiting at different `gpu.barrier` ops, is an error;
    * workgroup attributions are one buffer per block (filled with a
      signalling-NaN pattern), private attributions the thread's own;
    * `gpu.shuffle` (32- and 64-bit), `nvgpu.mma.sync` and `nvvm.mma.sync`
      (m16n8k16 f16/bf16, m16n8k8 tf32, f32 accumulators) and
      `nvgpu.ldmatrix` act on the 32 lanes of a warp together, with the PTX
      fragment layouts;
    * `nvgpu.device_async_copy` (with or without `srcElements`) lands its
      data only at the `nvgpu.device_async_wait` that completes its group;
      the tokens may pass through `scf` loops and ifs;
    * Hopper (sm_90a): `nvgpu.mbarrier.create` (its mbarriers placed in the
      block's workgroup memory after the attributions), `.init`, `.arrive`,
      `.arrive.expect_tx` and `.try_wait.parity`; `nvgpu.tma.async.load` and
      `.store` on tensor maps that `nvgpu.tma.create.descriptor` builds on
      the host; `nvvm.cp.async.bulk.commit.group` and `.wait_group`;
      `nvvm.wgmma.fence`, `.mma_async` (m64nNk16, f16/bf16 into f32, A and B
      through matrix descriptors, which kernels build from workgroup
      addresses as on the GPU), `.commit.group` and `.wait.group`;
      named barriers (`nvvm.barrier` with an id and a thread count,
      `nvvm.barrier.arrive`), `nvvm.elect.sync`, `nvvm.setmaxregister` and
      `nvvm.fence.proxy`, with the runtime's mbarrier, TMA and wgmma
      checkers.

    The body becomes an `llvm.func` taking a pointer to the values it
    captures. Every memory access is checked against its memref's extents
    (an index outside ends the launch with an error naming the kernel, the
    thread, the dim and the index; for `nvgpu.ldmatrix` only in the lanes
    that give a row address), and every access of workgroup memory is
    reported to the runtime's race and uninitialised-read checkers. An op
    that accesses a memref otherwise (`memref.copy`, vector transfers, a
    call) is an error: it would escape the checks. Errors
    reach the host through libRopeRuntime.so like failed runtime checks.
    `gpu.alloc`, `gpu.dealloc` and `gpu.memcpy` become their `memref`
    counterparts on host memory.

    The result runs wherever the LLVM dialect runs, with
    libRopeGpuEmulator.so and libRopeRuntime.so loaded (mlir-runner
    `-shared-libs`, the C API, the Python package); the named pipeline
    `rope-emulate-gpu` adds the host lowering.
  }];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::cf::ControlFlowDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

#endif // ROPE_CODEGEN_GPU_PASSES_TD
