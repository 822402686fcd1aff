# UNSUPPORTED: asan
# RUN: %python %s | FileCheck %s
# RUN: %plain_attention %python %s | FileCheck %s
# RUN: %tiny_attention_tiles %python %s | FileCheck %s
# RUN: %split_keys_2 %python %s | FileCheck %s
# RUN: %split_keys_5 %python %s | FileCheck %s
# RUN: %gpu_mapping %python %s | FileCheck %s
"""rope.attention with dynamic batch and sequence dims (`?`), f32: one kernel
per op form, each called with several (B, Sq, Sk), including a single-token
decode step (Sq = 1) and lengths past one query tile and two key tiles:
* causal decode with default positions (queries after the cache);
* GQA (Hq = 4, Hkv = 2) with RoPE inside and explicit dynamic positions.

Tolerance: rope_testing.attention_atol (ulp_f32(max|v|)·(L + 2·sqrt(Sk)) per row,
L the row's logit bound; f32 accumulation).
"""

import numpy as np

from rope_mlir import reference as ref
import rope_testing as T

D = 16
g = T.rng(18)
GQA_SPEC = ref.RotarySpec(base=500000.0)
KERNELS = {
    "causal decode": ("""func.func @kernel(%q: tensor<?x2x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32> {
  %r = rope.attention %q, %k, %v causal : tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>
  return %r : tensor<?x2x?x16xf32>
}""", 2, 2, None),
    "gqa rotary positions": ("""func.func @kernel(%q: tensor<?x4x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x16xf32>, %qp: tensor<?xi64>, %kp: tensor<?xi64>) -> tensor<?x4x?x16xf32> {
  %r = rope.attention %q, %k, %v positions(%qp, %kp : tensor<?xi64>, tensor<?xi64>) rotary(SPEC) causal : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>
  return %r : tensor<?x4x?x16xf32>
}""".replace("SPEC", GQA_SPEC.to_attr()), 4, 2, GQA_SPEC),
}
# (B, Sq, Sk); the last one crosses query tiles (128 rows) and key tiles
# (64 keys: two full ones through the micro-kernels, then the peeled rest).
SHAPES = [(1, 1, 5), (3, 4, 4), (2, 2, 13), (1, 150, 150)]

for name, (mlir, hq, hkv, rotary) in KERNELS.items():
    try:
        lib = T.compile(mlir)
    except Exception as e:  # reported per shape below
        lib = e
    for b, sq, sk in SHAPES:
        case = f"{name} B={b} Sq={sq} Sk={sk}"
        with T.guard(case):
            if isinstance(lib, Exception):
                raise lib
            q = T.quantize(g.standard_normal((b, hq, sq, D)), "f32")
            k = T.quantize(g.standard_normal((b, hkv, sk, D)), "f32")
            v = T.quantize(g.standard_normal((b, hkv, sk, D)), "f32")
            args = [T.to_storage(a, "f32") for a in (q, k, v)]
            qp = kp = None
            if rotary is not None:
                kp = np.arange(sk, dtype=np.int64) + 1000 * b
                qp = kp[-sq:] + 1
                args += [qp, kp]
            out = T.call(lib, "kernel", *args)
            expected = ref.attention(q, k, v, causal=True, rotary=rotary, q_positions=qp, k_positions=kp)
            T.check(out, expected, T.attention_atol(q, k, v, rotary=rotary), f"attention {case}")
T.finish()

# CHECK: PASS attention causal decode B=1 Sq=1 Sk=5:
# CHECK: PASS attention causal decode B=3 Sq=4 Sk=4:
# CHECK: PASS attention causal decode B=2 Sq=2 Sk=13:
# CHECK: PASS attention causal decode B=1 Sq=150 Sk=150:
# CHECK: PASS attention gqa rotary positions B=1 Sq=1 Sk=5:
# CHECK: PASS attention gqa rotary positions B=3 Sq=4 Sk=4:
# CHECK: PASS attention gqa rotary positions B=2 Sq=2 Sk=13:
# CHECK: PASS attention gqa rotary positions B=1 Sq=150 Sk=150:
