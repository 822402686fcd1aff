//===- Passes.td - rope codegen passes for every target ----*- tablegen -*-===//
//
// Codegen steps that the CPU and the GPU pipelines share, or that are not
// tied to either target.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_CODEGEN_COMMON_PASSES_TD
#define ROPE_CODEGEN_COMMON_PASSES_TD

include "mlir/Pass/PassBase.td"

def RopeLowerRuntimeChecks
    : Pass<"rope-lower-runtime-checks", "::mlir::ModuleOp"> {
  let summary = "Lower rope.assert and cf.assert to calls of the rope "
                "runtime's error report";
  let description = [{
    Each `rope.assert` (and each `cf.assert`, e.g. from upstream's runtime
    verification) becomes a branch on its condition to a call of

    ```c
    void ropeRuntimeError(const char *message, int64_t numValues,
                          const int64_t *values);
    ```

    with the message as a private constant string and the values (index or
    integers, sign-extended to i64) in a stack array. The function is
    `libRopeRuntime.so`'s (`include/rope/Runtime/RuntimeErrors.h`): it hands
    the message, with `{i}` replaced by the values, to the host (a Python
    exception, a status from `ropeRuntimeCall`, or the host's handler) and
    never returns, so nothing after a failed check runs. Without a host it
    prints the message to stderr and exits with status 1 (`mlir-runner`
    with `--shared-libs=libRopeRuntime.so`). The call is declared
    `noreturn`.

    Asserts inside `gpu.module`s (device code) are left to upstream's
    lowering. Both CPU and GPU pipelines run it before the LLVM conversion.
  }];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def RopeReadOnlyPublicArguments
    : Pass<"rope-readonly-public-arguments", "::mlir::ModuleOp"> {
  let summary = "Mark tensor arguments of public functions non-writable for "
                "bufferization";
  let description = [{
    Sets `bufferization.writable = false` on every tensor argument of every
    public `func.func` with a body; private and external functions, and
    arguments of other types, are left alone.

    One-shot bufferization with `bufferize-function-boundaries` otherwise
    treats those arguments as writable and may update a caller's input in
    place (a partial rotation writes its rotated dims into the input), but
    callers of compiled code expect their arguments to survive the call.
    With the attribute, the bufferizer writes into a copy instead. Both
    `--rope-lower-to-cpu` and `--rope-lower-to-nvvm` run it just before
    bufferization.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def RopeDestinationEntryPoints
    : Pass<"rope-destination-entry-points", "::mlir::ModuleOp"> {
  let summary = "Give each public function a form that writes its results "
                "into the caller's buffers";
  let description = [{
    Each public `func.func @f` on tensors that returns ranked tensors, with
    one block, becomes two functions:

    * `@f__into(args..., %out0: memref<...>, ...)`: `@f`'s body, ending in
      `bufferization.materialize_in_destination %result in restrict
      writable %out` for each result instead of returning it. Empty-tensor
      elimination then computes the result in the caller's buffer (no
      allocation, no copy) where it is built in destination style; a result
      that is a reshape of one (`tensor.expand_shape`, `collapse_shape`) is
      materialized into the same reshape of the destination. A result that
      is not (an argument returned as is, a constant) is copied.
    * `@f(args...)`: the same signature as before; it allocates the results
      (64-byte aligned) and calls `@f__into`.

    The destination form checks, before anything runs, that each
    destination's dynamic extents are the result's (`rope.assert`, reported
    through the rope runtime); the static ones are the memref type's. So
    both forms need each result extent as a function of the arguments'
    extents: through destinations, `tensor.empty`'s sizes and ops that
    reify their result shapes, down to `tensor.dim` of arguments and pure
    scalar ops in the function's entry block. A function whose extents are
    not known before its body runs (one read from a tensor's contents), and
    one whose `@f__into` name is taken, is left as it is.

    `--rope-lower-to-cpu` runs it before bufferization (option
    `destination-entry-points`, on by default): Python calls `@f__into` for
    `m.f(x, out=y)`.
  }];
  let dependentDialects = [
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::rope::RopeDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def RopeDecomposeAggregatedOps : Pass<"rope-decompose-aggregated-ops"> {
  let summary = "Decompose ops that aggregate others (linalg.softmax, "
                "tensor.concat) into the ops they stand for";
  let description = [{
    Every op implementing upstream's `linalg::AggregatedOpInterface` is
    replaced by what its `decomposeOperation` builds: `linalg.softmax`
    becomes the row max, `exp(x − max)`, the row sum and the division, as
    linalg ops on tensors that the rest of a pipeline tiles, fuses and
    bufferizes like any other. Frontends emit `linalg.softmax` around
    attention (torch-mlir's lowering of `torch.softmax`) when it is not
    raised to `rope.attention`; upstream decomposes it only through the
    transform dialect. `--rope-lower-to-cpu` runs it after the rope-level
    passes. An op whose decomposition fails is an error at its location.

    A `tensor.concat` becomes a `tensor.empty` and one `tensor.insert_slice`
    per operand (upstream's decomposition). Bufferized as it is, a concat
    allocates its own buffer; as insert_slices into an empty tensor, a
    concat that is a function's result (a decode step's KV cache with the
    new key appended) is written straight into the buffer the caller
    passes for it, instead of being copied there afterwards.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def RopeFuseElementwiseOps : Pass<"rope-fuse-elementwise-ops"> {
  let summary = "Fuse elementwise linalg producers into their consumers, "
                "never one that reads its own outputs";
  let description = [{
    Upstream's elementwise fusion on tensors (`linalg.generic` producers into
    the generics that read them, reshapes propagated by expansion, fills and
    constants folded), with one rule more: a producer whose body reads one
    of its outputs is not fused. Such a generic updates a tensor in place
    (`acc ← c·acc`, the running max and sum of online attention); moved into
    a consumer that reads its result through a broadcasting map, the update
    would run once per broadcast iteration on the already updated value
    (upstream `--linalg-fuse-elementwise-ops` does this). Nor is a producer
    fused into a consumer with reduction loops that does not read it at
    every loop (a contraction): a model's final norm fused into its
    vocabulary projection would recompute its rsqrt once per output column
    and leave a contraction of more than two inputs, which no micro-kernel
    takes. Otherwise, as upstream, a producer is fused only into its single
    user.
    `--rope-lower-to-cpu` and `--rope-lower-to-nvvm` run it after the rope
    ops became linalg.
  }];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def RopeApproximateMath : Pass<"rope-approximate-math", "::mlir::ModuleOp"> {
  let summary = "Polynomial approximation of f32 exp (softmax)";
  let description = [{
    Replaces `math.exp` on f32 (scalars and vectors) with MLIR's polynomial
    approximation (`populateMathPolynomialApproximationPatterns`) in
    `arith`, `math` and `vector` ops; other math ops and other float types
    are left alone.

    Unlike a libm call, the approximation vectorises: softmax's exp runs on
    whole vectors inside the attention tiles instead of one `expf` call per
    score. Its error (a few ulps) is far inside attention's tolerances.
    `sin` and `cos` stay libm calls: their approximations exceed the 2-ulp
    tolerances of the rotation tests (by up to 1.4×), and the rope cos/sin
    tables evaluate their own f64 polynomials anyway.
    `--rope-lower-to-cpu` runs it on the host loops just before the LLVM
    conversion (option `approximate-math`, on by default).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect"
  ];
}

#endif // ROPE_CODEGEN_COMMON_PASSES_TD
