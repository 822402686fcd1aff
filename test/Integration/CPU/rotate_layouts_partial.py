# RUN: %python %s | FileCheck %s
"""rope.rotate layouts and partial rotary, f32, head dim 20:
half (pairs (i, i + r/2)) and interleaved (pairs (2i, 2i + 1)), each with the
full head, with rotary dims 8 at offset 0 (GPT-NeoX rotary_pct), and with
rotary dims 8 at offset 6 (a rotated block inside the head).

Tolerance: 2 ulps of f32 at the pair norm (rope_testing.rotation_atol; m = 1).
Dims outside the rotated block must pass through bit for bit.
"""

import numpy as np

from rope_mlir import reference as ref
import rope_testing as T

D = 20
CASES = {}
for layout in ("half", "interleaved"):
    for dims, offset in ((0, 0), (8, 0), (8, 6)):
        spec = ref.RotarySpec(base=100.0, rotary_dims=dims or None, offset=offset, layout=layout)
        CASES[f"{layout}_d{dims}_o{offset}"] = (spec.to_attr(D), spec)

x = T.quantize(T.rng(5).standard_normal((2, 3, 6, D)), "f32")
p = np.array([0, 1, 2, 3, 50, 777], np.int64)

for name, (attr, spec) in CASES.items():
    with T.guard(f"rotate {name}"):
        lib = T.compile(T.rotate_module(attr, f"tensor<2x3x?x{D}xf32>", "tensor<?xi64>"))
        out = T.call(lib, "kernel", T.to_storage(x, "f32"), p)
        T.check_rotation_stored(out, ref.rotate(x, p, spec), x, spec, "f32", 2, f"rotate {name}")
        rotated = np.zeros(D, bool)
        rotated[spec.offset:spec.offset + (spec.rotary_dims or D)] = True
        if not rotated.all():
            T.check(out[..., ~rotated], x[..., ~rotated], 0.0, f"rotate {name} pass-through")

# Half and interleaved pair different dims: make sure they really differ.
assert np.abs(ref.rotate(x, p, CASES["half_d0_o0"][1]) -
              ref.rotate(x, p, CASES["interleaved_d0_o0"][1])).max() > 0.1
T.finish()

# CHECK: PASS rotate half_d0_o0:
# CHECK: PASS rotate half_d8_o0:
# CHECK: PASS rotate half_d8_o0 pass-through
# CHECK: PASS rotate half_d8_o6:
# CHECK: PASS rotate half_d8_o6 pass-through
# CHECK: PASS rotate interleaved_d0_o0:
# CHECK: PASS rotate interleaved_d8_o0:
# CHECK: PASS rotate interleaved_d8_o0 pass-through
# CHECK: PASS rotate interleaved_d8_o6:
# CHECK: PASS rotate interleaved_d8_o6 pass-through
