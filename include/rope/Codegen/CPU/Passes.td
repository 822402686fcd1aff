//===- Passes.td - rope CPU codegen passes -----------------*- tablegen -*-===//
//
// Target codegen for the CPU: what --rope-lower-to-cpu runs besides upstream
// passes to spread work over all cores with OpenMP.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_CODEGEN_CPU_PASSES_TD
#define ROPE_CODEGEN_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def RopeParallelizeElementwise
    : Pass<"rope-parallelize-elementwise", "::mlir::ModuleOp"> {
  let summary = "Tile large top-level elementwise linalg ops and row "
                "reductions into scf.forall";
  let description = [{
    Splits each linalg op on tensors (a `linalg.generic`, `linalg.transpose`,
    `linalg.fill`, ...) that is not inside a loop and has at least 2^15
    iterations, or a dynamic dim, into an `scf.forall` of 8 chunks (a few
    per core keeps the load balanced) along its outermost non-unit dim, when
    that dim is parallel. These are the standalone rotations, cos/sin
    tables, dtype conversions and the copies that pack a large matmul's B,
    which are not already inside an attention tile: memory-bound ops need
    every core to reach the machine's bandwidth. Row reductions split too
    (a frontend's RMSNorm: the sum of squares of each row of [S, 4096]),
    along their rows only: each row is still reduced by one thread in the
    same order, so their results do not change (a prefill's three RMSNorms
    of S = 2048 rows had run on one core, ~3% of its time on 2 cores).

    Left alone: ops whose outermost non-unit dim is a reduction (a column
    sum: splitting it would split each sum), ops inside a loop (the
    attention tiles are parallel already), smaller ops (a parallel region
    would cost more than it saves), and ops that cannot be tiled (they stay
    sequential, which is correct either way).
    `--rope-lower-to-cpu` runs it on tensors after the linalg lowering when
    its option `parallel` is on; the foralls become OpenMP parallel loops.
  }];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def RopeInlineAllocaScopes
    : Pass<"rope-inline-alloca-scopes", "::mlir::ModuleOp"> {
  let summary = "Inline memref.alloca_scope regions (heap-only bodies)";
  let description = [{
    Replaces every `memref.alloca_scope` with the ops of its body, and its
    results with the values its `memref.alloca_scope.return` returned.

    `convert-scf-to-openmp` wraps each parallel body in a
    `memref.alloca_scope` to bound its stack allocations. The bodies that
    `--rope-lower-to-cpu` produces allocate on the heap (deallocated by the
    ownership-based deallocation pipeline), and a scope around loops cannot
    survive their lowering to multi-block control flow, so the pipeline
    inlines the scopes right after the OpenMP conversion. The pass does not
    check that a scope holds no `memref.alloca`: one inside a loop would no
    longer be released at the end of each iteration.
  }];
}

def RopeStridedCopiesToLoops
    : Pass<"rope-strided-copies-to-loops", "::mlir::ModuleOp"> {
  let summary = "memref.copy between strided buffers to loops, not the "
                "element-by-element runtime call";
  let description = [{
    Rewrites each `memref.copy` that the LLVM conversion cannot turn into a
    `memcpy` (a layout other than the identity on either side, unless the
    shape is static and contiguous) into a `linalg.copy` on the same
    buffers, which `convert-linalg-to-loops` then lowers to a loop nest
    whose innermost loop the LLVM vectorizer takes.

    Left to the LLVM conversion, such a copy calls `memrefCopy` of
    `libmlir_c_runner_utils`, which moves one element per `memcpy` call.
    That is how bufferization writes a `tensor.concat` or an
    `insert_slice` into a slice of a larger buffer: a decode step's KV
    cache (the old cache copied into the new, one row longer) spent
    1.6 ms of a 33 ms step there. `--rope-lower-to-cpu` runs it after
    bufferization, before the loops.

    A copy not known to be small (under 256 KiB by its static shape) is
    split across the cores: an `scf.forall` over its outermost dim other
    than the innermost whose extent is not 1 (a cache's kv heads), each
    iteration a `linalg.copy` of one slice. On one core, a decode step over
    4096 cached keys of 8 f32 kv heads copied its 33 MiB of K and V at
    single-core bandwidth.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect"];
}

def RopePrefetchStreamedTiles
    : Pass<"rope-prefetch-streamed-tiles", "::mlir::func::FuncOp"> {
  let summary = "Register blocks prefetch the tile that their loop reads next";
  let description = [{
    In a loop that reads one tile of a buffer per iteration (a *stream*:
    the attention's key loop reads a tile of K and one of V per key tile)
    around two or more register-block nests (its Q·Kᵀ and P·V), each nest
    prefetches, into L2, the tile of the stream read next: the first stream
    read after the nest in the same iteration, else the first stream's
    tile of the next iteration. The tile's lines are spread evenly over the
    nest's iterations (one `memref.prefetch` or a few at the top of each
    reduction step), so the fetch overlaps the FMAs.

    A stream is a box of a buffer defined outside the loop, read by a
    `memref.subview` or a `vector.transfer_read` in the loop: along one dim
    it starts at the induction variable plus loop-invariant values (an
    `arith.addi` or `affine.apply` of them; offsets defined inside the loop
    count as 0) and is `step` long (a subview: its static size); along the
    other dims it is one loop-invariant index or, where the index varies
    inside the loop, the whole static dim; the last dim is contiguous. Tiles
    under 4 KiB (a tile's positions) are left to demand loads, and tiles
    over 64 KiB to the hardware's stream prefetchers (a decode split's K or
    V tile of 64 keys of every kv head, 128 KiB in f16, was 4–12% slower
    prefetched; `rope-tile-attention` now sizes decode's split tiles to
    64 KiB, which prefetched run up to 1.8× faster). A register-block
    nest is the loops with static trip counts around an `scf.for` that
    carries one vector of accumulators (rank 2 or more) updated by
    `vector.fma` (what `rope-vectorize-contractions` builds); the nests of
    a single matmul are left alone (their own reduction reads their
    operands next). The rows of the last tile's successor are clamped to
    the buffer.

    Without it, the first register blocks that touch a tile stall on its
    lines (from L3 or memory: a head's K and V outgrow L2 from a few
    thousand keys) while later ones find them in cache. Causal prefill,
    S = 2048–4096, 32 heads: 5–9% faster (A/B in one process), the P·V
    loop's share of the samples 41% → 37% and the K tile's transposition
    6.8% → 3.1%. `--rope-lower-to-cpu` runs it after bufferization (option
    `prefetch-tiles`).
  }];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def RopeVectorizeContractions
    : Pass<"rope-vectorize-contractions", "::mlir::func::FuncOp"> {
  let summary = "Register-blocked FMA micro-kernels for linalg contractions";
  let description = [{
    Rewrites each linalg contraction on tensors with static loop ranges, or
    with a dynamic row extent only (`linalg.matmul`, `batch_matmul`,
    `matmul_transpose_b`, and generics such as the attention tiles' Q·Kᵀ
    and P·V, or a frontend's projection over a run-time sequence length),
    into loops around registers of accumulators, by one of three strategies,
    tried in this order: dot products, lane sums, register blocks.

    Dot products: a one-row product outside any loop that reads both inputs
    along the reduction dim (`out[0, n] += a[0, k] · w[n, k]`: a decode
    step's linear layer, W stored [out, in]) is not packed: each element of
    W is used once, so W is read as stored, by dot products along its rows
    (f16 and bf16 operands widened in registers as they are loaded). The
    rows of W are split over the cores (`scf.forall` of 8 chunks), and each
    chunk is a lane sum (below) whose columns are W's rows: blocks of 16
    rows, each row's 16 lanes in a register of its own for the whole K
    sweep, added up in the chunk (no serial pass over all lanes after the
    parallel loop).

    Lane sums: any other reduction of two or more inputs, all read along
    their innermost dim: `out[...] += f(x₀[..., r], x₁[..., r], ...)`, f
    any elementwise function (a decode tile's scores with K's pairs rotated
    inside the reduction, `Σ_t q·rotate(k, cos, sin)`), or a plain
    contraction whose rows fit one register block (a decode tile's Q·Kᵀ
    over a cache of rotated keys, which the register blocks' step 1. would
    transpose for rows that use each key once). Its reduction splits into
    steps of 16 lanes (8 where it is not a multiple of 16: a head of 80),
    the output into blocks of as many outputs (rows that the column inputs
    do not read × columns: 4 query rows × 4 keys), each block's lanes held
    in registers across the steps (the step's unit dims dropped, so that it
    vectorises to the body's own ops and its products fuse into FMAs), then
    added up by a butterfly across the block's 16 registers (pairs of
    registers, each pair's two shuffles gathering halves of its outputs'
    lanes for one add: 30 shuffles and 15 adds), rather than a shuffle tree
    per output. f runs once per loaded vector: the block's rows share what
    they do not read (a key's rotation serves the 4 rows of its group).

    Register blocks: every other contraction becomes a nest of loops around
    a register block:

    1. The output's innermost dim must be one of the contraction's N dims
       (columns); the operand that carries it (B) is packed so that this dim
       is its innermost one too (a copy into a fresh tensor, once per op:
       the attention's K tile becomes Kᵀ), so that one K step reads B as
       contiguous vectors; f16/bf16 operands are converted to f32 there,
       except a B already laid out so whose rows fit one register block
       (a decode tile's P·V: V is then read once, as stored, and widened
       in registers).
       Where the copy moves B's innermost dim (a transposition, K into Kᵀ)
       and both dims are multiples of 16, it goes in 16 × 16 blocks: 16 rows
       of B read as vectors, transposed in registers (vector.transpose's
       16 × 16 shuffle lowering) and written as 16 rows; LLVM's own
       vectorization of the copy gathers one element per lane (27% of a
       decode step's time). A large op's panels (2.) stay one
       `linalg.transpose`, which `--rope-parallelize-elementwise` splits
       over the cores.
       A B that a `linalg.transpose` produced (a frontend's `x · Wᵀ`) is
       read through it, so that the pack is the only copy of the weight.
    2. A large op outside any loop (a user's matmul; at least 2^22
       multiply-adds, a dynamic extent counted once) packs B instead, in the
       same single copy from whatever layout it has, into column panels as
       BLIS does (`[n / columns][k][columns]`: one register block's K sweep
       reads one contiguous micro-panel instead of a cache line from each
       of K rows a power-of-two stride apart), and is split across cores
       (its rows into an `scf.forall` of 8 chunks, or its column blocks
       where the rows are dynamic or too few to split) and into panels of 256 columns × 512
       reduction steps, whose B panel (512 KiB of f32) stays in L2 (each
       panel of K loads and stores the output's accumulators once more: 512
       steps were 2-10% faster than 256 on a frontend's projections, f32,
       S = K = 4096; level at K = 1024 and with static rows); each
       row block's slice of A (16 KiB) stays in L1 while the panel's column blocks stream their
       micro-panels of B from L2 (a 32 KiB micro-panel kept in L1 instead
       would be the whole of it: 27% slower on a 2-core Xeon, a 4096³ f32
       matmul with static rows at 277 rather than 379 GFLOP/s). Its output
       is viewed as [m][n / columns][columns]; a fresh zeroed one (a fill of
       tensor.empty) is built in that shape directly, so that bufferization
       puts the product in the caller's buffer (as an expand_shape of
       tensor.empty it was computed aside and copied there: 2048³ 2–3%
       slower). The attention tiles are already split and small.
    3. Dynamic rows: the op is tiled by `register-rows` rows and that loop
       peeled; its full tiles are cast to static shapes, the tile of the
       rows left is tiled again one row at a time (a block of 1 row).
    4. The op is tiled (`scf.for`): `register-rows` rows of its innermost
       non-unit M dim (decode's GQA group rather than its single query row)
       by `register-columns` columns of N, one step of each reduction dim,
       every other dim 1; reduction loops innermost.
    5. The tile's unit dims except the reduction ones are dropped and it is
       vectorised to a `vector.contract` (rows × 1) · (1 × columns), lowered
       to a `vector.outerproduct`: one broadcast element of A per row, times
       a row of B, into the accumulator (FMAs once lowered).
    6. The accumulator's reads and writes are hoisted out of the reduction
       loop: it lives in registers for the whole K loop, which is unrolled
       by `reduction-unroll` steps (one increment and branch per 8 steps:
       a step's 26 instructions for 16 FMAs are about what a 4-wide core
       issues in the FMAs' 8 cycles, so the loop's own 3 per step made the
       front end set the pace; +7–9% on large f32 matmuls on a 2-core Xeon).

    Elementwise neighbours join the blocks (an op with static rows and
    columns that the block divides, not a large one of 2.): the
    all-parallel generic that alone reads the op's result, one element from
    one element without reading its own output (the attention tile's logits
    from its scores: scale, mask, causal and window rules, soft-cap), and
    the all-parallel generic that alone produces its accumulator (the online
    softmax's rescaling of the output tile by exp(m − m') before P·V adds to
    it), or the fill that zeroes it. The consumer (or the op) is tiled by
    the block with its producers fused (upstream tile-and-fuse; never the
    packs, which stay done once), the op's tile goes through 4.–6., and the
    neighbours' tiles are vectorised on the same registers: the rescaling
    as the accumulator is loaded before the K loop, the logits as it leaves
    it. Neither makes a pass of its own over the tile through memory any
    more (+5–10% on GQA prefill on a 2-core Xeon). Vector transfers then
    read and write the loops' tensors directly rather than through
    rank-reducing slices of slices, which bufferization would give a buffer
    and a copy per block.

    The block is sized for the host CPU's vector registers unless the
    options give it (0, the default, means the host's): 8 × 32 f32 with
    AVX-512 (sixteen 512-bit accumulators, two B vectors and broadcasts in
    the other 16 of its 32 registers), 4 × 16 elsewhere (eight 256-bit
    accumulators in the 16 registers of AVX2). Both keep enough independent
    FMA chains in flight to cover the FMA latency on two ports.
    Ops whose column extent is not a multiple of 8, or with a dynamic extent
    other than the rows, stay as they are (scalar loops, vectorised by LLVM when it
    can); so do ops inside `scf.forall` bodies smaller than a block.
    `--rope-lower-to-cpu` runs it on tensors after the linalg lowering when
    its option `microkernels` is on.
  }];
  let options = [
    Option<"registerRows", "register-rows", "int64_t", /*default=*/"0",
           "Rows of the M dim per register block (broadcast elements of A); "
           "0: sized for the host CPU">,
    Option<"registerColumns", "register-columns", "int64_t", /*default=*/"0",
           "Columns of the N dim per register block (a multiple of 8); 0: "
           "sized for the host CPU">,
    Option<"reductionUnroll", "reduction-unroll", "int64_t", /*default=*/"8",
           "K steps per iteration of a register block's reduction loop (1: "
           "not unrolled)">
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def RopePackTileProducts
    : Pass<"rope-pack-tile-products", "::mlir::func::FuncOp"> {
  let summary = "bf16/f16 matmuls on the CPU's matrix engine (AMX tiles, or "
                "AVX-512 BF16 dot products): operands packed into the tiles' "
                "layout, the product split over the cores";
  let description = [{
    Where the target has a matrix engine for the inputs' type (option
    `cpu-features`, default the host's) — AMX tiles (`amx-bf16` for bf16,
    `amx-fp16` for f16), else, for bf16, AVX-512 BF16 dot products
    (`avx512bf16` with `avx512f`: `vdpbf16ps`, which reads the same packed
    layout) — rewrites each linalg contraction on tensors outside any loop of the
    form `C[b..., m, n] += A[b..., m, k] · B[b..., k, n]` (a
    `linalg.matmul`, `batch_matmul`, or a frontend's projection
    `x · transpose(W)`, read through the transpose from W as stored) with
    bf16 (or f16) inputs, an f32 accumulator, static K and N that are
    multiples of 32 and any M (a run-time sequence length included) into
    three steps:

    1. B packed into the VNNI layout the tiles read, column panels of 32
       `[b..., N/32, K/2, 32, 2]` (pairs of consecutive k of one column
       side by side). From W as stored where B is its transpose (every
       linear layer of a model): a k pair of a row of W is one 32-bit
       word, so the pack is a transposition of words, built here as an
       `scf.forall` over the panels (the cores) of 16 × 16 blocks moved
       through registers (16 rows of 32 bf16 read, transposed as words by
       shuffles, written as 16 rows of the panel); upstream's
       `linalg.pack`, lowered, transposed bf16 elements, which LLVM
       gathered one at a time (`vpinsrw`): 27% of a bf16 Llama prefill on
       the dot products, and a 512 × 4096 × 4096 projection took 27.5 ms
       against 22.4 now. From B [b..., K, N]: a `linalg.pack`, lowered at
       once to an expansion and a transpose, which
       `--rope-parallelize-elementwise` splits over the cores. A and
       the accumulator keep their row-major layout (a tile reads 16 rows
       at the buffer's own stride), their rows padded with zeros to a
       multiple of 32 where M is not one (`tensor.pad`; a zero fill of the
       padded shape where the accumulator is a fill), and are only viewed
       in tiles: A as `[b..., ⌈M/32⌉, 32, K/32, 16, 2]`, C as
       `[b..., ⌈M/32⌉, 32, N/32, 32]`. An earlier form that also packed A
       into contiguous tiles and C into `[.., 32, 32]` blocks spent 17 ms
       of a 118 ms 4096³ call on those copies and C's unpacking.
    2. The product on these views, a `linalg.generic` marked
       `rope.tile_product = "amx"` (or `"avx512bf16"`: the engine that
       computes it; loops: b..., row panel, column panel, row,
       column, k / 32, k-pair, pair), split over the cores by its column
       panels (`scf.forall` of 8 chunks: each core's B panels stay in its
       L2); `--rope-lower-tile-products` turns it into tile instructions
       after bufferization.
    3. The result collapsed back to `[b..., M, N]`, the padded rows
       dropped by a slice (no copy).

    Both engines multiply bf16 (f16) pairs into f32 as the op does, each
    element of C summed in f32 (each pair's two products added in f32; bf16
    subnormal inputs read as zero); a bf16 result is rounded once, by the
    op's consumer, as before. Other contractions (the attention tiles, f32
    inputs, f16 without amx-fp16, shapes off the tile grid) are left to
    `--rope-vectorize-contractions` (FMAs after widening). `--rope-lower-to-cpu` runs it before
    that pass when its option `microkernels` is on.
  }];
  let options = [
    Option<"cpuFeatures", "cpu-features", "std::string",
           /*default=*/"\"host\"",
           "The target's CPU features: 'host', or a comma-separated list "
           "of LLVM feature names each with an optional + or -, from "
           "nothing or from the host's where it begins with 'host' "
           "(e.g. 'host,-amx-bf16')">
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::ub::UBDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def RopeLowerTileProducts
    : Pass<"rope-lower-tile-products", "::mlir::ModuleOp"> {
  let summary = "The packed products that --rope-pack-tile-products marked, "
                "on memrefs, as loops of AMX tiles or AVX-512 BF16 dot "
                "products";
  let description = [{
    Rewrites each `linalg.generic` on memrefs marked `rope.tile_product`
    (the form `--rope-pack-tile-products` builds: A and C row-major in
    rows of 32, B in VNNI column panels) into loops of its engine's
    instructions: `amx` ops where the mark is `"amx"`, `x86vector`
    dot products where it is `"avx512bf16"` (below). On tiles, each
    32 × 32 block of the output is four 16 × 16 f32 accumulator tiles, held
    in tile registers across its K slice; a K step of 32 loads two 16 × 32
    tiles of A (16 rows at A's stride) and two of B's panel and issues four
    `amx.tile_mulf` (`tdpbf16ps`, or `tdpfp16ps` for f16): all eight tile
    registers, each loaded tile used twice. The steps of a slice are
    unrolled, so that no tile value crosses a block boundary.

    Around the blocks, as BLIS does for its micro-kernels: column panels of
    8 blocks (256 columns) by K slices of up to 64 steps (2048; the largest
    divisor of K / 32 up to 64), whose slice of B (up to 1 MiB) stays in L2
    while every row panel of A streams past it; the accumulators are loaded
    and stored once per slice. Each block prefetches, spread over its
    steps, the lines the next block reads first: the next block's
    accumulators (C is larger than L2) and an eighth of the next row
    panel's A for the slice.

    Measured on a 2-core Sapphire Rapids VM (AMX peak 5,790 GFLOP/s on
    both cores, `benchmarks/limits/amx_peak.c`), 4096³ bf16 with the bf16
    result: 78-86 ms a call against `torch.matmul`'s 69-73 ms (oneDNN,
    itself at a third of the tile-resident peak); slices of 16 steps took
    106 ms, 32 took 90, 128 took 102 (B's slice out of L2); panels of 4 or
    16 blocks, and row blocks of 4-32 panels around the slices, were
    slower. A loop of tile loads from L1 and tdpbf16ps runs at the peak
    and one streaming B from a 512 KiB buffer at 95% of it, so what is
    left is the operands' traffic from L2 and L3.

    With AVX-512 BF16 (a host without AMX: AMD Zen 4 and 5, Intel Cooper
    Lake), the same panels and slices (up to 32 steps: B's slice of a
    panel, 512 KiB, within Zen's 1 MiB L2) hold register blocks of 8 rows ×
    32 columns: 16 accumulators of 16 f32, loaded from C, carried through a
    loop over the slice's k pairs, stored. A k pair of B's panel row is two
    registers (16 columns × the pair, as packed); each row's pair of A is
    broadcast to all lanes (one 32-bit load) and multiplies both with
    `x86vector.avx512.dot` (`vdpbf16ps`). Measured on a 2-core AMD EPYC
    (Zen 5, family 26; `vdpbf16ps` peak 1,060 GFLOP/s,
    `benchmarks/limits/dot_bf16_peak.c`): 4096³ bf16 with the bf16 result
    in 132 ms (1,040 GFLOP/s, 98% of that peak) against `torch.matmul`'s
    152 (oneDNN, also on `vdpbf16ps`) and 297 with the bf16 widened to f32
    FMAs; slices of 16 or 64 steps made no difference.

    Each function that holds a product first calls its engine's check in
    libRopeRuntime.so (`ropeRequireCpuTiles`, `ropeRequireCpuDotProducts`),
    on the calling thread: where the host lacks the engine (an object built
    on one machine, loaded on another) or Linux refuses the process the
    tiles' state, the call fails with a runtime error that names the cause
    (Python's `RuntimeCheckError`), before any of the engine's instructions
    could raise SIGILL.

    `--rope-lower-to-cpu` runs it after bufferization; the LLVM conversion
    then lowers the `amx` ops to the `*.internal` intrinsics, whose tile
    configuration LLVM's X86 backend writes (`ldtilecfg`) per function, and
    the dot products to `llvm.x86.avx512bf16.dpbf16ps.512`.
  }];
  let dependentDialects = [
    "::mlir::amx::AMXDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect",
    "::mlir::x86vector::X86VectorDialect"
  ];
}

def RopeVectorizeRowReductions
    : Pass<"rope-vectorize-row-reductions", "::mlir::func::FuncOp"> {
  let summary = "Row reductions of static f32 tiles (softmax's row max and "
                "row sum) 16 rows at a time, combined across lanes by a "
                "butterfly of shuffles";
  let description = [{
    Rewrites each `linalg.generic` on tensors that reduces the innermost
    dim of one static f32 input into an output of the other dims
    (`out[..., r] = out[..., r] ∘ in[..., r, c]`, ∘ one of `arith.addf`
    with the `reassoc` flag, `arith.maximumf`, `arith.maxnumf`,
    `arith.minimumf`, `arith.minnumf`), whose rows are a multiple of 16 and
    whose columns are a multiple of 16 and at most 256: the attention tiles'
    running max and row sum (`[.., 128 query rows, 64 keys]`), a softmax.

    The op is tiled into blocks of 16 rows (`scf.for`), each vectorised to
    a `vector.multi_reduction`, which is lowered as whole-vector ops: each
    row's slices of 16 lanes combined elementwise into one register, then a
    butterfly across the 16 rows' registers (pairs of registers, each
    pair's two shuffles gathering halves of its rows' lanes for one
    combination; 16 lanes a row, then 8, 4, 2, 1), which leaves row r in
    lane r: 30 shuffles and 15 combinations for 16 rows. Left to LLVM's
    loop vectoriser, each row was reduced alone, its last register across
    its own lanes through a chain of dependent shuffles and (for
    `maximumf`, which orders -0 below +0 and propagates NaN) blends and
    compares: 7% of prefill attention's time on a 2-core Xeon, now 2–3%
    (prefill 4–10% faster, S = 1024–2048).

    A `maximumf` or `minimumf` is reassociated as it stands (the result
    does not depend on the order); an `addf` only where its `reassoc` flag
    allows it. Other generics are left alone.
    `--rope-lower-to-cpu` runs it after `--rope-vectorize-contractions`
    when its option `microkernels` is on.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
}

#endif // ROPE_CODEGEN_CPU_PASSES_TD
