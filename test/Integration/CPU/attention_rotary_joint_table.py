# UNSUPPORTED: asan
# RUN: %python %s | FileCheck %s
# RUN: %plain_attention %python %s | FileCheck %s
# RUN: %tiny_attention_tiles %python %s | FileCheck %s
# RUN: %split_keys_2 %python %s | FileCheck %s
# RUN: %gpu_mapping %python %s | FileCheck %s
"""rope.attention with length-dependent frequencies (dynamic NTK) and query
and key positions of different shape and type (i32 [Sq], i64 [B, Sk]): both
sides must see the frequencies of the largest position of either, so the
conversion builds one cos/sin table over both position sets (the [Sq] set
broadcast to [B, Sq]) and splits it. Against the f64 reference with the
query positions broadcast per batch. Tolerance: rope_testing.attention_atol."""

import numpy as np

from rope_mlir import reference as ref
import rope_testing as T

g = T.rng(5)
B, H, Sq, Sk, D = 2, 2, 3, 9, 16
q, k, v = (T.quantize(g.standard_normal(s), "f32")
           for s in ((B, H, Sq, D), (B, H, Sk, D), (B, H, Sk, D)))
qp = np.array([40, 41, 42], dtype=np.int32)
kp = np.stack([np.arange(Sk) * 5, np.arange(Sk) * 3]).astype(np.int64)
spec = ref.RotarySpec(scaling=ref.Scaling(kind="dynamic", factor=2.0,
                                          original_max_position_embeddings=16))
attr = spec.to_attr()
qt, kt = "tensor<2x2x3x16xf32>", "tensor<2x2x9x16xf32>"
text = (f"func.func @kernel(%q: {qt}, %k: {kt}, %v: {kt}, %qp: tensor<3xi32>, %kp: tensor<2x9xi64>) -> {qt} {{\n"
        f"  %r = rope.attention %q, %k, %v positions(%qp, %kp : tensor<3xi32>, tensor<2x9xi64>) "
        f"rotary({attr}) causal : {qt}, {kt}, {kt}\n  return %r : {qt}\n}}\n")
with T.guard("joint table"):
    lib = T.compile(text)
    out = T.call(lib, "kernel", *(a.astype(np.float32) for a in (q, k, v)), qp, kp)
    expected = ref.attention(q, k, v, causal=True, rotary=spec,
                             q_positions=np.broadcast_to(qp, (B, Sq)), k_positions=kp)
    T.check(out, expected, T.attention_atol(q, k, v, rotary=spec), "joint table")
T.finish()

# CHECK: PASS joint table:
