# UNSUPPORTED: asan
# RUN: %python %s | FileCheck %s
# RUN: %plain_attention %python %s | FileCheck %s
# RUN: %tiny_attention_tiles %python %s | FileCheck %s
# RUN: %split_keys_2 %python %s | FileCheck %s
# RUN: %split_keys_5 %python %s | FileCheck %s
# RUN: %gpu_mapping %python %s | FileCheck %s
"""rope.attention with grouped KV heads, f32: GQA (Hq = 8, Hkv = 2: query head h
reads kv head h / 4) and MQA (Hkv = 1), non-causal and causal decode
(Sq = 3 < Sk = 10), and GQA with RoPE inside the op.

Tolerance: rope_testing.attention_atol (ulp_f32(max|v|)·(L + 2·sqrt(Sk)) per row,
L the row's logit bound, computed with the K heads repeated as GQA reads
them; f32 accumulation). The GQA cases are also checked to differ from the
other plausible head mapping (h mod Hkv).
"""

import numpy as np

from rope_mlir import reference as ref
import rope_testing as T

B, HQ, SQ, SK, D = 2, 8, 3, 10, 16
g = T.rng(15)
SPEC_ATTR = ref.RotarySpec().to_attr()


def module(hkv, attrs):
    qt, kt = f"tensor<{B}x{HQ}x{SQ}x{D}xf32>", f"tensor<{B}x{hkv}x{SK}x{D}xf32>"
    return f"""func.func @kernel(%q: {qt}, %k: {kt}, %v: {kt}) -> {qt} {{
  %r = rope.attention %q, %k, %v {attrs} : {qt}, {kt}, {kt}
  return %r : {qt}
}}"""


CASES = {
    # name: (Hkv, attrs, reference kwargs)
    "gqa": (2, "", {}),
    "gqa causal decode": (2, "causal", dict(causal=True)),
    "gqa rotary causal": (2, f"rotary({SPEC_ATTR}) causal", dict(causal=True, rotary=ref.RotarySpec())),
    "mqa": (1, "", {}),
    "mqa causal decode": (1, "causal", dict(causal=True)),
}

for name, (hkv, attrs, kwargs) in CASES.items():
    q = T.quantize(g.standard_normal((B, HQ, SQ, D)), "f32")
    k = T.quantize(g.standard_normal((B, hkv, SK, D)), "f32")
    v = T.quantize(g.standard_normal((B, hkv, SK, D)), "f32")
    with T.guard(name):
        lib = T.compile(module(hkv, attrs))
        out = T.call(lib, "kernel", *[T.to_storage(a, "f32") for a in (q, k, v)])
        expected = ref.attention(q, k, v, **kwargs)
        T.check(out, expected, T.attention_atol(q, k, v, rotary=kwargs.get("rotary")), f"attention {name}")
        if hkv > 1:
            # h mod Hkv instead of h / group: tile rather than repeat the kv heads.
            reps = HQ // hkv
            tiled = ref.attention(q, np.tile(k, (1, reps, 1, 1)), np.tile(v, (1, reps, 1, 1)), **kwargs)
            assert np.abs(expected - tiled).max() > 1e-2
T.finish()

# CHECK: PASS attention gqa:
# CHECK: PASS attention gqa causal decode:
# CHECK: PASS attention gqa rotary causal:
# CHECK: PASS attention mqa:
# CHECK: PASS attention mqa causal decode:
