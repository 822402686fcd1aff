# UNSUPPORTED: asan
# RUN: rm -rf %t && mkdir -p %t/cwd %t/tmp && cd %t/cwd && env TMPDIR=%t/tmp %python %s | FileCheck %s
"""A thousand in-process compiles leave no file behind and do not grow the
process without bound.

Each compile is a different module (its own rotary base), JIT-compiled,
called once and dropped. Checked: the working directory and $TMPDIR stay
empty, no file descriptor stays open, and the resident set after compile
1000 is within 16 MiB of where it was after compile 200 (what a compile
keeps is freed with its module; the first compiles load libraries and fill
caches, hence the warm-up). The sanitizer build skips it: a thousand
instrumented compiles take too long there.
"""

import os
import tempfile

import numpy as np

import rope_mlir
from rope_mlir import RotarySpec
import rope_testing as T


def resident_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def listing():
    return (sorted(os.listdir(".")), sorted(os.listdir(tempfile.gettempdir())),
            sorted(os.listdir("/proc/self/fd")))


x = T.rng(0).standard_normal((1, 2, 3, 8)).astype(np.float32)
positions = np.arange(3)
before = None
for i in range(1000):
    spec = RotarySpec(base=500.0 + i)
    module = rope_mlir.compile(T.rotate_module(spec.to_attr(), "tensor<1x2x?x8xf32>",
                                               "tensor<?xi64>"))
    out = module.kernel(x, positions)
    assert np.allclose(out, rope_mlir.reference.rotate(x, positions, spec), atol=1e-5), i
    del module, out
    if i == 0:
        before = listing()
    if i == 199:
        warm = resident_mib()

grown = resident_mib() - warm
after = listing()
print(f"COMPILED 1000 modules; resident set grew {grown:.1f} MiB after compile 200")
assert grown < 16, f"the process grew by {grown:.1f} MiB over 800 compiles"
assert after == before, f"files or descriptors left behind: {before} -> {after}"
assert after[0] == [] and after[1] == [], after
print("NO FILES left in the working directory or TMPDIR; descriptors unchanged")
# CHECK: COMPILED 1000 modules
# CHECK: NO FILES left
