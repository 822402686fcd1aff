//===- EmulatedKernel.h - GPU kernels as emulator fibers --------*- C++ -*-===//
//
// What --rope-emulate-gpu-on-host does to a kernel once its body is an
// llvm.func that the emulator runtime (libRopeGpuEmulator.so,
// include/rope/Runtime/GpuEmulator.h) runs once per GPU thread, each
// thread a fiber: GPU ops become runtime calls, memory accesses are
// checked, and GPU address spaces become host memory.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_LIB_CODEGEN_GPU_EMULATION_EMULATEDKERNEL_H
#define ROPE_LIB_CODEGEN_GPU_EMULATION_EMULATEDKERNEL_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::rope::emulation {

/// Calls of the emulator runtime, declared in the module on first use.
class RuntimeCalls {
public:
  explicit RuntimeCalls(ModuleOp module) : module(module) {}

  /// Calls `name(args)`; index arguments are passed as i64. Returns the
  /// result (null for none).
  Value call(OpBuilder &b, Location loc, StringRef name, ValueRange args,
             Type result = {});
  /// `value` (index) as the i64 the runtime takes.
  static Value toI64(OpBuilder &b, Location loc, Value value);
  /// An i32 constant.
  static Value i32(OpBuilder &b, Location loc, int64_t value);
  /// An i64 constant.
  static Value i64(OpBuilder &b, Location loc, int64_t value);

private:
  ModuleOp module;
};

/// The address space number of a memref type the runtime reports: 3 for
/// workgroup, 5 for private, 1 for global, else the integer space (0).
int64_t addressSpaceOf(MemRefType type);

/// Whether `type` lives in workgroup (shared) memory.
bool isWorkgroupMemory(MemRefType type);

/// A buffer of `bytes` bytes (16-byte aligned) on the fiber's stack,
/// allocated once in `kernel`'s entry block, not once per loop iteration.
Value entryBuffer(LLVM::LLVMFuncOp kernel, int64_t bytes);

/// The address of element `indices` of `memref`, as an !llvm.ptr.
Value elementAddress(OpBuilder &b, Location loc, Value memref,
                     ValueRange indices);

/// Checks, before every memory access in `kernel`, that its indices are
/// inside the memref (else ropeGpuEmuOutOfBounds, which ends the launch)
/// and reports accesses of workgroup memory to the race and uninitialised
/// read checkers (ropeGpuEmuSharedAccess). Fails on an op that accesses a
/// memref in a way it cannot check.
LogicalResult instrumentMemoryAccesses(LLVM::LLVMFuncOp kernel,
                                       RuntimeCalls &rt);

/// The attribute by which the launch's plan gives an nvgpu.mbarrier.create
/// its byte offset in the block's workgroup memory.
constexpr llvm::StringLiteral kMbarrierOffsetAttr = "rope.emulator_offset";

/// Rewrites `op` if it is one of the Hopper (sm_90a) ops the emulator runs
/// (EmulatedHopperOps.cpp): true when rewritten, false when `op` is none of
/// them, failure (with a diagnostic) when it is one the emulator cannot
/// run in this form.
FailureOr<bool> rewriteHopperOp(OpBuilder &b, Operation *op, RuntimeCalls &rt);

/// Replaces the GPU ops of `kernel` (ids, barriers, shuffles, mma.sync,
/// ldmatrix, cp.async, and the Hopper ops of rewriteHopperOp) with runtime
/// calls; fails on a GPU op it cannot run.
LogicalResult rewriteGPUOps(LLVM::LLVMFuncOp kernel, RuntimeCalls &rt);

/// Gives every memref value of `kernel` in a GPU address space the same
/// type in host memory.
void stripGPUAddressSpaces(LLVM::LLVMFuncOp kernel);

} // namespace mlir::rope::emulation

#endif // ROPE_LIB_CODEGEN_GPU_EMULATION_EMULATEDKERNEL_H
