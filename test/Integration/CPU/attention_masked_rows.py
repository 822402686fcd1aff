# UNSUPPORTED: asan
# RUN: %python %s | FileCheck %s
# RUN: %plain_attention %python %s | FileCheck %s
# RUN: %tiny_attention_tiles %python %s | FileCheck %s
# RUN: %split_keys_2 %python %s | FileCheck %s
# RUN: %split_keys_5 %python %s | FileCheck %s
# RUN: %gpu_mapping %python %s | FileCheck %s
"""rope.attention rows whose keys are all masked out must be exactly zero (not
NaN, not a uniform average), f32. A row is emptied by:
* a boolean mask row of all false;
* an additive float mask row of all −inf;
* causality: a query whose position precedes every key position.
The other rows must still match the reference.

Tolerance: rope_testing.attention_atol for the whole result (ulp_f32(max|v|)·
(L + 2·sqrt(Sk)) per row); the empty rows separately with atol 0.
"""

import numpy as np

from rope_mlir import reference as ref
import rope_testing as T

B, H, SQ, SK, D = 2, 2, 4, 6, 8
QT, KT = f"tensor<{B}x{H}x{SQ}x{D}xf32>", f"tensor<{B}x{H}x{SK}x{D}xf32>"
g = T.rng(14)
q = T.quantize(g.standard_normal((B, H, SQ, D)), "f32")
k = T.quantize(g.standard_normal((B, H, SK, D)), "f32")
v = T.quantize(g.standard_normal((B, H, SK, D)) + 2.0, "f32")  # mean 2: an average is far from 0


def with_mask(mty):
    return f"""func.func @kernel(%q: {QT}, %k: {KT}, %v: {KT}, %m: {mty}) -> {QT} {{
  %r = rope.attention %q, %k, %v mask(%m : {mty}) : {QT}, {KT}, {KT}
  return %r : {QT}
}}"""


CAUSAL = f"""func.func @kernel(%q: {QT}, %k: {KT}, %v: {KT}, %qp: tensor<{SQ}xi64>, %kp: tensor<{SK}xi64>) -> {QT} {{
  %r = rope.attention %q, %k, %v positions(%qp, %kp : tensor<{SQ}xi64>, tensor<{SK}xi64>) causal : {QT}, {KT}, {KT}
  return %r : {QT}
}}"""

bmask = np.ones((B, 1, SQ, SK), bool)
bmask[0, 0, 1, :] = False          # batch 0, query 1: nothing visible
bmask[1, 0, 3, 2:] = False         # a partly masked row for contrast
fmask = np.zeros((SQ, SK), np.float32)
fmask[2, :] = -np.inf              # query 2 of every batch/head: nothing visible
fmask[0, :3] = -np.inf
qp = np.array([2, 5, 9, 12], np.int64)   # query 0 at position 2 precedes every key
kp = np.array([3, 4, 5, 6, 7, 8], np.int64)

CASES = {
    # name: (module, extra args, reference kwargs, empty-row selector on [B, H, SQ])
    "bool mask": (with_mask(f"tensor<{B}x1x{SQ}x{SK}xi1>"), [bmask], dict(mask=bmask),
                  np.broadcast_to(~bmask.any(-1), (B, H, SQ))),
    "additive -inf mask": (with_mask(f"tensor<{SQ}x{SK}xf32>"), [fmask], dict(mask=fmask),
                           np.broadcast_to(np.isinf(fmask).all(-1), (B, H, SQ))),
    "causal positions": (CAUSAL, [qp, kp], dict(causal=True, q_positions=qp, k_positions=kp),
                         np.broadcast_to(qp < kp.min(), (B, H, SQ))),
}

for name, (mlir, extra, kwargs, empty) in CASES.items():
    assert empty.any() and not empty.all()
    with T.guard(name):
        lib = T.compile(mlir)
        out = T.call(lib, "kernel", *[T.to_storage(a, "f32") for a in (q, k, v)], *extra)
        expected = ref.attention(q, k, v, **kwargs)
        assert np.all(expected[empty] == 0.0)
        T.check(out[empty], np.zeros_like(out[empty]), 0.0, f"masked rows {name} zero")
        T.check(out, expected, T.attention_atol(q, k, v), f"masked rows {name} all")
T.finish()

# CHECK: PASS masked rows bool mask zero
# CHECK: PASS masked rows bool mask all
# CHECK: PASS masked rows additive -inf mask zero
# CHECK: PASS masked rows additive -inf mask all
# CHECK: PASS masked rows causal positions zero
# CHECK: PASS masked rows causal positions all
