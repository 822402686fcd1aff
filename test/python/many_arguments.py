# RUN: %python %s | FileCheck %s
"""Functions with several results and with more arguments than
ropeRuntimeCall passes directly (32 pointers: a model's graph takes every
weight), JIT-compiled and compiled ahead of time into a shared library:

* several results come back as a tuple, in order, each owning its memory
  (two results of one allocation share it and free it once);
* 41 arguments and 3 results (44 descriptors) go through the module's
  packed entry point (`_rope_packed_<name>`), with the same values as numpy;
* a failed runtime check through the packed entry point is still a
  RuntimeCheckError.
"""

import gc
import tempfile
from pathlib import Path

import numpy as np

import rope_mlir

N = 40
args = ", ".join(f"%a{i}: tensor<?x4xf32>" for i in range(N))
body = ["  %s0 = arith.addf %a0, %a1 : tensor<?x4xf32>"]
for i in range(2, N):
    body.append(f"  %s{i - 1} = arith.addf %s{i - 2}, %a{i} : tensor<?x4xf32>")
last = f"%s{N - 2}"
text = f"""
func.func @many({args}, %pos: tensor<?xi64>) -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {{
{chr(10).join(body)}
  %m = arith.mulf %a0, %a{N - 1} : tensor<?x4xf32>
  %r = rope.rotate %a1, %pos rotary(#rope.spec<base = 100.0>) : tensor<?x4xf32>, tensor<?xi64>
  return {last}, %m, %r : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>
}}
func.func @pair(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {{
  %y = arith.addf %x, %x : tensor<3xf32>
  return %y, %y : tensor<3xf32>, tensor<3xf32>
}}
"""

rng = np.random.default_rng(0)
xs = [rng.standard_normal((5, 4), dtype=np.float32) for _ in range(N)]
want_sum = np.sum(np.stack(xs).astype(np.float64), axis=0)
want_mul = xs[0] * xs[N - 1]
want_rot = rope_mlir.reference.rotate(xs[1].astype(np.float64), np.arange(5),
                                      rope_mlir.RotarySpec(base=100.0))

with tempfile.TemporaryDirectory() as tmp:
    for label, module in (("jit", rope_mlir.compile(text)),
                          ("shared library", rope_mlir.compile(text, output=str(Path(tmp) / "m.so")))):
        total, product, rotated = module.many(*xs, np.arange(5))
        assert np.abs(total - want_sum).max() < 1e-5 * np.abs(want_sum).max()
        assert np.array_equal(product, want_mul)
        assert np.abs(rotated - want_rot).max() < 1e-6
        y1, y2 = module.pair(np.arange(3, dtype=np.float32))
        assert np.array_equal(y1, [0, 2, 4]) and np.array_equal(y2, [0, 2, 4])
        del y1
        gc.collect()
        assert np.array_equal(y2, [0, 2, 4])  # the shared allocation outlives one result
        try:
            module.many(*xs, np.arange(6))
            raise AssertionError("a mismatched size passed")
        except rope_mlir.RuntimeCheckError as e:
            check = str(e).splitlines()[0]
        print(f"PASS {label}: {N + 1} arguments, 3 results; runtime check: {check}")

# CHECK: PASS jit: 41 arguments, 3 results; runtime check: @many:
# CHECK: PASS shared library: 41 arguments, 3 results; runtime check: @many:
