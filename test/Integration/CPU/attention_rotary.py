# RUN: %python %s | FileCheck %s
# RUN: %plain_attention %python %s | FileCheck %s
# RUN: %tiny_attention_tiles %python %s | FileCheck %s
# RUN: %split_keys_2 %python %s | FileCheck %s
# RUN: %split_keys_5 %python %s | FileCheck %s
# RUN: %gpu_mapping %python %s | FileCheck %s
"""rope.attention with a rotary spec inside the op (Q and K rotated at their
positions), f32, B=2, H=2, D=16:
* half layout, causal prefill, default positions;
* interleaved layout with llama3 scaling, explicit positions around 10^4..10^5;
* dynamic NTK scaling where only the largest query position exceeds
  L_orig = 64, so the keys (all below) must be rotated with the same grown
  base; and the mirror case with the largest position among the keys;
* longrope (attention factor sqrt(1.5)) with the same spanning;
* per-batch positions [B, S] for queries and keys.

Tolerance: rope_testing.attention_atol with the spec (ulp_f32(max|v|)·(L +
2·sqrt(Sk)) per row, L the row's logit bound including m²; f32 accumulation).
The spanning cases are also checked to differ from rotating Q and K each with
its own largest position, the others from attention without RoPE, and the
[B, S] case from giving every batch row the first row's positions.
"""

import numpy as np

from rope_mlir import reference as ref
import rope_testing as T

B, H, D = 2, 2, 16
g = T.rng(16)
SHORT = (1.0, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0)
LONG = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 48.0, 64.0)
DYN = ref.RotarySpec(scaling=ref.Scaling("dynamic", factor=4.0, original_max_position_embeddings=64))
LR = ref.RotarySpec(scaling=ref.Scaling("longrope", short_factor=SHORT, long_factor=LONG, factor=16.0,
                                        original_max_position_embeddings=64))
LLAMA3 = ref.RotarySpec(base=500000.0, layout="interleaved", scaling=ref.Scaling(
    "llama3", factor=8.0, original_max_position_embeddings=8192))

CASES = {
    # name: (spec, causal, q positions, k positions, Sq, Sk, spanning); the
    # kernel's #rope.spec is the spec's own text (RotarySpec.to_attr)
    "half causal prefill": (ref.RotarySpec(), True, None, None, 6, 6, False),
    "interleaved llama3": (LLAMA3, False, np.array([12000, 70000, 99999]),
                           np.array([0, 5, 9000, 11999, 40000, 69999, 100000]), 3, 7, False),
    "dynamic max in queries": (DYN, True, np.array([70, 71]), np.arange(8) * 9, 2, 8, True),
    "dynamic max in keys": (DYN, False, np.array([3, 10]), np.array([0, 1, 2, 3, 4, 200]), 2, 6, True),
    "longrope max in queries": (LR, True, np.array([60, 64]), np.arange(8) * 8, 2, 8, True),
    "positions [B,S]": (ref.RotarySpec(layout="interleaved"), True,
                        np.array([[4, 5], [30, 31]]), np.array([[0, 1, 2, 3, 4], [27, 28, 29, 30, 31]]),
                        2, 5, False),
}


def module(attr, causal, sq, sk, qp, kp):
    qt, kt = f"tensor<{B}x{H}x{sq}x{D}xf32>", f"tensor<{B}x{H}x{sk}x{D}xf32>"
    extra, pos = "", ""
    if qp is not None:
        qpt = "tensor<" + "x".join(map(str, qp.shape)) + "xi64>"
        kpt = "tensor<" + "x".join(map(str, kp.shape)) + "xi64>"
        extra = f", %qp: {qpt}, %kp: {kpt}"
        pos = f" positions(%qp, %kp : {qpt}, {kpt})"
    c = " causal" if causal else ""
    return f"""func.func @kernel(%q: {qt}, %k: {kt}, %v: {kt}{extra}) -> {qt} {{
  %r = rope.attention %q, %k, %v{pos} rotary({attr}){c} : {qt}, {kt}, {kt}
  return %r : {qt}
}}"""


def separately_rotated(q, k, v, spec, causal, qp, kp):
    """Attention with Q and K rotated each at its own largest position."""
    qr = ref.rotate(q, qp, spec, seq_dim=2)
    kr = ref.rotate(k, kp, spec, seq_dim=2)
    return ref.attention(qr, kr, v, causal=causal, q_positions=qp, k_positions=kp)


for name, (spec, causal, qp, kp, sq, sk, spanning) in CASES.items():
    q = T.quantize(g.standard_normal((B, H, sq, D)), "f32")
    k = T.quantize(g.standard_normal((B, H, sk, D)), "f32")
    v = T.quantize(g.standard_normal((B, H, sk, D)), "f32")
    with T.guard(name):
        lib = T.compile(module(spec.to_attr(), causal, sq, sk, qp, kp))
        args = [T.to_storage(a, "f32") for a in (q, k, v)]
        if qp is not None:
            args += [qp.astype(np.int64), kp.astype(np.int64)]
        out = T.call(lib, "kernel", *args)
        kw = dict(causal=causal, q_positions=qp, k_positions=kp)
        expected = ref.attention(q, k, v, rotary=spec, **kw)
        T.check(out, expected, T.attention_atol(q, k, v, rotary=spec), f"attention rotary {name}")
        others = [separately_rotated(q, k, v, spec, causal, qp, kp) if spanning
                  else ref.attention(q, k, v, **kw)]
        if qp is not None and qp.ndim == 2:  # every batch row at row 0's positions
            others.append(ref.attention(q, k, v, rotary=spec, causal=causal,
                                        q_positions=qp[0], k_positions=kp[0]))
        for other in others:
            assert np.abs(expected - other).max() > 1e-2, "case does not exercise what it claims"
T.finish()

# CHECK: PASS attention rotary half causal prefill:
# CHECK: PASS attention rotary interleaved llama3:
# CHECK: PASS attention rotary dynamic max in queries:
# CHECK: PASS attention rotary dynamic max in keys:
# CHECK: PASS attention rotary longrope max in queries:
# CHECK: PASS attention rotary positions [B,S]:
