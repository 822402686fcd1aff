# RUN: %python %s | FileCheck %s
"""Decode over an un-rotated KV cache with the keys rotated inside the Q·Kᵀ
reduction (`--rope-lower-to-cpu`'s `rows-rotating-keys-in-scores`, 8 by
default): each key tile's scores are lane sums over K's rows as stored, its
pairs rotated in registers (no rotated copy of K, no transposed one), and V
read in its storage type. Cases cover what takes that path and what must
not: f32, f16 and bf16 caches; GQA (4 query rows per kv head), MHA (1), MQA
(8) and two query rows with GQA (8 rows, the limit); heads of 128, 64 and 80
(40 pairs: lanes of 8); key counts that leave a partial key tile (peeled,
computed without lane sums) and split-K ranges of unequal length; window,
soft-cap, sinks and ALiBi; a partial rotation (its pass-through dims a plain
product beside the rotated pairs) and the interleaved layout (which keeps a
rotated tile of K). Each key tile computes its own cos/sin table; a tile
whose positions are one run p₀, p₀ + 1, ... takes them by angle addition
from p₀'s: the cases' positions are runs (from 1000, and from 3·10⁶ where
an error in p₀'s phase would show), and one case's are not (sorted with
gaps: the series for every key). Each case is also compiled with the option at 0 (rotated
tiles of K, the other configuration) and must agree with the f64 reference
just the same.

Tolerance: rope_testing.attention_atol (with the storage dtype), plus, where
the logits gain additive terms, |sink| and the ALiBi bias bound in units of
ulp_f32(max|v|), as attention_split_keys.py and attention_position_bias.py
state them.
"""

import numpy as np

from rope_mlir import reference as ref
import rope_testing as T

g = T.rng(71)
LLAMA3 = ref.RotarySpec(base=500000.0, scaling=ref.Scaling(
    "llama3", factor=8.0, original_max_position_embeddings=8192))


def ty(*shape, e="f32"):
    return "tensor<" + "x".join(map(str, shape)) + f"x{e}>"


def case(name, *, Hq, Hkv, Sk, D=128, Sq=1, dtype="f32", rotary=LLAMA3, window=None,
         softcap=None, sinks=False, alibi=False, start=1000, run=True):
    B = 2
    q = T.quantize(g.standard_normal((B, Hq, Sq, D)), dtype)
    k = T.quantize(g.standard_normal((B, Hkv, Sk, D)), dtype)
    v = T.quantize(g.standard_normal((B, Hkv, Sk, D)), dtype)
    kp = (np.arange(start, start + Sk) if run
          else np.sort(g.choice(np.arange(start, start + 10 * Sk), Sk, replace=False)))
    qp = kp[-Sq:]
    qt, kt = ty(B, Hq, Sq, D, e=dtype), ty(B, Hkv, Sk, D, e=dtype)
    args = [f"%q: {qt}", f"%k: {kt}", f"%v: {kt}", f"%qp: {ty(Sq, e='i64')}",
            f"%kp: {ty(Sk, e='i64')}"]
    parts = [f"positions(%qp, %kp : {ty(Sq, e='i64')}, {ty(Sk, e='i64')})"]
    call_args = [T.to_storage(a, dtype) for a in (q, k, v)] + [qp.astype(np.int64),
                                                                kp.astype(np.int64)]
    kw = {"rotary": rotary, "q_positions": qp, "k_positions": kp, "causal": True}
    extra = 0.0
    if sinks:
        s = g.standard_normal(Hq) * 2.0
        args.append(f"%s: {ty(Hq)}")
        parts.append(f"sinks(%s : {ty(Hq)})")
        call_args.append(s.astype(np.float32))
        kw["sinks"] = s
        extra += float(np.max(np.abs(s)))
    if alibi:
        slopes = ref.alibi_slopes(Hq)
        args.append(f"%a: {ty(Hq)}")
        parts.append(f"alibi(%a : {ty(Hq)})")
        call_args.append(slopes.astype(np.float32))
        kw["alibi_slopes"] = slopes
        extra += float(np.max(slopes)) * Sk
    attrs = f"rotary({rotary.to_attr(D)}) causal"
    if window is not None:
        attrs += f" window = {window}"
        kw["window"] = window
    if softcap is not None:
        attrs += f" softcap = {softcap}"
        kw["softcap"] = softcap
        extra += softcap
    text = (f"func.func @kernel({', '.join(args)}) -> {qt} {{\n"
            f"  %r = rope.attention %q, %k, %v {parts[0]} {attrs} {' '.join(parts[1:])} : "
            f"{qt}, {kt}, {kt}\n"
            f"  return %r : {qt}\n}}\n")
    expected = ref.attention(q, k, v, **kw)
    atol = (T.attention_atol(q, k, v, rotary=rotary, dtype=dtype)
            + T.ulp(float(np.max(np.abs(v))), "f32") * extra)
    for rows in (8, 0):
        label = f"{name} rows={rows}"
        with T.guard(label):
            lib = T.compile(text, pipeline="--rope-lower-to-cpu="
                            f"rows-rotating-keys-in-scores={rows}")
            out = T.call(lib, "kernel", *call_args)
            T.check_stored(out, expected, atol, dtype, label)


case("f32 gqa", Hq=8, Hkv=2, Sk=256)
case("f16 gqa partial tile", Hq=8, Hkv=2, Sk=3 * 64 + 37, dtype="f16")
case("bf16 gqa", Hq=8, Hkv=2, Sk=300, dtype="bf16")
case("f32 mha odd keys", Hq=4, Hkv=4, Sk=129)
case("f16 mqa", Hq=8, Hkv=1, Sk=200, dtype="f16")
case("f32 gqa two query rows", Hq=8, Hkv=2, Sq=2, Sk=160)
case("f32 head 64", Hq=8, Hkv=2, Sk=192, D=64)
case("f32 head 80", Hq=4, Hkv=2, Sk=128, D=80)
case("f32 window softcap", Hq=8, Hkv=2, Sk=320, window=100, softcap=4.0)
case("f16 sinks alibi", Hq=8, Hkv=2, Sk=257, dtype="f16", sinks=True, alibi=True)
case("f32 partial rotation", Hq=8, Hkv=2, Sk=192,
     rotary=ref.RotarySpec(base=10000.0, rotary_dims=64))
case("f32 interleaved", Hq=8, Hkv=2, Sk=192,
     rotary=ref.RotarySpec(base=10000.0, layout="interleaved"))
case("f32 gqa far run", Hq=8, Hkv=2, Sk=256, start=3_000_000)
case("f16 gqa positions not a run", Hq=8, Hkv=2, Sk=256, dtype="f16", run=False)
T.finish()

# CHECK: PASS f32 gqa rows=8:
# CHECK: PASS f32 gqa rows=0:
# CHECK: PASS f16 gqa partial tile rows=8:
# CHECK: PASS f16 gqa partial tile rows=0:
# CHECK: PASS bf16 gqa rows=8:
# CHECK: PASS bf16 gqa rows=0:
# CHECK: PASS f32 mha odd keys rows=8:
# CHECK: PASS f32 mha odd keys rows=0:
# CHECK: PASS f16 mqa rows=8:
# CHECK: PASS f16 mqa rows=0:
# CHECK: PASS f32 gqa two query rows rows=8:
# CHECK: PASS f32 gqa two query rows rows=0:
# CHECK: PASS f32 head 64 rows=8:
# CHECK: PASS f32 head 64 rows=0:
# CHECK: PASS f32 head 80 rows=8:
# CHECK: PASS f32 head 80 rows=0:
# CHECK: PASS f32 window softcap rows=8:
# CHECK: PASS f32 window softcap rows=0:
# CHECK: PASS f16 sinks alibi rows=8:
# CHECK: PASS f16 sinks alibi rows=0:
# CHECK: PASS f32 partial rotation rows=8:
# CHECK: PASS f32 partial rotation rows=0:
# CHECK: PASS f32 interleaved rows=8:
# CHECK: PASS f32 interleaved rows=0:
# CHECK: PASS f32 gqa far run rows=8:
# CHECK: PASS f32 gqa far run rows=0:
# CHECK: PASS f16 gqa positions not a run rows=8:
# CHECK: PASS f16 gqa positions not a run rows=0:
# CHECK-NOT: failed
