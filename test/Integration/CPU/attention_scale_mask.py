# UNSUPPORTED: asan
# RUN: %python %s | FileCheck %s
# RUN: %plain_attention %python %s | FileCheck %s
# RUN: %tiny_attention_tiles %python %s | FileCheck %s
# RUN: %split_keys_2 %python %s | FileCheck %s
# RUN: %split_keys_5 %python %s | FileCheck %s
# RUN: %gpu_mapping %python %s | FileCheck %s
"""rope.attention (no rotary): default scale 1/sqrt(D), explicit scale, an
additive float mask and a boolean i1 mask (true = may attend), each of rank 2
and rank 4 with broadcast unit dims, plus a rank-3 boolean mask. f32,
B=2, Hq=Hkv=3, Sq=5, Sk=7, D=16, Dv=8.

Tolerance (rope_testing.attention_atol), per query row:
ulp_f32(max|v|)·(L + 2·sqrt(Sk)), L the row's bound on |logit| terms: logit
errors of about u·L move the output by at most 2·u·L·max|v|, and the P·V sum
of Sk terms rounds like a random walk. f32 accumulation throughout.
"""

import numpy as np

from rope_mlir import reference as ref
import rope_testing as T

B, H, SQ, SK, D, DV = 2, 3, 5, 7, 16, 8
QT, KT, VT = (f"tensor<{B}x{H}x{SQ}x{D}xf32>", f"tensor<{B}x{H}x{SK}x{D}xf32>",
              f"tensor<{B}x{H}x{SK}x{DV}xf32>")
RT = f"tensor<{B}x{H}x{SQ}x{DV}xf32>"

g = T.rng(12)
q = T.quantize(g.standard_normal((B, H, SQ, D)), "f32")
k = T.quantize(g.standard_normal((B, H, SK, D)), "f32")
v = T.quantize(g.standard_normal((B, H, SK, DV)), "f32")


def module(attrs="", mask_type=None):
    if mask_type is None:
        return f"""func.func @kernel(%q: {QT}, %k: {KT}, %v: {VT}) -> {RT} {{
  %r = rope.attention %q, %k, %v {attrs} : {QT}, {KT}, {VT}
  return %r : {RT}
}}"""
    return f"""func.func @kernel(%q: {QT}, %k: {KT}, %v: {VT}, %m: {mask_type}) -> {RT} {{
  %r = rope.attention %q, %k, %v mask(%m : {mask_type}) {attrs} : {QT}, {KT}, {VT}
  return %r : {RT}
}}"""


def bool_mask(shape):
    m = g.random(shape) < 0.7
    m[..., 0] = True  # keep every row attending somewhere (empty rows: attention_masked_rows.py)
    return m


float_mask = lambda shape: T.quantize(g.standard_normal(shape), "f32").astype(np.float32)

CASES = {
    # name: (attrs, mask array or None, mask type, scale for the reference)
    "default scale": ("", None, None, None),
    "explicit scale": ("scale = 0.5", None, None, 0.5),
    "float mask rank 2": ("", float_mask((SQ, SK)), f"tensor<{SQ}x{SK}xf32>", None),
    "float mask rank 4 broadcast": ("", float_mask((B, 1, SQ, SK)), f"tensor<{B}x1x{SQ}x{SK}xf32>", None),
    "bool mask rank 2": ("", bool_mask((SQ, SK)), f"tensor<{SQ}x{SK}xi1>", None),
    "bool mask rank 4 broadcast": ("", bool_mask((B, 1, 1, SK)), f"tensor<{B}x1x1x{SK}xi1>", None),
    "bool mask rank 3 broadcast": ("scale = 0.125", bool_mask((H, 1, SK)), f"tensor<{H}x1x{SK}xi1>", 0.125),
}

for name, (attrs, mask, mty, scale) in CASES.items():
    with T.guard(name):
        lib = T.compile(module(attrs, mty))
        args = [T.to_storage(a, "f32") for a in (q, k, v)] + ([] if mask is None else [mask])
        out = T.call(lib, "kernel", *args)
        expected = ref.attention(q, k, v, scale=scale, mask=mask)
        T.check(out, expected, T.attention_atol(q, k, v, scale=scale), f"attention {name}")
        if mask is not None:  # the mask must matter
            assert np.abs(expected - ref.attention(q, k, v, scale=scale)).max() > 1e-2
        if scale is not None:  # and so must the scale
            assert np.abs(expected - ref.attention(q, k, v, mask=mask)).max() > 1e-2
T.finish()

# CHECK: PASS attention default scale:
# CHECK: PASS attention explicit scale:
# CHECK: PASS attention float mask rank 2:
# CHECK: PASS attention float mask rank 4 broadcast:
# CHECK: PASS attention bool mask rank 2:
# CHECK: PASS attention bool mask rank 4 broadcast:
# CHECK: PASS attention bool mask rank 3 broadcast:
