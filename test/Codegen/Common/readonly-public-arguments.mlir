// RUN: rope-opt %s --split-input-file --rope-readonly-public-arguments | FileCheck %s

// Every tensor argument of a public function becomes read-only for
// bufferization (an explicit writable one too); other arguments keep no
// attribute.
// CHECK-LABEL: func.func @public
// CHECK-SAME:    (%{{.+}}: tensor<4xf32> {bufferization.writable = false}, %{{.+}}: memref<4xf32>, %{{.+}}: f32, %{{.+}}: tensor<?x8xf16> {bufferization.writable = false})
func.func @public(%t: tensor<4xf32>, %m: memref<4xf32>, %s: f32,
                  %u: tensor<?x8xf16> {bufferization.writable = true}) -> tensor<4xf32> {
  return %t : tensor<4xf32>
}

// -----

// Private functions (called only from compiled code) and declarations are
// left alone.
// CHECK-LABEL: func.func private @private_fn
// CHECK-SAME:    (%{{.+}}: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-LABEL: func.func private @external
// CHECK-SAME:    (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NOT:   bufferization.writable
func.func private @private_fn(%t: tensor<4xf32>) -> tensor<4xf32> {
  return %t : tensor<4xf32>
}
func.func private @external(%t: tensor<4xf32>) -> tensor<4xf32>
