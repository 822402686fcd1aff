// RUN: %mlir_opt %s --load-dialect-plugin=%rope_plugin --load-pass-plugin=%rope_plugin --pass-pipeline="builtin.module(rope-lower-to-cpu)" | FileCheck %s
// RUN: rope-opt %s --pass-pipeline="builtin.module(rope-lower-to-cpu)" | FileCheck %s

// The named pipeline rope-lower-to-cpu in a textual pass pipeline anchored
// on builtin.module: the only way the stock mlir-opt can reach it (plugin
// passes get no command-line flag). Regression test: building this pipeline
// used to abort with "LLVM ERROR: Can't add pass 'LLVMRequestCWrappersPass'
// restricted to 'func.func' on a PassManager intended to run on
// 'builtin.module'" (the pass was added with addPass instead of
// addNestedPass<func::FuncOp>).

// CHECK: llvm.func @rotate
// CHECK-NOT: rope.

func.func @rotate(%x: tensor<4x8xf32>, %p: tensor<4xi64>) -> tensor<4x8xf32> {
  %0 = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<4x8xf32>, tensor<4xi64>
  return %0 : tensor<4x8xf32>
}
