# UNSUPPORTED: asan
# RUN: %python %s | FileCheck %s
# RUN: %plain_attention %python %s | FileCheck %s
# RUN: %tiny_attention_tiles %python %s | FileCheck %s
# RUN: %split_keys_2 %python %s | FileCheck %s
# RUN: %split_keys_5 %python %s | FileCheck %s
# RUN: %gpu_mapping %python %s | FileCheck %s
"""rope.attention with f16 storage (math and accumulation in f32, result
rounded to f16): causal prefill, GQA (Hq = 4, Hkv = 2) with RoPE inside
(interleaved, llama3) at decode positions, and an f16 additive mask; one bf16
case (bit patterns) with RoPE. Inputs are quantized to the storage type so
the reference sees exactly the kernel's inputs.

Tolerance (rope_testing.attention_atol with the storage dtype): the f32 bound
ulp_f32(max|v|)·(L + 2·sqrt(Sk)) per row, plus 1 ulp of the storage type at
max|v|: the result is a convex combination of values, |out| <= max|v|, and
the final rounding is <= ½ storage ulp there (a whole ulp allowed, as the f32
error can carry |out| across a power of two).
"""

import numpy as np

from rope_mlir import reference as ref
import rope_testing as T

B, D = 2, 16
g = T.rng(17)
LLAMA3 = ref.RotarySpec(base=500000.0, layout="interleaved", scaling=ref.Scaling(
    "llama3", factor=8.0, original_max_position_embeddings=8192))


def ty(dims, e):
    return "tensor<" + "x".join(map(str, dims)) + f"x{e}>"


CASES = {
    # name: (dtype, Hq, Hkv, Sq, Sk, attrs, mask, q positions, k positions, rotary, causal)
    "f16 causal prefill": ("f16", 2, 2, 5, 5, "causal", None, None, None, None, True),
    "f16 gqa rotary decode": ("f16", 4, 2, 2, 9, f"rotary({LLAMA3.to_attr()}) causal", None,
                              np.array([20007, 20008]), np.arange(20000, 20009), LLAMA3, True),
    "f16 additive f16 mask": ("f16", 2, 2, 3, 6, "", T.quantize(g.standard_normal((3, 6)), "f16"),
                              None, None, None, False),
    "bf16 rotary causal": ("bf16", 2, 2, 4, 4, f"rotary({ref.RotarySpec().to_attr()}) causal", None, None, None,
                           ref.RotarySpec(), True),
}

for name, (dt, hq, hkv, sq, sk, attrs, mask, qp, kp, rotary, causal) in CASES.items():
    q = T.quantize(g.standard_normal((B, hq, sq, D)), dt)
    k = T.quantize(g.standard_normal((B, hkv, sk, D)), dt)
    v = T.quantize(3.0 * g.standard_normal((B, hkv, sk, D)), dt)
    qt, kt = ty((B, hq, sq, D), dt), ty((B, hkv, sk, D), dt)
    params = f"%q: {qt}, %k: {kt}, %v: {kt}"
    opnds = ""
    args = [T.to_storage(a, dt) for a in (q, k, v)]
    if mask is not None:
        mt = ty(mask.shape, dt)
        params += f", %m: {mt}"
        opnds += f" mask(%m : {mt})"
        args.append(T.to_storage(mask, dt))
    if qp is not None:
        qpt, kpt = ty(qp.shape, "i64"), ty(kp.shape, "i64")
        params += f", %qp: {qpt}, %kp: {kpt}"
        opnds += f" positions(%qp, %kp : {qpt}, {kpt})"
        args += [qp.astype(np.int64), kp.astype(np.int64)]
    mlir = f"""func.func @kernel({params}) -> {qt} {{
  %r = rope.attention %q, %k, %v{opnds} {attrs} : {qt}, {kt}, {kt}
  return %r : {qt}
}}"""
    with T.guard(name):
        lib = T.compile(mlir)
        out = T.call(lib, "kernel", *args)
        assert out.dtype == args[0].dtype, f"result storage {out.dtype}"
        expected = ref.attention(q, k, v, mask=mask, rotary=rotary, causal=causal,
                                 q_positions=qp, k_positions=kp)
        T.check_stored(out, expected, T.attention_atol(q, k, v, rotary=rotary, dtype=dt), dt,
                       f"attention {name}")
T.finish()

# CHECK: PASS attention f16 causal prefill:
# CHECK: PASS attention f16 gqa rotary decode:
# CHECK: PASS attention f16 additive f16 mask:
# CHECK: PASS attention bf16 rotary causal:
