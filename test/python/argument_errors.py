# RUN: %python %s | FileCheck %s
"""Library.call checks its arguments against the function's signature before
calling: a wrong dtype, rank, static extent or count is a ValueError
(compiler.ArgumentError) that names the argument and both types."""

import numpy as np

import rope_mlir

lib = rope_mlir.compile("""func.func @rot(%x: tensor<?x2x?x8xf32>, %pos: tensor<?xi64>) -> tensor<?x2x?x8xf32> {
  %r = rope.rotate %x, %pos rotary(#rope.spec<>) : tensor<?x2x?x8xf32>, tensor<?xi64>
  return %r : tensor<?x2x?x8xf32>
}""")
x, p = np.zeros((1, 2, 3, 8), np.float32), np.arange(3)
for args in [(x.astype(np.float64), p), (x, p.astype(np.int32)), (x[0], p), (np.zeros((1, 3, 3, 8), np.float32), p),
             (x,), (x, p, p)]:
    try:
        lib.call("rot", *args)
        print("ACCEPTED")
    except ValueError as e:
        print(type(e).__name__, e)
print("OK", lib.call("rot", x, p).shape)
# CHECK: ArgumentError @rot argument #0 (%x): expected tensor<?x2x?x8xf32> (stored as float32), got float64 of shape (1, 2, 3, 8)
# CHECK: ArgumentError @rot argument #1 (%pos): expected tensor<?xi64> (stored as int64), got int32 of shape (3,)
# CHECK: ArgumentError @rot argument #0 (%x): expected tensor<?x2x?x8xf32> (rank 4), got float32 of shape (2, 3, 8)
# CHECK: ArgumentError @rot argument #0 (%x): expected tensor<?x2x?x8xf32> (dim 1 = 2), got float32 of shape (1, 3, 3, 8)
# CHECK: ArgumentError @rot takes 2 arguments (tensor<?x2x?x8xf32>, tensor<?xi64>), got 1
# CHECK: ArgumentError @rot takes 2 arguments (tensor<?x2x?x8xf32>, tensor<?xi64>), got 3
# CHECK-NOT: ACCEPTED
# CHECK: OK (1, 2, 3, 8)
