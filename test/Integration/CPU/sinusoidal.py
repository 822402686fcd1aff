# RUN: %python %s | FileCheck %s
"""rope.sinusoidal (Vaswani et al.: PE(p, 2i) = sin(p/θ^(2i/D)),
PE(p, 2i+1) = cos(p/θ^(2i/D))) against reference.sinusoidal: f32 and f16
results, positions [S] and [B, S], the default base and base = 500, and long
positions up to 2^20.

Tolerance: f32: 2 ulps of f32 at 1.0 (2^-22 absolute), since |PE| <= 1 and
the error comes from the phase, whose reduction is done in f64, plus the
f32 sin/cos (<= 1 ulp). f16: the same plus 1 ulp of f16 at |PE| (the final
rounding, <= ½ ulp, a whole ulp allowed for the f32 error carrying a value
across a power of two).
"""

import numpy as np

from rope_mlir import reference as ref
import rope_testing as T

D = 16
g = T.rng(20)
P_S = np.concatenate([np.arange(0, 24), [4095, 65536, 999_983, (1 << 20) - 1, 1 << 20],
                      g.integers(0, (1 << 20) + 1, 19)]).astype(np.int64)
P_BS = np.stack([np.arange(0, 10), np.arange(0, 10) + 1000, g.integers(0, (1 << 20) + 1, 10)]).astype(np.int64)

CASES = {
    # name: (positions, dtype, base or None)
    "f32 positions [S]": (P_S, "f32", None),
    "f32 positions [B,S]": (P_BS, "f32", None),
    "f32 base 500": (P_S, "f32", 500.0),
    "f16 positions [S]": (P_S, "f16", None),
    "f16 positions [B,S]": (P_BS, "f16", None),
}

for name, (p, dt, base) in CASES.items():
    pt = "tensor<" + "x".join(["?"] * p.ndim) + "xi64>"
    rt = "tensor<" + "x".join(["?"] * p.ndim) + f"x{D}x{dt}>"
    battr = "" if base is None else f" base = {base}"
    mlir = f"""func.func @kernel(%p: {pt}) -> {rt} {{
  %r = rope.sinusoidal %p{battr} : {pt} -> {rt}
  return %r : {rt}
}}"""
    with T.guard(name):
        lib = T.compile(mlir)
        out = T.call(lib, "kernel", p)
        expected = ref.sinusoidal(p, D, base=10000.0 if base is None else base)
        atol = 2 * T.ulp(1.0, "f32")
        if dt != "f32":
            atol = atol + T.ulp(expected, dt)
        T.check_stored(out, expected, atol, dt, f"sinusoidal {name}")
T.finish()

# CHECK: PASS sinusoidal f32 positions [S]:
# CHECK: PASS sinusoidal f32 positions [B,S]:
# CHECK: PASS sinusoidal f32 base 500:
# CHECK: PASS sinusoidal f16 positions [S]:
# CHECK: PASS sinusoidal f16 positions [B,S]:
