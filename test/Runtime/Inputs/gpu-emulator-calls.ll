; The calls of libRopeGpuEmulator.so as code lowered for the GPU emulator
; declares them (the C API of include/rope/Runtime/GpuEmulator.h written as
; LLVM IR by hand). Once the emulator's lowering pass exists, gpu-emulator-abi.test
; should check that pass's output instead of (or as well as) this file.
declare void @ropeGpuEmuLaunch(ptr, ptr, ptr, i64, i64, i64, i64, i64, i64, i64)
declare i64 @ropeGpuEmuThreadId(i32)
declare i64 @ropeGpuEmuBlockId(i32)
declare i64 @ropeGpuEmuBlockDim(i32)
declare i64 @ropeGpuEmuGridDim(i32)
declare i64 @ropeGpuEmuLaneId()
declare void @ropeGpuEmuBarrier()
declare void @ropeGpuEmuBarrierSite(i64)
declare ptr @ropeGpuEmuShared(i64)
declare void @ropeGpuEmuSharedAccess(ptr, i64, i32)
declare void @ropeGpuEmuOutOfBounds(i32, i64, i64, i64)
declare void @ropeGpuEmuKernelError(ptr, i64, ptr)
declare i32 @ropeGpuEmuShuffle(i32, i32, i32, i32, ptr)
declare void @ropeGpuEmuMmaSync(i32, ptr, ptr, ptr, ptr)
declare void @ropeGpuEmuLdmatrix(ptr, i32, i32, ptr)
declare void @ropeGpuEmuAsyncCopy(ptr, ptr, i64)
declare void @ropeGpuEmuAsyncCopyPartial(ptr, ptr, i64, i64)
declare void @ropeGpuEmuAsyncCommit()
declare void @ropeGpuEmuAsyncWait(i32)
