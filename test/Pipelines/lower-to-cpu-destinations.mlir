// RUN: rope-opt %s --rope-lower-to-cpu=parallel=false -o /dev/null \
// RUN:   --mlir-print-ir-after=rope-strided-copies-to-loops 2>&1 | FileCheck %s --check-prefix=IR

// --rope-lower-to-cpu gives each public function @f a destination form
// @f__into (--rope-destination-entry-points): after bufferization, it
// computes the results in the caller's buffers, with no buffer of its own
// for them and no copy, and @f allocates them and calls it.
// test/python/destinations.py runs both forms.

// The rotation writes the destination directly, seen as pairs: the only
// buffers it allocates are its cos/sin tables.
// IR-LABEL: func.func @rotate__into
// IR-SAME:    %[[OUT:[^:]+]]: memref<3x4xf32>) {
// IR:         %[[VIEW:.+]] = memref.expand_shape %[[OUT]] {{\[}}[0], [1, 2]]
// IR-NOT:     memref.alloc() {{.*}} : memref<3x4xf32>
// IR-NOT:     memref.copy
// IR:         linalg.generic {{.+}} outs(%[[VIEW]] : memref<3x2x2xf32>)
// IR-NOT:     memref.copy
// IR:         return
// IR-LABEL: func.func @rotate(
// IR:         %[[BUF:.+]] = memref.alloc() {alignment = 64 : i64} : memref<3x4xf32>
// IR:         call @rotate__into(%{{.+}}, %{{.+}}, %[[BUF]])
// IR:         return %[[BUF]]
func.func @rotate(%x: tensor<3x4xf32>, %p: tensor<3xi64>) -> tensor<3x4xf32> {
  %r = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<3x4xf32>, tensor<3xi64>
  return %r : tensor<3x4xf32>
}

// Tiled online attention: its last step (acc / l) writes the destination,
// seen with the tiles' head dims, and nothing is copied there. (A full query
// tile copies its 128 rows of running state, which is not the result.)
// IR-LABEL: func.func @attention__into
// IR-SAME:    %[[OUT:[^:]+]]: memref<1x4x?x16xf32>) {
// IR:         %[[VIEW:.+]] = memref.expand_shape %[[OUT]] {{\[}}[0], [1, 2], [3], [4]]
// IR-NOT:     memref.copy {{.*}} to memref<1x4x
// IR:         linalg.generic {{.+}} outs(%[[VIEW]] : memref<1x4x1x?x16xf32>)
// IR-NOT:     memref.copy {{.*}} to memref<1x4x
// IR:         return
// IR-LABEL: func.func @attention(
// IR:         %[[BUF:.+]] = memref.alloc(%{{.+}}) {alignment = 64 : i64} : memref<1x4x?x16xf32>
// IR:         call @attention__into(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[BUF]])
// IR:         return %[[BUF]]
func.func @attention(%q: tensor<1x4x?x16xf32>, %k: tensor<1x4x?x16xf32>,
                     %v: tensor<1x4x?x16xf32>, %p: tensor<?xi64>) -> tensor<1x4x?x16xf32> {
  %o = rope.attention %q, %k, %v positions(%p, %p : tensor<?xi64>, tensor<?xi64>)
      rotary(#rope.spec<>) causal
      : tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32>
  return %o : tensor<1x4x?x16xf32>
}

// A user's large matmul into a fresh zeroed result: its output, viewed as
// column panels, is the destination itself (filled, then accumulated into),
// not a buffer of its own copied there at the end.
// IR-LABEL: func.func @matmul__into
// IR-SAME:    %[[OUT:[^:]+]]: memref<512x512xf32>) {
// IR:         %[[VIEW:.+]] = memref.expand_shape %[[OUT]] {{\[}}[0], [1, 2]]
// IR-NOT:     memref.alloc() {{.*}} : memref<512x512xf32>
// IR-NOT:     memref.copy
// IR:         linalg.fill ins(%{{.+}} : f32) outs(%[[VIEW]] :
// IR-NOT:     memref.copy
// IR:         return
func.func @matmul(%a: tensor<512x1024xf32>, %b: tensor<1024x512xf32>) -> tensor<512x512xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512x512xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<512x512xf32>) -> tensor<512x512xf32>
  %r = linalg.matmul ins(%a, %b : tensor<512x1024xf32>, tensor<1024x512xf32>)
                     outs(%c : tensor<512x512xf32>) -> tensor<512x512xf32>
  return %r : tensor<512x512xf32>
}
