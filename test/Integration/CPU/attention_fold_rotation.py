# UNSUPPORTED: asan
# RUN: %python %s | FileCheck %s
# RUN: %plain_attention %python %s | FileCheck %s
# RUN: %tiny_attention_tiles %python %s | FileCheck %s
# RUN: %split_keys_2 %python %s | FileCheck %s
# RUN: %split_keys_5 %python %s | FileCheck %s
# RUN: %gpu_mapping %python %s | FileCheck %s
"""Rotations written as rope.rotate ops feeding rope.attention, which the
default pipeline folds into the attention (--rope-fold-rotation-into-qk) and
the plain one computes as written. Every variant must agree with the f64
reference of "rotate Q, rotate K, attend":

* GQA 8/2 causal prefill, llama3, half layout;
* decode against an un-rotated KV cache: one query at position P, keys at
  0..P rotated on load at their own positions, interleaved partial rotary;
* yarn (attention factor != 1 scales both Q and K, so logits by m^2);
* dynamic NTK with Q and K sharing one positions tensor (the only case the
  fold accepts for length-dependent frequencies).

Tolerance: rope_testing.attention_atol (f32 logits and accumulation; see there).
"""

import numpy as np

from rope_mlir import compiler, reference as ref
import rope_testing as T


def module(spec_attr, qt, kt, vt, qpt, kpt, causal, same_positions):
    kp = "%qp" if same_positions else "%kp"
    kp_arg = "" if same_positions else f", %kp: {kpt}"
    attn_pos = f"positions(%qp, {kp} : {qpt}, {kpt if not same_positions else qpt}) " if causal else ""
    return f"""
func.func @kernel(%q: {qt}, %k: {kt}, %v: {vt}, %qp: {qpt}{kp_arg}) -> {qt} {{
  %qr = rope.rotate %q, %qp rotary({spec_attr}) : {qt}, {qpt}
  %kr = rope.rotate %k, {kp} rotary({spec_attr}) : {kt}, {kpt if not same_positions else qpt}
  %o = rope.attention %qr, %kr, %v {attn_pos}{"causal" if causal else ""} : {qt}, {kt}, {vt}
  return %o : {qt}
}}"""


def run_case(name, spec, q, k, v, qp, kp, causal, same_positions, types):
    with T.guard(name):
        lib = T.compile(module(spec.to_attr(), *types, causal, same_positions))
        args = [T.to_storage(a, "f32") for a in (q, k, v)] + [qp] + ([] if same_positions else [kp])
        out = T.call(lib, "kernel", *args)
        # Separate rotations, as written: each sees its own positions.
        qr = ref.rotate(q, qp, spec, seq_dim=2)
        kr = ref.rotate(k, kp, spec, seq_dim=2)
        expected = ref.attention(qr, kr, v, causal=causal, q_positions=qp, k_positions=kp)
        # qr, kr are already rotated (and scaled by m), so the logit bound sees them.
        T.check(out, expected, T.attention_atol(qr, kr, v), name)


rng = T.rng(11)

# GQA causal prefill, llama3.
S = 13
q = T.quantize(rng.standard_normal((1, 8, S, 32)), "f32")
k = T.quantize(rng.standard_normal((1, 2, S, 32)), "f32")
v = T.quantize(rng.standard_normal((1, 2, S, 32)), "f32")
pos = np.arange(S, dtype=np.int64) + 8180
llama3 = ref.RotarySpec(base=500000.0, scaling=ref.Scaling("llama3", factor=8.0, original_max_position_embeddings=8192))
run_case("gqa causal prefill llama3", llama3, q, k, v, pos, pos, True, True,
         ("tensor<1x8x?x32xf32>", "tensor<1x2x?x32xf32>", "tensor<1x2x?x32xf32>", "tensor<?xi64>", "tensor<?xi64>"))

# Decode against an un-rotated cache (non-causal: the cache holds only the past).
P = 40
q1 = T.quantize(rng.standard_normal((1, 4, 1, 24)), "f32")
kc = T.quantize(rng.standard_normal((1, 4, P + 1, 24)), "f32")
vc = T.quantize(rng.standard_normal((1, 4, P + 1, 24)), "f32")
qp = np.array([P], np.int64)
kp = np.arange(P + 1, dtype=np.int64)
partial = ref.RotarySpec(rotary_dims=16, offset=4, layout="interleaved")
run_case("decode unrotated cache interleaved partial", partial, q1, kc, vc, qp, kp, False, False,
         ("tensor<1x4x1x24xf32>", "tensor<1x4x?x24xf32>", "tensor<1x4x?x24xf32>", "tensor<1xi64>", "tensor<?xi64>"))

# Yarn: m != 1 on both Q and K.
yarn = ref.RotarySpec(scaling=ref.Scaling("yarn", factor=4.0, original_max_position_embeddings=64))
run_case("causal yarn", yarn, q, k, v, pos - 8180, pos - 8180, True, True,
         ("tensor<1x8x?x32xf32>", "tensor<1x2x?x32xf32>", "tensor<1x2x?x32xf32>", "tensor<?xi64>", "tensor<?xi64>"))

# Dynamic NTK, shared positions beyond the original context.
dyn = ref.RotarySpec(scaling=ref.Scaling("dynamic", factor=2.0, original_max_position_embeddings=8))
run_case("causal dynamic shared positions", dyn, q, k, v, pos - 8170, pos - 8170, True, True,
         ("tensor<1x8x?x32xf32>", "tensor<1x2x?x32xf32>", "tensor<1x2x?x32xf32>", "tensor<?xi64>", "tensor<?xi64>"))

# The fold really happens in the default pipeline (and only there).
folded = compiler.lower(module(llama3.to_attr(), "tensor<1x8x?x32xf32>", "tensor<1x2x?x32xf32>",
                               "tensor<1x2x?x32xf32>", "tensor<?xi64>", "tensor<?xi64>", True, True),
                        "--rope-fold-rotation-into-qk")
assert "rope.rotate" not in folded and "rotary(" in folded, folded
print("PASS fold applies")
T.finish()

# CHECK: PASS gqa causal prefill llama3
# CHECK: PASS decode unrotated cache interleaved partial
# CHECK: PASS causal yarn
# CHECK: PASS causal dynamic shared positions
# CHECK: PASS fold applies
