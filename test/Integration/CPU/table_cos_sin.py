# RUN: %python %s | FileCheck %s
"""rope.table on its own: the f32 cos and sin tables (attention factor m folded
in, sin negated for an inverse spec) against reference.cos_sin_table, for
positions [S] up to 2^20 and [B, S]. A function returns one tensor, so each
table comes from its own function (@cos_table, @sin_table) of one module.
(Not @cos / @sin: exported from the kernel's shared library, those names
would interpose libm's and the kernel's own calls would resolve to them.)

Tolerance: 2 ulps of f32 at m, the largest magnitude of a table entry: the
f64-reduced phase leaves the f32 cos/sin (<= 1 ulp) and the rounding of m·cos,
m·sin (½ ulp); entries near zero are held to the same absolute bound, since
their error comes from the phase, whose scale is m.
"""

import numpy as np

from rope_mlir import reference as ref
import rope_testing as T

HEAD_DIM = 16
# Each kernel's #rope.spec is the spec's own text (RotarySpec.to_attr).
SPECS = {
    "default": ref.RotarySpec(),
    "llama3 partial": ref.RotarySpec(base=500000.0, rotary_dims=12, scaling=ref.Scaling(
        "llama3", factor=8.0, original_max_position_embeddings=8192)),
    "yarn inverse": ref.RotarySpec(inverse=True, scaling=ref.Scaling(
        "yarn", factor=4.0, original_max_position_embeddings=4096)),
    "dynamic": ref.RotarySpec(scaling=ref.Scaling("dynamic", factor=2.0, original_max_position_embeddings=1024)),
}

g = T.rng(11)
POSITIONS = {
    "[S]": np.concatenate([np.arange(0, 40), [4095, 4096, 65535, 999_983, (1 << 20) - 1, 1 << 20],
                           g.integers(0, (1 << 20) + 1, 58)]).astype(np.int64),
    "[B,S]": np.stack([np.arange(0, 24), np.arange(0, 24) + 500, g.integers(0, 1 << 20, 24)]).astype(np.int64),
}


def module(attr, pty, h):
    rty = pty.replace("xi64>", f"x{h}xf32>")
    return "\n".join(f"""
func.func @{which}_table(%p: {pty}) -> {rty} {{
  %cos, %sin = rope.table %p rotary({attr}) head_dim = {HEAD_DIM} : {pty}
  return %{which} : {rty}
}}""" for which in ("cos", "sin"))


for name, spec in SPECS.items():
    h = (spec.rotary_dims or HEAD_DIM) // 2
    m = ref.attention_factor(spec)
    for pname, p in POSITIONS.items():
        pty = "tensor<?xi64>" if p.ndim == 1 else "tensor<3x?xi64>"
        with T.guard(f"table {name} {pname}"):
            lib = T.compile(module(spec.to_attr(), pty, h))
            cos, sin = ref.cos_sin_table(p, spec, HEAD_DIM)
            atol = 2 * T.ulp(m, "f32")
            T.check(T.call(lib, "cos_table", p), cos, atol, f"table {name} {pname} cos")
            T.check(T.call(lib, "sin_table", p), sin, atol, f"table {name} {pname} sin")
T.finish()

# CHECK: PASS table default [S] cos
# CHECK: PASS table default [S] sin
# CHECK: PASS table default [B,S] cos
# CHECK: PASS table default [B,S] sin
# CHECK: PASS table llama3 partial [S] cos
# CHECK: PASS table llama3 partial [S] sin
# CHECK: PASS table llama3 partial [B,S] cos
# CHECK: PASS table llama3 partial [B,S] sin
# CHECK: PASS table yarn inverse [S] cos
# CHECK: PASS table yarn inverse [S] sin
# CHECK: PASS table yarn inverse [B,S] cos
# CHECK: PASS table yarn inverse [B,S] sin
# CHECK: PASS table dynamic [S] cos
# CHECK: PASS table dynamic [S] sin
# CHECK: PASS table dynamic [B,S] cos
# CHECK: PASS table dynamic [B,S] sin
