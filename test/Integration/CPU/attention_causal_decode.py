# UNSUPPORTED: asan
# RUN: %python %s | FileCheck %s
# RUN: %plain_attention %python %s | FileCheck %s
# RUN: %tiny_attention_tiles %python %s | FileCheck %s
# RUN: %split_keys_2 %python %s | FileCheck %s
# RUN: %split_keys_5 %python %s | FileCheck %s
# RUN: %gpu_mapping %python %s | FileCheck %s
"""rope.attention with `causal` (query i sees key j iff p_k(j) <= p_q(i)), f32:
* prefill, Sq = Sk, default positions;
* decode, Sq < Sk with default positions: queries sit after the cache at
  Sk−Sq..Sk−1;
* decode with explicit positions(%qp, %kp) [S] (keys at 0, 3, 6, ...; some
  keys lie after a query);
* explicit per-batch positions [B, S] (ragged batch: each row its own cache
  length and offset);
* explicit positions without `causal`: they must not mask anything.

Tolerance: rope_testing.attention_atol (ulp_f32(max|v|)·(L + 2·sqrt(Sk)) per row,
L the row's logit bound; f32 accumulation). Each causal case is also checked
to differ from the unmasked result, so causality cannot be silently dropped.
"""

import numpy as np

from rope_mlir import reference as ref
import rope_testing as T

g = T.rng(13)
B, H, D = 2, 2, 16


def ty(*shape, e="f32"):
    return "tensor<" + "x".join(map(str, shape)) + f"x{e}>"


def module(sq, sk, attrs, pos_types=None):
    qt, kt, rt = ty(B, H, sq, D), ty(B, H, sk, D), ty(B, H, sq, D)
    if pos_types is None:
        return f"""func.func @kernel(%q: {qt}, %k: {kt}, %v: {kt}) -> {rt} {{
  %r = rope.attention %q, %k, %v {attrs} : {qt}, {kt}, {kt}
  return %r : {rt}
}}"""
    qpt, kpt = pos_types
    return f"""func.func @kernel(%q: {qt}, %k: {kt}, %v: {kt}, %qp: {qpt}, %kp: {kpt}) -> {rt} {{
  %r = rope.attention %q, %k, %v positions(%qp, %kp : {qpt}, {kpt}) {attrs} : {qt}, {kt}, {kt}
  return %r : {rt}
}}"""


CASES = {
    # name: (Sq, Sk, causal, q positions, k positions)
    "prefill": (6, 6, True, None, None),
    "decode default positions": (2, 9, True, None, None),
    "decode explicit positions [S]": (2, 9, True, np.array([10, 17]), np.arange(9) * 3),
    "decode explicit positions [B,S]": (3, 8, True, np.array([[8, 9, 10], [3, 4, 5]]),
                                        np.array([[0, 1, 2, 3, 4, 5, 6, 7], [0, 1, 2, 3, 4, 5, 6, 7]])),
    "positions without causal": (2, 9, False, np.array([10, 17]), np.arange(9) * 3),
}

for name, (sq, sk, causal, qp, kp) in CASES.items():
    q = T.quantize(g.standard_normal((B, H, sq, D)), "f32")
    k = T.quantize(g.standard_normal((B, H, sk, D)), "f32")
    v = T.quantize(g.standard_normal((B, H, sk, D)), "f32")
    with T.guard(name):
        attrs = "causal" if causal else ""
        pos_types = None if qp is None else (ty(*qp.shape, e="i64"), ty(*kp.shape, e="i64"))
        lib = T.compile(module(sq, sk, attrs, pos_types))
        args = [T.to_storage(a, "f32") for a in (q, k, v)]
        if qp is not None:
            args += [qp.astype(np.int64), kp.astype(np.int64)]
        out = T.call(lib, "kernel", *args)
        expected = ref.attention(q, k, v, causal=causal, q_positions=qp, k_positions=kp)
        T.check(out, expected, T.attention_atol(q, k, v), f"causal {name}")
        if causal:
            assert np.abs(expected - ref.attention(q, k, v)).max() > 1e-2, "causal mask has no effect"
T.finish()

# CHECK: PASS causal prefill:
# CHECK: PASS causal decode default positions:
# CHECK: PASS causal decode explicit positions [S]:
# CHECK: PASS causal decode explicit positions [B,S]:
# CHECK: PASS causal positions without causal:
