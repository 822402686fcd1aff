# RUN: %python %s | FileCheck %s
"""--rope-raise on rotations whose cos/sin come in as tensors (a model's
caches passed to the function, as real exports hold them): Hugging Face's
``x·cos + rotate_half(x)·sin`` with [S, D] tables, and GPT-NeoX's partial
rotary (the first r dims rotated with [1, S, r] tables, the rest passed
through). Each module is compiled as it is and after raising (same
pipeline), run on the same inputs, and compared with the f64 reference
`reference.rotate_with_tables` on the same tables, and with each other.

Tolerance: both compute x_j·c_j ± x_j'·s_j in f32 (three roundings), so each
is within 2 f32 ulps of |x_j·c_j| + |x_j'·s_j| of the reference
(rope_testing.table_rotation_atol), and the two are within the sum.
"""

import numpy as np

from rope_mlir import compiler, reference as ref
import rope_testing as T

ELEMENTWISE = "--pass-pipeline=builtin.module(func.func(convert-elementwise-to-linalg),rope-lower-to-cpu)"


def t(shape):
    return "tensor<" + "x".join(map(str, shape)) + "xf32>"


def hf_half(B, H, S, D, r, table_shape):
    """x·cos + rotate_half(x)·sin on the first r dims of x [B, H, S, D] with
    tables of `table_shape` (trailing dims [S, r]) broadcast over the rest;
    the other dims are concatenated back unchanged."""
    h = r // 2
    x, xr, xh = t((B, H, S, D)), t((B, H, S, r)), t((B, H, S, h))
    tt = t(table_shape)
    lead = list(range(4 - len(table_shape)))
    if len(table_shape) == 3:
        # [1, S, r]: drop the unit dim first (HF's unsqueeze in reverse).
        bcast = (f"  %c2 = tensor.collapse_shape %cos [[0, 1], [2]] : {tt} into {t((S, r))}\n"
                 f"  %s2 = tensor.collapse_shape %sin [[0, 1], [2]] : {tt} into {t((S, r))}\n")
        lead = [0, 1]
    else:
        bcast = "  %c2 = tensor.cast %cos : {tt} to {tt}\n  %s2 = tensor.cast %sin : {tt} to {tt}\n".format(tt=tt)
    dims = ", ".join(map(str, lead))
    rest = ""
    if r < D:
        rest = (f"  %xp = tensor.extract_slice %x[0, 0, 0, {r}] [{B}, {H}, {S}, {D - r}] [1, 1, 1, 1] : {x} to {t((B, H, S, D - r))}\n"
                f"  %out = tensor.concat dim(3) %rot, %xp : ({xr}, {t((B, H, S, D - r))}) -> {x}\n")
    else:
        rest = f"  %out = tensor.cast %rot : {xr} to {x}\n"
    return f"""
func.func @kernel(%x: {x}, %cos: {tt}, %sin: {tt}) -> {x} {{
{bcast}  %e1 = tensor.empty() : {xr}
  %cb = linalg.broadcast ins(%c2 : {t((S, r))}) outs(%e1 : {xr}) dimensions = [{dims}]
  %sb = linalg.broadcast ins(%s2 : {t((S, r))}) outs(%e1 : {xr}) dimensions = [{dims}]
  %xr = tensor.extract_slice %x[0, 0, 0, 0] [{B}, {H}, {S}, {r}] [1, 1, 1, 1] : {x} to {xr}
  %x1 = tensor.extract_slice %xr[0, 0, 0, 0] [{B}, {H}, {S}, {h}] [1, 1, 1, 1] : {xr} to {xh}
  %x2 = tensor.extract_slice %xr[0, 0, 0, {h}] [{B}, {H}, {S}, {h}] [1, 1, 1, 1] : {xr} to {xh}
  %n2 = arith.negf %x2 : {xh}
  %rh = tensor.concat dim(3) %n2, %x1 : ({xh}, {xh}) -> {xr}
  %a = arith.mulf %xr, %cb : {xr}
  %b = arith.mulf %rh, %sb : {xr}
  %rot = arith.addf %a, %b : {xr}
{rest}  return %out : {x}
}}
"""


B, H, S = 2, 3, 9
CASES = {
    "hf half [S, D] tables": (16, 16, (S, 16)),
    "neox partial [1, S, r] tables": (20, 8, (1, S, 8)),
}
g = T.rng(7)
p = np.array([0, 1, 2, 5, 80, 900, 4000, 4001, 30000], np.int64)
for name, (D, r, table_shape) in CASES.items():
    with T.guard(name):
        text = hf_half(B, H, S, D, r, table_shape)
        raised = compiler.lower(text, "--rope-raise")
        assert "rope.rotate_with_tables" in raised and "arith.addf" not in raised, raised
        print(f"RAISED {name}")
        c, s = ref.cos_sin_table(p, ref.RotarySpec(base=10000.0), r)
        cos = np.concatenate([c, c], -1).reshape(table_shape).astype(np.float32)
        sin = np.concatenate([s, s], -1).reshape(table_shape).astype(np.float32)
        x = T.quantize(g.standard_normal((B, H, S, D)), "f32")
        original = T.compile(text, pipeline=ELEMENTWISE)
        lowered = T.compile(raised, pipeline=ELEMENTWISE)
        args = (T.to_storage(x, "f32"), cos, sin)
        out_orig = T.call(original, "kernel", *args)
        out_raised = T.call(lowered, "kernel", *args)
        tables = dict(rotary_dims=r)
        c4, s4 = cos.reshape((1, 1, S, r)), sin.reshape((1, 1, S, r))
        expected = ref.rotate_with_tables(x, c4, s4, **tables)
        atol = T.table_rotation_atol(x, c4, s4, **tables)
        T.check(out_orig, expected, atol, f"{name} original == reference")
        T.check(out_raised, expected, atol, f"{name} raised == reference")
        T.check(out_raised, out_orig, 2 * atol, f"{name} raised == original")
        assert float(np.max(np.abs(out_raised - x))) > 0.5
T.finish()

# CHECK: RAISED hf half [S, D] tables
# CHECK: PASS hf half [S, D] tables original == reference
# CHECK: PASS hf half [S, D] tables raised == reference
# CHECK: PASS hf half [S, D] tables raised == original
# CHECK: RAISED neox partial [1, S, r] tables
# CHECK: PASS neox partial [1, S, r] tables original == reference
# CHECK: PASS neox partial [1, S, r] tables raised == reference
# CHECK: PASS neox partial [1, S, r] tables raised == original
