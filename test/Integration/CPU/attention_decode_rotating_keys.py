# UNSUPPORTED: asan
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

A compile costs seconds and a call nothing, so the classes share kernels:
seven kernels (each compiled at 8 and at 0) hold them all, the three
position patterns are three calls of one kernel, and a kernel with
several features (window and soft-cap; sinks and ALiBi) checks that
dropping any one of them would move its result by ten tolerances. The
interleaved kernel lowers the same at 8 as at 0 (the option needs the
half layout): the test compares the two lowerings and, being the same,
compiles it once (its SAME line is checked: that the interleaved layout
stays off the path is one of the cases).

Tolerance: rope_testing.attention_atol (with the storage dtype), plus, where
the logits gain additive terms, |sink| and the ALiBi bias bound in units of
ulp_f32(max|v|), as attention_split_keys.py and attention_position_bias.py
state them.
"""

import numpy as np

from rope_mlir import compiler, reference as ref
import rope_testing as T

g = T.rng(71)
LLAMA3 = ref.RotarySpec(base=500000.0, scaling=ref.Scaling(
    "llama3", factor=8.0, original_max_position_embeddings=8192))


def ty(*shape, e="f32"):
    return "tensor<" + "x".join(map(str, shape)) + f"x{e}>"


def case(name, *, Hq, Hkv, Sk, D=128, Sq=1, dtype="f32", rotary=LLAMA3, window=None,
         softcap=None, sinks=False, alibi=False, positions=(("", 1000, True),),
         same_for_rows=False):
    """One kernel, compiled with the option at 8 and at 0 (with
    `same_for_rows`, once, when both lower to the same code), called with
    each of `positions`: (name suffix, first key position, a run or not)."""
    B = 2
    qt, kt = ty(B, Hq, Sq, D, e=dtype), ty(B, Hkv, Sk, D, e=dtype)
    args = [f"%q: {qt}", f"%k: {kt}", f"%v: {kt}", f"%qp: {ty(Sq, e='i64')}",
            f"%kp: {ty(Sk, e='i64')}"]
    parts = [f"positions(%qp, %kp : {ty(Sq, e='i64')}, {ty(Sk, e='i64')})"]
    extra_args = []
    kw = {"rotary": rotary, "causal": True}
    extra = 0.0
    if sinks:
        s = g.standard_normal(Hq) * 2.0
        args.append(f"%s: {ty(Hq)}")
        parts.append(f"sinks(%s : {ty(Hq)})")
        extra_args.append(s.astype(np.float32))
        kw["sinks"] = s
        extra += float(np.max(np.abs(s)))
    if alibi:
        slopes = ref.alibi_slopes(Hq)
        args.append(f"%a: {ty(Hq)}")
        parts.append(f"alibi(%a : {ty(Hq)})")
        extra_args.append(slopes.astype(np.float32))
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
    pipelines = {rows: f"--rope-lower-to-cpu=rows-rotating-keys-in-scores={rows}"
                 for rows in (8, 0)}
    libs = {}
    for rows, pipeline in pipelines.items():
        with T.guard(f"{name} rows={rows} compiles"):
            if same_for_rows and libs and compiler.lower(text, pipeline) == compiler.lower(
                    text, pipelines[8]):
                libs[rows] = libs[8]
                print(f"SAME {name} rows={rows}: lowers as rows=8 does, its kernel is reused")
            else:
                libs[rows] = T.compile(text, pipeline=pipeline)
    for suffix, start, run in positions:
        q = T.quantize(g.standard_normal((B, Hq, Sq, D)), dtype)
        k = T.quantize(g.standard_normal((B, Hkv, Sk, D)), dtype)
        v = T.quantize(g.standard_normal((B, Hkv, Sk, D)), dtype)
        kp = (np.arange(start, start + Sk) if run
              else np.sort(g.choice(np.arange(start, start + 10 * Sk), Sk, replace=False)))
        qp = kp[-Sq:]
        call_args = ([T.to_storage(a, dtype) for a in (q, k, v)]
                     + [qp.astype(np.int64), kp.astype(np.int64)] + extra_args)
        kwp = {**kw, "q_positions": qp, "k_positions": kp}
        expected = ref.attention(q, k, v, **kwp)
        atol = (T.attention_atol(q, k, v, rotary=rotary, dtype=dtype)
                + T.ulp(float(np.max(np.abs(v))), "f32") * extra)
        # Cases that share a kernel hold several features: each one must move
        # the result by ten tolerances, so a kernel without it cannot pass.
        for feature in ("window", "softcap", "sinks", "alibi_slopes"):
            if feature in kwp:
                without = ref.attention(q, k, v, **{**kwp, feature: None})
                with T.guard(f"{name}{suffix} {feature} matters"):
                    assert np.abs(expected - without).max() > 10 * np.max(atol), \
                        f"{name}: without {feature} the result is within 10 tolerances"
        for rows, lib in libs.items():
            label = f"{name}{suffix} rows={rows}"
            with T.guard(label):
                out = T.call(lib, "kernel", *call_args)
                T.check_stored(out, expected, atol, dtype, label)


# Each kernel covers several of the classes above (every class is in one,
# checked with the option at 8 and at 0; a compile costs seconds, a call
# nothing): positions as runs from 1000 and from 3·10⁶ and not as a run call
# one kernel; the partial key tiles are 37 keys (229), 44 (300), 8 (200),
# 32 (160) and 1 (129).
case("f32 gqa", Hq=8, Hkv=2, Sk=256,
     positions=(("", 1000, True), (" far run", 3_000_000, True),
                (" positions not a run", 1000, False)))
case("f16 gqa partial tile sinks alibi", Hq=8, Hkv=2, Sk=3 * 64 + 37, dtype="f16", sinks=True,
     alibi=True)
case("bf16 gqa", Hq=8, Hkv=2, Sk=300, dtype="bf16")
case("f32 mha head 64 odd keys window softcap", Hq=4, Hkv=4, Sk=129, D=64, window=100,
     softcap=4.0)
case("f16 mqa head 80", Hq=8, Hkv=1, Sk=200, D=80, dtype="f16")
case("f32 gqa two query rows partial rotation", Hq=8, Hkv=2, Sq=2, Sk=160,
     rotary=ref.RotarySpec(base=10000.0, rotary_dims=64))
# The interleaved layout keeps a rotated tile of K whatever the option says.
case("f32 interleaved", Hq=8, Hkv=2, Sk=192,
     rotary=ref.RotarySpec(base=10000.0, layout="interleaved"), same_for_rows=True)
T.finish()

# CHECK: PASS f32 gqa rows=8:
# CHECK: PASS f32 gqa rows=0:
# CHECK: PASS f32 gqa far run rows=8:
# CHECK: PASS f32 gqa far run rows=0:
# CHECK: PASS f32 gqa positions not a run rows=8:
# CHECK: PASS f32 gqa positions not a run rows=0:
# CHECK: PASS f16 gqa partial tile sinks alibi rows=8:
# CHECK: PASS f16 gqa partial tile sinks alibi rows=0:
# CHECK: PASS bf16 gqa rows=8:
# CHECK: PASS bf16 gqa rows=0:
# CHECK: PASS f32 mha head 64 odd keys window softcap rows=8:
# CHECK: PASS f32 mha head 64 odd keys window softcap rows=0:
# CHECK: PASS f16 mqa head 80 rows=8:
# CHECK: PASS f16 mqa head 80 rows=0:
# CHECK: PASS f32 gqa two query rows partial rotation rows=8:
# CHECK: PASS f32 gqa two query rows partial rotation rows=0:
# CHECK: SAME f32 interleaved rows=0
# CHECK: PASS f32 interleaved rows=8:
# CHECK: PASS f32 interleaved rows=0:
# CHECK-NOT: FAIL
# CHECK-NOT: failed
