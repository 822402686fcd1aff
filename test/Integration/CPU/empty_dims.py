# RUN: %python %s | FileCheck %s
# RUN: %plain_attention %python %s | FileCheck %s
# RUN: %tiny_attention_tiles %python %s | FileCheck %s
# RUN: %split_keys_2 %python %s | FileCheck %s
# RUN: %gpu_mapping %python %s | FileCheck %s
"""Empty dims, one at a time, through every pipeline (the RUN lines): each
compiles, runs and gives the defined result (found by the red team: an empty
key sequence crashed the default pipeline inside upstream tiling, D = 0 and
Dv = 0 failed with an internal error).

* rope.attention with B, H (Hq = Hkv = 0), Sq, Sk, D or Dv of 0, static:
  an empty result, zeros for queries that see no key, and for D = 0 each
  query's mean of the values it sees (the logits are all 0; the default
  scale is 1 there); 16 queries, so that the row reductions take their
  vectorised form; causal and GQA variants;
* the same with dynamic dims that are 0 at run time;
* rope.rotate with an empty batch or sequence, and rope.table of no
  positions.

Tolerance: rope_testing.attention_atol for attention, 2 f32 ulps of the pair
norm for rotations (rope_testing.rotation_atol); empty results must have the
expected (empty) shape.
"""

import numpy as np

from rope_mlir import reference as ref
import rope_testing as T

g = T.rng(55)
SPEC = ref.RotarySpec(base=10000.0)


def attention_kernel(q, k, v, extra=""):
    """@kernel of rope.attention over static shapes q, k, v ([B, H, S, D])."""
    t = lambda s: "tensor<" + "x".join(map(str, s)) + "xf32>"
    out = (q[0], q[1], q[2], v[3])
    return f"""func.func @kernel(%q: {t(q)}, %k: {t(k)}, %v: {t(v)}) -> {t(out)} {{
  %r = rope.attention %q, %k, %v {extra} : {t(q)}, {t(k)}, {t(v)}
  return %r : {t(out)}
}}"""


# name: (q shape, k shape, v shape, op attributes, reference options)
ATTENTION = {
    "empty batch": ((0, 2, 4, 8), (0, 2, 5, 8), (0, 2, 5, 8), "causal", {"causal": True}),
    "no heads": ((1, 0, 4, 8), (1, 0, 5, 8), (1, 0, 5, 8), "", {}),
    "no queries": ((1, 2, 0, 8), (1, 2, 5, 8), (1, 2, 5, 8), "", {}),
    "no keys": ((1, 2, 16, 8), (1, 2, 0, 8), (1, 2, 0, 8), "", {}),
    "no keys gqa rotary": ((1, 4, 16, 8), (1, 2, 0, 8), (1, 2, 0, 8),
                           f"rotary({SPEC.to_attr()})", {"rotary": SPEC}),
    "empty head dim": ((1, 2, 16, 0), (1, 2, 5, 0), (1, 2, 5, 8), "", {}),
    "empty head dim causal": ((1, 2, 4, 0), (1, 2, 5, 0), (1, 2, 5, 8), "causal", {"causal": True}),
    "empty value dim": ((1, 2, 16, 8), (1, 2, 5, 8), (1, 2, 5, 0), "", {}),
}

for name, (qs, ks, vs, extra, options) in ATTENTION.items():
    with T.guard(f"attention {name}"):
        lib = T.compile(attention_kernel(qs, ks, vs, extra))
        q, k, v = (T.quantize(g.standard_normal(s), "f32") for s in (qs, ks, vs))
        out = T.call(lib, "kernel", *(T.to_storage(a, "f32") for a in (q, k, v)))
        expected = ref.attention(q, k, v, **options)
        assert out.shape == expected.shape, f"shape {out.shape}, expected {expected.shape}"
        T.check(out, expected, T.attention_atol(q, k, v, rotary=options.get("rotary")),
                f"attention {name} {qs} {ks} {vs}")

# Dynamic batch and sequences, 0 at run time.
DYNAMIC = """func.func @kernel(%q: tensor<?x2x?x8xf32>, %k: tensor<?x2x?x8xf32>, %v: tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32> {
  %r = rope.attention %q, %k, %v causal : tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>
  return %r : tensor<?x2x?x8xf32>
}"""
lib = T.compile(DYNAMIC)
for b, sq, sk in [(0, 3, 3), (1, 0, 4), (1, 3, 0), (2, 16, 0)]:
    with T.guard(f"dynamic attention B={b} Sq={sq} Sk={sk}"):
        q = T.quantize(g.standard_normal((b, 2, sq, 8)), "f32")
        k = T.quantize(g.standard_normal((b, 2, sk, 8)), "f32")
        v = T.quantize(g.standard_normal((b, 2, sk, 8)), "f32")
        out = T.call(lib, "kernel", *(T.to_storage(a, "f32") for a in (q, k, v)))
        expected = ref.attention(q, k, v, causal=True)
        assert out.shape == expected.shape, f"shape {out.shape}, expected {expected.shape}"
        T.check(out, expected, T.attention_atol(q, k, v),
                f"dynamic attention B={b} Sq={sq} Sk={sk}")

# Rotations of nothing.
for name, x_shape, seq_dim in [("empty batch", (0, 4, 16), 1), ("empty sequence", (2, 0, 16), 1)]:
    with T.guard(f"rotate {name}"):
        t = "tensor<" + "x".join(map(str, x_shape)) + "xf32>"
        p = f"tensor<{x_shape[seq_dim]}xi64>"
        lib = T.compile(f"""func.func @kernel(%x: {t}, %p: {p}) -> {t} {{
  %r = rope.rotate %x, %p rotary({SPEC.to_attr()}) : {t}, {p}
  return %r : {t}
}}""")
        x = T.quantize(g.standard_normal(x_shape), "f32")
        positions = np.arange(x_shape[seq_dim], dtype=np.int64)
        out = T.call(lib, "kernel", T.to_storage(x, "f32"), positions)
        expected = ref.rotate(x, positions, SPEC)
        assert out.shape == expected.shape, f"shape {out.shape}, expected {expected.shape}"
        T.check(out, expected, T.rotation_atol(x, SPEC), f"rotate {name}")

T.finish()

# CHECK: PASS attention empty batch
# CHECK: PASS attention no heads
# CHECK: PASS attention no queries
# CHECK: PASS attention no keys
# CHECK: PASS attention no keys gqa rotary
# CHECK: PASS attention empty head dim
# CHECK: PASS attention empty head dim causal
# CHECK: PASS attention empty value dim
# CHECK: PASS dynamic attention B=0 Sq=3 Sk=3
# CHECK: PASS dynamic attention B=1 Sq=0 Sk=4
# CHECK: PASS dynamic attention B=1 Sq=3 Sk=0
# CHECK: PASS dynamic attention B=2 Sq=16 Sk=0
# CHECK: PASS rotate empty batch
# CHECK: PASS rotate empty sequence
# CHECK-NOT: FAIL
