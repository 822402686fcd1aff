# REQUIRES: cuda-device
# RUN: %python %s | FileCheck %s
"""rope.attention on the GPU (--rope-lower-to-nvvm) against the f64
reference: causal prefill, GQA and MQA, decode (Sq < Sk, default and
explicit positions), scale and additive mask, f16 and bf16 storage (f32
math and accumulation), and RoPE fused into attention, both as a `rotary`
spec on the op and as rope.rotate ops that the pipeline folds into the
Q·Kᵀ reduction. Every case runs the FlashAttention-style kernel
(tensor_core_attention.py; FMA products for f32), which each case checks
takes it.

Tolerance: 2 × rope_testing.attention_atol (f32 logits and accumulation, +1
storage ulp for f16/bf16). The factor 2 covers libdevice's expf and
sinf/cosf, within 2 ulps where the CPU's are within 1. Each causal or
rotary case is also checked to differ clearly from the plain result, so a
dropped mask or rotation cannot pass.
"""

import numpy as np

from rope_mlir import reference as ref
import rope_testing as T

D = 32
LLAMA3 = ref.RotarySpec(base=500000.0, layout="interleaved", scaling=ref.Scaling(
    "llama3", factor=8.0, original_max_position_embeddings=8192))


def ty(dims, e):
    return "tensor<" + "x".join(map(str, dims)) + f"x{e}>"


# name: (dtype, B, Hq, Hkv, Sq, Sk, causal, rotary spec | None, positions | None,
#        scale | None, with mask, rope as separate rope.rotate ops)
CASES = {
    "causal prefill f32": ("f32", 2, 4, 4, 37, 37, True, None, None, None, False, False),
    "gqa 8/2 causal": ("f32", 1, 8, 2, 19, 19, True, None, None, None, False, False),
    "mqa decode default positions": ("f32", 2, 4, 1, 3, 70, True, None, None, None, False, False),
    "decode explicit positions": ("f32", 1, 2, 2, 2, 33, True, None,
                                  (np.array([40, 41]), np.arange(33) * 2), None, False, False),
    "scale and additive mask": ("f32", 1, 2, 2, 9, 12, False, None, None, 0.3, True, False),
    "f16 causal": ("f16", 1, 4, 2, 21, 21, True, None, None, None, False, False),
    "bf16 causal": ("bf16", 1, 4, 2, 21, 21, True, None, None, None, False, False),
    "rotary in op gqa decode": ("f32", 1, 4, 2, 2, 40, True, LLAMA3,
                                (np.array([20038, 20039]), np.arange(20000, 20040)), None, False,
                                False),
    "rotary in op f16 prefill": ("f16", 1, 2, 2, 17, 17, True, ref.RotarySpec(),
                                 None, None, False, False),
    "rotary dynamic ntk in op": ("f32", 1, 2, 2, 4, 8, False,
                                 ref.RotarySpec(scaling=ref.Scaling(
                                     "dynamic", factor=2.0, original_max_position_embeddings=16)),
                                 (np.array([20, 21, 22, 23]), np.arange(8) * 3), None, False, False),
    "rope.rotate folded into attention": ("f32", 1, 8, 2, 13, 13, True,
                                          LLAMA3, (np.arange(13) + 8180,) * 2,
                                          None, False, True),
}


def module(dt, b, hq, hkv, sq, sk, causal, rotary, pos, scale, with_mask, separate):
    qt, kt = ty((b, hq, sq, D), dt), ty((b, hkv, sk, D), dt)
    params, opnds, attrs, body = f"%q: {qt}, %k: {kt}, %v: {kt}", "", [], ""
    if with_mask:
        mt = ty((sq, sk), dt)
        params += f", %m: {mt}"
        opnds += f" mask(%m : {mt})"
    q_in, k_in = "%q", "%k"
    if pos is not None:
        qpt, kpt = ty(pos[0].shape, "i64"), ty(pos[1].shape, "i64")
        params += f", %qp: {qpt}, %kp: {kpt}"
        opnds += f" positions(%qp, %kp : {qpt}, {kpt})"
    if rotary is not None and separate:
        body = (f"  %qr = rope.rotate %q, %qp rotary({T.spec_attr(rotary)}) : {qt}, {qpt}\n"
                f"  %kr = rope.rotate %k, %kp rotary({T.spec_attr(rotary)}) : {kt}, {kpt}\n")
        q_in, k_in = "%qr", "%kr"
    elif rotary is not None:
        attrs.append(f"rotary({T.spec_attr(rotary)})")
    if causal:
        attrs.append("causal")
    if scale is not None:
        attrs.append(f"scale = {scale}")
    return (f"func.func @kernel({params}) -> {qt} {{\n{body}"
            f"  %r = rope.attention {q_in}, {k_in}, %v{opnds} {' '.join(attrs)} : {qt}, {kt}, {kt}\n"
            f"  return %r : {qt}\n}}\n")


g = T.rng(31)
for name, case in CASES.items():
    dt, b, hq, hkv, sq, sk, causal, rotary, pos, scale, with_mask, separate = case
    with T.guard(f"gpu attention {name}"):
        source = module(*case)
        assert T.takes_attention_kernel(source, dt), "the attention kernel does not take the case"
        lib = T.gpu_compile(source)
        if lib is None:
            print(f"COMPILED gpu attention {name}")
            continue
        q = T.quantize(g.standard_normal((b, hq, sq, D)), dt)
        k = T.quantize(g.standard_normal((b, hkv, sk, D)), dt)
        v = T.quantize(3.0 * g.standard_normal((b, hkv, sk, D)), dt)
        args = [T.to_storage(a, dt) for a in (q, k, v)]
        kw = dict(causal=causal, scale=scale)
        mask = None
        if with_mask:
            mask = T.quantize(g.standard_normal((sq, sk)), dt)
            args.append(T.to_storage(mask, dt))
            kw["mask"] = mask
        if pos is not None:
            args += [pos[0].astype(np.int64), pos[1].astype(np.int64)]
            kw.update(q_positions=pos[0], k_positions=pos[1])
        out = T.call(lib, "kernel", *args)
        spec = rotary
        expected = ref.attention(q, k, v, rotary=spec, **kw)
        atol = 2.0 * T.attention_atol(q, k, v, scale=scale, rotary=spec, dtype=dt)
        T.check_stored(out, expected, atol, dt, f"gpu attention {name}")
        if causal or spec is not None:
            plain = ref.attention(q, k, v, scale=scale, mask=mask)
            assert np.abs(expected - plain).max() > 1e-2, "case does not exercise what it claims"
T.finish()

# CHECK: PASS gpu attention causal prefill f32
# CHECK: PASS gpu attention gqa 8/2 causal
# CHECK: PASS gpu attention mqa decode default positions
# CHECK: PASS gpu attention decode explicit positions
# CHECK: PASS gpu attention scale and additive mask
# CHECK: PASS gpu attention f16 causal
# CHECK: PASS gpu attention bf16 causal
# CHECK: PASS gpu attention rotary in op gqa decode
# CHECK: PASS gpu attention rotary in op f16 prefill
# CHECK: PASS gpu attention rotary dynamic ntk in op
# CHECK: PASS gpu attention rope.rotate folded into attention
