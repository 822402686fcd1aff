# UNSUPPORTED: asan
# RUN: %python %s | FileCheck %s
# RUN: %plain_attention %python %s | FileCheck %s
# RUN: %tiny_attention_tiles %python %s | FileCheck %s
# RUN: %split_keys_2 %python %s | FileCheck %s
# RUN: %split_keys_5 %python %s | FileCheck %s
# RUN: %gpu_mapping %python %s | FileCheck %s
"""rope.attention with the relative position biases RoPE is contrasted with,
computed inside the tiles from the positions (never as an S×S tensor), against
the f64 reference:
* ALiBi: logits += −slope_h·|p_q − p_k| with the slopes of Press et al.
  (reference.alibi_slopes), causal prefill with GQA, and non-causal with
  explicit positions on both sides of the queries;
* T5's learned bias table[bucket(p_k − p_q), h]: bidirectional (encoder,
  32 buckets, max_distance 128, every distance up to ±299 so every bucket
  kind is used, the clamp and the exact-integer boundaries included) and unidirectional (decoder, causal), with f16
  tables; the buckets come from reference.t5_relative_bucket (T5's formula,
  evaluated in f32 like T5).

Tolerance: rope_testing.attention_atol plus ulp_f32(max|v|)·max|bias| (the bias
is one more f32 term of each logit), and a storage ulp for f16. Each case is
also checked to differ from attention without the bias.
"""

import numpy as np

from rope_mlir import reference as ref
import rope_testing as T

g = T.rng(47)


def ty(*shape, e="f32"):
    return "tensor<" + "x".join(map(str, shape)) + f"x{e}>"


def run(name, *, B=1, Hq, Hkv, Sq, Sk, D=16, attrs="", qp=None, kp=None, alibi=None,
        table=None, buckets=None, table_e="f32"):
    q = T.quantize(g.standard_normal((B, Hq, Sq, D)), "f32")
    k = T.quantize(g.standard_normal((B, Hkv, Sk, D)), "f32")
    v = T.quantize(g.standard_normal((B, Hkv, Sk, D)), "f32")
    qt, kt = ty(B, Hq, Sq, D), ty(B, Hkv, Sk, D)
    args, parts = [f"%q: {qt}", f"%k: {kt}", f"%v: {kt}"], []
    if qp is not None:
        args += [f"%qp: {ty(Sq, e='i64')}", f"%kp: {ty(Sk, e='i64')}"]
        parts.append(f"positions(%qp, %kp : {ty(Sq, e='i64')}, {ty(Sk, e='i64')})")
    parts.append(attrs)
    if alibi is not None:
        args.append(f"%a: {ty(Hq)}")
        parts.append(f"alibi(%a : {ty(Hq)})")
    if table is not None:
        tt = ty(*table.shape, e=table_e)
        args.append(f"%t: {tt}")
        nb, md, bidir = buckets
        parts.append(f"relative_bias(%t : {tt}) buckets(#rope.buckets<num_buckets = {nb}, "
                     f"max_distance = {md}, bidirectional = {'true' if bidir else 'false'}>)")
    text = (f"func.func @kernel({', '.join(args)}) -> {qt} {{\n"
            f"  %r = rope.attention %q, %k, %v {' '.join(parts)} : {qt}, {kt}, {kt}\n"
            f"  return %r : {qt}\n}}\n")
    with T.guard(name):
        lib = T.compile(text)
        call_args = [q.astype(np.float32), k.astype(np.float32), v.astype(np.float32)]
        kw = {"causal": "causal" in attrs}
        bias_bound = 0.0
        if qp is not None:
            call_args += [qp.astype(np.int64), kp.astype(np.int64)]
            kw.update(q_positions=qp, k_positions=kp)
        pq = qp if qp is not None else np.arange(Sk - Sq, Sk)
        pk = kp if kp is not None else np.arange(Sk)
        if alibi is not None:
            call_args.append(alibi.astype(np.float32))
            kw["alibi_slopes"] = alibi
            bias_bound += float(np.max(np.abs(alibi))) * float(np.max(np.abs(pq[:, None] - pk[None, :])))
        if table is not None:
            stored = T.to_storage(table, table_e)
            call_args.append(stored)
            kw["relative_bias"] = T.from_storage(stored, table_e)
            kw["relative_buckets"] = buckets
            bias_bound += float(np.max(np.abs(table)))
        out = T.call(lib, "kernel", *call_args)
        expected = ref.attention(q, k, v, **kw)
        vmax = float(np.max(np.abs(v)))
        atol = T.attention_atol(q, k, v) + T.ulp(vmax, "f32") * bias_bound
        T.check(out, expected, atol, name)
        plain = ref.attention(q, k, v, causal=kw["causal"], q_positions=kw.get("q_positions"),
                              k_positions=kw.get("k_positions"))
        assert np.abs(expected - plain).max() > 1e-3, f"{name}: the bias has no effect"


run("alibi causal gqa", Hq=8, Hkv=2, Sq=24, Sk=24, attrs="causal", alibi=ref.alibi_slopes(8))
run("alibi positions both sides", Hq=4, Hkv=4, Sq=5, Sk=40, qp=np.array([3, 11, 19, 27, 35]),
    kp=np.arange(40), alibi=ref.alibi_slopes(4))
run("alibi decode 12 heads", Hq=12, Hkv=4, Sq=1, Sk=70, attrs="causal", alibi=ref.alibi_slopes(12))

buckets_bi = (32, 128, True)
run("t5 bidirectional", Hq=4, Hkv=2, Sq=6, Sk=64, qp=np.array([0, 40, 150, 300, 310, 301]),
    kp=np.arange(64) * 10, table=g.standard_normal((32, 4)), buckets=buckets_bi)
# Every distance in −299..299, the bucket boundaries where T5's f32 value is
# an exact integer (|n| = 16, 32, 64) included.
run("t5 every distance", Hq=2, Hkv=1, Sq=3, Sk=300, qp=np.array([0, 150, 299]),
    kp=np.arange(300), table=g.standard_normal((32, 2)) * 4.0, buckets=buckets_bi)
buckets_uni = (32, 128, False)
run("t5 unidirectional causal", Hq=2, Hkv=1, Sq=40, Sk=40, attrs="causal",
    qp=np.arange(40) * 7, kp=np.arange(40) * 7, table=g.standard_normal((32, 2)),
    buckets=buckets_uni)
run("t5 small buckets f16 table", Hq=3, Hkv=3, Sq=9, Sk=17, table_e="f16",
    table=g.standard_normal((8, 3)), buckets=(8, 16, True))
T.finish()

# CHECK: PASS alibi causal gqa:
# CHECK: PASS alibi positions both sides:
# CHECK: PASS alibi decode 12 heads:
# CHECK: PASS t5 bidirectional:
# CHECK: PASS t5 every distance:
# CHECK: PASS t5 unidirectional causal:
# CHECK: PASS t5 small buckets f16 table:
