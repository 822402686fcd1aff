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
  let summary = "Tile large top-level elementwise linalg ops into scf.forall";
  let description = [{
    Splits each `linalg.generic` with no reduction dim that is not inside a
    loop and has at least 2^15 iterations, or a dynamic dim, into an
    `scf.forall` of 8 chunks (a few per core keeps the load balanced) along
    its outermost non-unit dim. These are the standalone rotations, cos/sin
    tables and dtype conversions that are not already inside an attention
    tile: memory-bound ops need every core to reach the machine's bandwidth.

    Left alone: ops with a reduction dim, ops inside a loop (the attention
    tiles are parallel already), smaller ops (a parallel region would cost
    more than it saves), and ops that cannot be tiled (they stay
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

#endif // ROPE_CODEGEN_CPU_PASSES_TD
