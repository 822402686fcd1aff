# UNSUPPORTED: asan
# RUN: %python %s | FileCheck %s
# RUN: %plain_attention %python %s | FileCheck %s
# RUN: %tiny_attention_tiles %python %s | FileCheck %s
# RUN: %split_keys_5 %python %s | FileCheck %s
# RUN: %gpu_mapping %python %s | FileCheck %s
"""Rotations by given cos/sin tables (rope.rotate_with_tables, a frontend's
form) feeding rope.attention: the default pipeline folds them into the
attention (`rotary_tables`, rotated on load), the plain one computes them as
written. Every variant must agree with the f64 reference of "rotate Q and K
with the tables, attend":

* HF Llama: one [1, 1, S, D] per-element table shared by Q and K, GQA 8/2,
  causal prefill, f32;
* GPT-J decode: interleaved partial rotary at an offset, per-pair tables of
  the form [B, S, r/2], different for the query and the keys, batch 2;
* f16 data and f16 [B, 1, S, r] tables (half layout, partial), causal;
* tables that are not a rotation at all (independent random cos and sin):
  the op applies x·cos + rotate_half(x)·sin whatever they hold.

Tolerance: rope_testing.attention_atol on the reference's rotated Q and K (f32
logits and accumulation), plus f16 storage rounding where the data is f16.
"""

import numpy as np

from rope_mlir import compiler, reference as ref
import rope_testing as T


def module(qt, kt, vt, qct, kct, attrs, attn_attrs):
    return f"""
func.func @kernel(%q: {qt}, %k: {kt}, %v: {vt}, %qc: {qct}, %qs: {qct}, %kc: {kct}, %ks: {kct}) -> {qt} {{
  %qr = rope.rotate_with_tables %q, %qc, %qs {attrs} : {qt}, {qct}
  %kr = rope.rotate_with_tables %k, %kc, %ks {attrs} : {kt}, {kct}
  %o = rope.attention %qr, %kr, %v {attn_attrs} : {qt}, {kt}, {vt}
  return %o : {qt}
}}"""


def mlir_type(a, dtype):
    return "tensor<" + "x".join(str(d) for d in a.shape) + f"x{dtype}>"


def run_case(name, q, k, v, qc, qs, kc, ks, *, dtype="f32", table_dtype="f32", layout="half",
             dims=None, offset=0, causal=False):
    attrs = " ".join(([f"layout<{layout}>"] if layout != "half" else []) +
                     ([f"dims = {dims}"] if dims else []) + ([f"offset = {offset}"] if offset else []))
    types = [mlir_type(a, dtype) for a in (q, k, v)] + [mlir_type(qc, table_dtype), mlir_type(kc, table_dtype)]
    text = module(*types, attrs, "causal" if causal else "")
    with T.guard(name):
        lib = T.compile(text)
        args = [T.to_storage(a, dtype) for a in (q, k, v)] + [T.to_storage(t, table_dtype) for t in (qc, qs, kc, ks)]
        out = T.call(lib, "kernel", *args)
        kw = dict(layout=layout, rotary_dims=dims, offset=offset, seq_dim=2)
        qr = ref.rotate_with_tables(q, qc, qs, **kw)
        kr = ref.rotate_with_tables(k, kc, ks, **kw)
        expected = ref.attention(qr, kr, v, causal=causal)
        atol = T.attention_atol(qr, kr, v, dtype=dtype)
        if dtype != "f32":
            out = T.from_storage(out, dtype)
        T.check(out, expected, atol, name)
    return text


rng = T.rng(23)


def hf_tables(positions, head_dim, base, shape):
    inv = 1.0 / base ** (np.arange(0, head_dim, 2) / head_dim)
    freqs = np.outer(positions, inv)
    emb = np.concatenate([freqs, freqs], axis=-1)
    return np.cos(emb).reshape(shape), np.sin(emb).reshape(shape)


# HF Llama: [1, 1, S, D] shared by Q and K.
S, D = 11, 32
q = T.quantize(rng.standard_normal((1, 8, S, D)), "f32")
k = T.quantize(rng.standard_normal((1, 2, S, D)), "f32")
v = T.quantize(rng.standard_normal((1, 2, S, D)), "f32")
c, s = hf_tables(np.arange(S) + 100, D, 500000.0, (1, 1, S, D))
c, s = T.quantize(c, "f32"), T.quantize(s, "f32")
llama = run_case("hf llama shared [1,1,S,D] tables gqa causal", q, k, v, c, s, c, s, causal=True)

# GPT-J decode: interleaved partial, per-pair [B, S, r/2], different Q/K tables.
P, D, r = 9, 24, 16
q1 = T.quantize(rng.standard_normal((2, 4, 1, D)), "f32")
kc_ = T.quantize(rng.standard_normal((2, 4, P, D)), "f32")
vc = T.quantize(rng.standard_normal((2, 4, P, D)), "f32")
inv = 1.0 / 10000.0 ** (np.arange(0, r, 2) / r)
kang = np.arange(P)[None, :, None] * inv + np.array([0.0, 3.0])[:, None, None]
qang = kang[:, -1:, :]
run_case("gptj decode interleaved partial [B,S,r/2] tables", q1, kc_, vc,
         T.quantize(np.cos(qang), "f32"), T.quantize(np.sin(qang), "f32"),
         T.quantize(np.cos(kang), "f32"), T.quantize(np.sin(kang), "f32"),
         layout="interleaved", dims=r, offset=4)

# f16 data and f16 [B, 1, S, r] element tables, partial, causal.
S, D, r = 7, 16, 8
qh = T.quantize(rng.standard_normal((2, 2, S, D)), "f16")
kh = T.quantize(rng.standard_normal((2, 2, S, D)), "f16")
vh = T.quantize(rng.standard_normal((2, 2, S, D)), "f16")
ch, sh = hf_tables(np.arange(2 * S) % S + 5, r, 10000.0, (2, 1, S, r))
ch, sh = T.quantize(ch, "f16"), T.quantize(sh, "f16")
run_case("f16 [B,1,S,r] tables partial causal", qh, kh, vh, ch, sh, ch, sh,
         dtype="f16", table_dtype="f16", dims=r, causal=True)

# Not a rotation: independent random tables.
S, D = 6, 16
q = T.quantize(rng.standard_normal((1, 2, S, D)), "f32")
k = T.quantize(rng.standard_normal((1, 2, S, D)), "f32")
v = T.quantize(rng.standard_normal((1, 2, S, D)), "f32")
tabs = [T.quantize(rng.standard_normal((S, D)), "f32") for _ in range(4)]
run_case("arbitrary [S,D] tables", q, k, v, *tabs)

# The fold really happens in the default pipeline.
folded = compiler.lower(llama, "--rope-fold-rotation-into-qk")
assert "rope.rotate_with_tables" not in folded and "rotary_tables(" in folded, folded
print("PASS fold applies")
T.finish()

# CHECK: PASS hf llama shared [1,1,S,D] tables gqa causal
# CHECK: PASS gptj decode interleaved partial [B,S,r/2] tables
# CHECK: PASS f16 [B,1,S,r] tables partial causal
# CHECK: PASS arbitrary [S,D] tables
# CHECK: PASS fold applies
