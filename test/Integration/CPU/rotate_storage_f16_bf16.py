# RUN: %python %s | FileCheck %s
"""rope.rotate with f16 and bf16 storage (math in f32): half and interleaved
layouts, llama3 frequencies, positions [S] and [B, S] up to 2^17; bf16 travels
as uint16 bit patterns. Inputs are quantized to the storage type, so the
reference sees exactly the kernel's inputs.

Tolerance (rope_testing.rotation_atol with dtype f16/bf16): 1 ulp of the storage
type at the pair norm, plus 2 ulps of f32 at the pair norm. The f32 result is
within 2 f32 ulps (as for f32 storage); rounding it to f16/bf16 adds <= ½ ulp
of the storage type at |y| <= pair norm, and a whole ulp is allowed because
the f32 error can carry |y| just past a power of two.
"""

import numpy as np

from rope_mlir import reference as ref
import rope_testing as T

g = T.rng(9)
p_s = np.array([0, 1, 2, 500, 8191, 8192, 1 << 17], np.int64)
p_bs = np.stack([p_s, p_s[::-1] + 3])

for dtype in ("f16", "bf16"):
    for layout in ("half", "interleaved"):
        spec = ref.RotarySpec(base=500000.0, layout=layout, scaling=ref.Scaling(
            "llama3", factor=8.0, original_max_position_embeddings=8192))
        attr = spec.to_attr()
        for pname, p, pty in (("[S]", p_s, "tensor<?xi64>"), ("[B,S]", p_bs, "tensor<2x?xi64>")):
            name = f"{dtype} {layout} positions {pname}"
            x = T.quantize(4.0 * g.standard_normal((2, 3, p_s.size, 32)), dtype)
            with T.guard(name):
                lib = T.compile(T.rotate_module(attr, f"tensor<2x3x?x32x{dtype}>", pty))
                out = T.call(lib, "kernel", T.to_storage(x, dtype), p)
                assert out.dtype == T.to_storage(x, dtype).dtype
                T.check_rotation_stored(out, ref.rotate(x, p, spec), x, spec, dtype, 2, name)
T.finish()

# CHECK: PASS f16 half positions [S]:
# CHECK: PASS f16 half positions [B,S]:
# CHECK: PASS f16 interleaved positions [S]:
# CHECK: PASS f16 interleaved positions [B,S]:
# CHECK: PASS bf16 half positions [S]:
# CHECK: PASS bf16 half positions [B,S]:
# CHECK: PASS bf16 interleaved positions [S]:
# CHECK: PASS bf16 interleaved positions [B,S]:
