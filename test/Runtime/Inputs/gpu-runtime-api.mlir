// The parts of the mgpu* API that our pipeline does not emit itself, for
// abi.test: memset, host registration, and stream/event synchronisation.
func.func @api(%h: memref<64xf32>, %v: i32) {
  %u = memref.cast %h : memref<64xf32> to memref<*xf32>
  gpu.host_register %u : memref<*xf32>
  %d = gpu.alloc () : memref<64xi32>
  gpu.memset %d, %v : memref<64xi32>, i32
  gpu.dealloc %d : memref<64xi32>
  gpu.host_unregister %u : memref<*xf32>
  return
}
