# REQUIRES: cuda-device
# RUN: %python %s | FileCheck %s
"""rope.attention on the tensor-core kernel (--rope-attention-to-tensor-cores,
which --rope-lower-to-nvvm runs for f16, bf16 and, with FMA products, f32)
against the f64 reference, at sizes that take several 64-row query tiles and 64-key tiles with tails:
causal and not, decode (Sq < Sk), GQA and MQA, batch 2, sliding window,
soft-capping, sinks, explicit positions, boolean and additive masks, ALiBi,
T5 bias, decode with split-K, RoPE inside (half, interleaved and
partial, as a spec and as the tables that folding rope.rotate ops makes).

Each case first checks that the kernel takes it (the module after the pass
holds its cp.async staging and nvvm.mma.sync, or for f32 its FMA products),
so a case cannot pass on another lowering.

Tolerance: rope_testing.tensor_core_attention_atol (f32 logits and
accumulation, P and rotated Q/K rounded to the storage type), times 2 for
libdevice's exp2 and tanh as in attention.py. Each case with a rule (causal,
window, rotary, mask, ALiBi, T5 bias, sinks) is also checked to be at least
ten times closer to the reference than the result without its rule is, so a dropped rule cannot pass.
"""

import numpy as np

from rope_mlir import reference as ref
import rope_testing as T

HALF = ref.RotarySpec(base=10000.0)
LLAMA3 = ref.RotarySpec(base=500000.0, scaling=ref.Scaling(
    "llama3", factor=8.0, original_max_position_embeddings=8192))
INTERLEAVED = ref.RotarySpec(base=10000.0, layout="interleaved")
PARTIAL = ref.RotarySpec(base=10000.0, rotary_dims=32, offset=16)


def ty(dims, e):
    return "tensor<" + "x".join(map(str, dims)) + f"x{e}>"


# name: dict(dt, B, Hq, Hkv, Sq, Sk, D, and optional causal, window, softcap,
#            scale, sinks, rotary, positions, separate)
CASES = {
    "f16 causal prefill D=64 S=150": dict(dt="f16", B=1, Hq=2, Hkv=2, Sq=150, Sk=150, D=64,
                                          causal=True),
    "bf16 gqa 4/2 causal D=128 S=130": dict(dt="bf16", B=1, Hq=4, Hkv=2, Sq=130, Sk=130, D=128,
                                            causal=True),
    "f16 full attention Sq=70 Sk=200 D=32": dict(dt="f16", B=1, Hq=2, Hkv=1, Sq=70, Sk=200, D=32),
    "bf16 mqa decode Sq=3 Sk=190 causal": dict(dt="bf16", B=2, Hq=4, Hkv=1, Sq=3, Sk=190, D=64,
                                               causal=True),
    "f16 sliding window 40 S=160": dict(dt="f16", B=1, Hq=2, Hkv=2, Sq=160, Sk=160, D=64,
                                        causal=True, window=40),
    "bf16 softcap 5 scale 0.3": dict(dt="bf16", B=1, Hq=2, Hkv=2, Sq=80, Sk=80, D=64,
                                     causal=True, softcap=5.0, scale=0.3),
    "f16 sinks": dict(dt="f16", B=1, Hq=2, Hkv=2, Sq=66, Sk=66, D=64, causal=True, sinks=True),
    "f16 explicit positions causal": dict(dt="f16", B=1, Hq=2, Hkv=2, Sq=70, Sk=130, D=64,
                                          causal=True, positions="shuffled"),
    "f16 rotary llama3 gqa 4/2 causal D=128": dict(dt="f16", B=1, Hq=4, Hkv=2, Sq=140, Sk=140,
                                                   D=128, causal=True, rotary=LLAMA3),
    "bf16 rotary interleaved decode": dict(dt="bf16", B=1, Hq=2, Hkv=2, Sq=5, Sk=100, D=64,
                                           causal=True, rotary=INTERLEAVED),
    "f16 partial rotary 32 of 64 at 16": dict(dt="f16", B=1, Hq=2, Hkv=2, Sq=90, Sk=90, D=64,
                                        causal=True, rotary=PARTIAL),
    "bf16 rope.rotate folded into tables": dict(dt="bf16", B=1, Hq=4, Hkv=2, Sq=75, Sk=75, D=64,
                                                causal=True, rotary=HALF, positions="offset",
                                                separate=True),
    "f16 padding mask [B,1,1,Sk] batch 2": dict(dt="f16", B=2, Hq=2, Hkv=1, Sq=70, Sk=70, D=64,
                                                causal=True, mask=("i1", (2, 1, 1, 70))),
    "bf16 additive mask [Sq,Sk]": dict(dt="bf16", B=1, Hq=2, Hkv=2, Sq=67, Sk=99, D=64,
                                       mask=("bf16", (67, 99))),
    "f16 alibi causal gqa 4/2": dict(dt="f16", B=1, Hq=4, Hkv=2, Sq=90, Sk=90, D=64, causal=True,
                                     alibi=True),
    "bf16 t5 bias bidirectional": dict(dt="bf16", B=1, Hq=2, Hkv=2, Sq=80, Sk=80, D=64,
                                       t5=(32, 128, True)),
    # 4 heads: split-K takes every one of the 16 key tiles, and merges the
    # sinks (the op's initial state) with the 16 partial states.
    "f16 decode split-K 16 ways with sinks": dict(dt="f16", B=1, Hq=4, Hkv=1, Sq=1, Sk=1000,
                                                  D=128, sinks=True),
    # Decode with GQA packs a kv head's 4 query heads into one block's rows
    # (row = head in group · Sq + query): positions, rules and the rotation
    # tables follow each row's query, not its row.
    "bf16 rotary llama3 gqa 8/2 decode Sq=2 packed": dict(dt="bf16", B=2, Hq=8, Hkv=2, Sq=2,
                                                          Sk=150, D=128, causal=True,
                                                          rotary=LLAMA3),
    "f16 gqa 8/2 decode Sq=3 window 40 softcap packed": dict(dt="f16", B=1, Hq=8, Hkv=2, Sq=3,
                                                             Sk=200, D=64, causal=True, window=40,
                                                             softcap=5.0),
    # f32: the same kernel with its products as FMA (no tensor cores).
    "f32 rotary llama3 gqa 4/2 causal D=128": dict(dt="f32", B=1, Hq=4, Hkv=2, Sq=130, Sk=130,
                                                   D=128, causal=True, rotary=LLAMA3),
    "f32 full attention Sq=70 Sk=200 D=32": dict(dt="f32", B=1, Hq=2, Hkv=1, Sq=70, Sk=200, D=32),
    "f32 mqa decode Sq=3 Sk=190 causal": dict(dt="f32", B=2, Hq=4, Hkv=1, Sq=3, Sk=190, D=64,
                                              causal=True),
    "f32 sliding window 40 softcap 5 S=160": dict(dt="f32", B=1, Hq=2, Hkv=2, Sq=160, Sk=160,
                                                  D=64, causal=True, window=40, softcap=5.0),
    "f32 explicit positions causal sinks": dict(dt="f32", B=1, Hq=2, Hkv=2, Sq=70, Sk=130, D=64,
                                                causal=True, positions="shuffled", sinks=True),
    "f32 rotary interleaved": dict(dt="f32", B=1, Hq=2, Hkv=2, Sq=70, Sk=70, D=64,
                                   causal=True, rotary=INTERLEAVED),
    "f32 partial rotary 32 of 64 at 16": dict(dt="f32", B=1, Hq=2, Hkv=2, Sq=90, Sk=90, D=64,
                                              causal=True, rotary=PARTIAL),
    "f32 rope.rotate folded into tables": dict(dt="f32", B=1, Hq=4, Hkv=2, Sq=75, Sk=75, D=64,
                                               causal=True, rotary=HALF, positions="offset",
                                               separate=True),
    "f32 padding mask [B,1,1,Sk] batch 2": dict(dt="f32", B=2, Hq=2, Hkv=1, Sq=70, Sk=70, D=64,
                                                causal=True, mask=("i1", (2, 1, 1, 70))),
    "f32 additive mask [Sq,Sk]": dict(dt="f32", B=1, Hq=2, Hkv=2, Sq=67, Sk=99, D=64,
                                      mask=("f32", (67, 99))),
    "f32 alibi causal gqa 4/2": dict(dt="f32", B=1, Hq=4, Hkv=2, Sq=90, Sk=90, D=64, causal=True,
                                     alibi=True),
    "f32 t5 bias bidirectional": dict(dt="f32", B=1, Hq=2, Hkv=2, Sq=80, Sk=80, D=64,
                                      t5=(32, 128, True)),
    "f32 decode split-K 16 ways with sinks": dict(dt="f32", B=1, Hq=4, Hkv=1, Sq=1, Sk=1000,
                                                  D=128, sinks=True),
}


def module(c):
    dt, D = c["dt"], c["D"]
    qt, kt = ty((c["B"], c["Hq"], c["Sq"], D), dt), ty((c["B"], c["Hkv"], c["Sk"], D), dt)
    params, opnds, attrs, body = f"%q: {qt}, %k: {kt}, %v: {kt}", "", [], ""
    q_in, k_in = "%q", "%k"
    if c.get("positions"):
        qpt, kpt = ty((c["Sq"],), "i64"), ty((c["Sk"],), "i64")
        params += f", %qp: {qpt}, %kp: {kpt}"
        opnds += f" positions(%qp, %kp : {qpt}, {kpt})"
    if c.get("separate"):
        attr = T.spec_attr(c["rotary"])
        body = (f"  %qr = rope.rotate %q, %qp rotary({attr}) : {qt}, {qpt}\n"
                f"  %kr = rope.rotate %k, %kp rotary({attr}) : {kt}, {kpt}\n")
        q_in, k_in = "%qr", "%kr"
    elif c.get("rotary") is not None:
        attrs.append(f"rotary({T.spec_attr(c['rotary'])})")
    if c.get("causal"):
        attrs.append("causal")
    if c.get("window"):
        attrs.append(f"window = {c['window']}")
    if c.get("softcap"):
        attrs.append(f"softcap = {c['softcap']}")
    if c.get("scale"):
        attrs.append(f"scale = {c['scale']}")
    if c.get("sinks"):
        st = ty((c["Hq"],), dt)
        params += f", %s: {st}"
        attrs.append(f"sinks(%s : {st})")
    if c.get("mask"):
        mt = ty(c["mask"][1], c["mask"][0])
        params += f", %m: {mt}"
        opnds = f" mask(%m : {mt})" + opnds
    if c.get("alibi"):
        at = ty((c["Hq"],), "f32")
        params += f", %a: {at}"
        attrs.append(f"alibi(%a : {at})")
    if c.get("t5"):
        nb, md, bidir = c["t5"]
        tt = ty((nb, c["Hq"]), "f32")
        params += f", %t: {tt}"
        attrs.append(f"relative_bias(%t : {tt}) buckets(#rope.buckets<num_buckets = {nb}, "
                     f"max_distance = {md}, bidirectional = {'true' if bidir else 'false'}>)")
    return (f"func.func @kernel({params}) -> {qt} {{\n{body}"
            f"  %r = rope.attention {q_in}, {k_in}, %v{opnds} {' '.join(attrs)}"
            f" : {qt}, {kt}, {kt}\n  return %r : {qt}\n}}\n")


def positions(c):
    kind = c.get("positions")
    if kind == "offset":
        p = np.arange(c["Sq"]) + 300
        return p, p
    # Keys in a shuffled order at scattered positions, queries among them:
    # the kernel must read every position, not assume 0..Sk-1.
    g = np.random.default_rng(5)
    kp = g.permutation(np.arange(c["Sk"]) * 3)
    qp = np.sort(g.choice(kp, c["Sq"], replace=False))
    return qp, kp


g = T.rng(47)
for name, c in CASES.items():
    dt = c["dt"]
    with T.guard(f"tensor-core attention {name}"):
        source = module(c)
        assert T.takes_attention_kernel(source, dt), "the attention kernel does not take the case"
        lib = T.gpu_compile(source)
        if lib is None:
            print(f"COMPILED tensor-core attention {name}")
            continue
        shape_q = (c["B"], c["Hq"], c["Sq"], c["D"])
        shape_k = (c["B"], c["Hkv"], c["Sk"], c["D"])
        q = T.quantize(g.standard_normal(shape_q), dt)
        k = T.quantize(g.standard_normal(shape_k), dt)
        v = T.quantize(3.0 * g.standard_normal(shape_k), dt)
        args = [T.to_storage(a, dt) for a in (q, k, v)]
        kw = dict(causal=c.get("causal", False), scale=c.get("scale"), window=c.get("window"),
                  softcap=c.get("softcap"))
        if c.get("positions"):
            qp, kp = positions(c)
            args += [qp.astype(np.int64), kp.astype(np.int64)]
            kw.update(q_positions=qp, k_positions=kp)
        if c.get("sinks"):
            sinks = T.quantize(g.standard_normal(c["Hq"]) + 2.0, dt)
            args.append(T.to_storage(sinks, dt))
            kw["sinks"] = sinks
        # Additive terms make logits larger than |q·k|, and their f32
        # rounding errors with them: 2·ulp_f32(V) per unit of their bound.
        bias_bound = 0.0
        if c.get("mask"):
            me, shape = c["mask"]
            if me == "i1":
                mask = g.random(shape) > 0.2
                args.append(mask)
            else:
                mask = T.quantize(g.standard_normal(shape), me)
                args.append(T.to_storage(mask, me))
                bias_bound += float(np.abs(mask).max())
            kw["mask"] = mask
        if c.get("alibi"):
            slopes = ref.alibi_slopes(c["Hq"])
            args.append(slopes.astype(np.float32))
            kw["alibi_slopes"] = slopes
            bias_bound += float(slopes.max()) * max(c["Sq"], c["Sk"])
        if c.get("t5"):
            table = T.quantize(g.standard_normal((c["t5"][0], c["Hq"])), "f32")
            args.append(table.astype(np.float32))
            kw.update(relative_bias=table, relative_buckets=c["t5"])
            bias_bound += float(np.abs(table).max())
        out = T.call(lib, "kernel", *args)
        spec = c.get("rotary")
        expected = ref.attention(q, k, v, rotary=spec, **kw)
        atol = 2.0 * T.tensor_core_attention_atol(q, k, v, scale=c.get("scale"), rotary=spec,
                                                  dtype=dt)
        atol += 2.0 * T.ulp(float(np.abs(v).max()), "f32") * bias_bound
        T.check_stored(out, expected, atol, dt, f"tensor-core attention {name}")
        ruled = ("causal", "window", "rotary", "mask", "alibi", "t5", "sinks")
        if any(c.get(rule) for rule in ruled):
            plain = ref.attention(q, k, v, scale=c.get("scale"), softcap=c.get("softcap"))
            # A kernel that dropped the rule would be as far from `expected`
            # as `plain` is; the one we have must be ten times closer.
            err = np.abs(T.from_storage(out, dt) - expected).max()
            assert np.abs(expected - plain).max() > 10 * err, "case does not exercise what it claims"
T.finish()

# CHECK: PASS tensor-core attention f16 causal prefill D=64 S=150
# CHECK: PASS tensor-core attention bf16 gqa 4/2 causal D=128 S=130
# CHECK: PASS tensor-core attention f16 full attention Sq=70 Sk=200 D=32
# CHECK: PASS tensor-core attention bf16 mqa decode Sq=3 Sk=190 causal
# CHECK: PASS tensor-core attention f16 sliding window 40 S=160
# CHECK: PASS tensor-core attention bf16 softcap 5 scale 0.3
# CHECK: PASS tensor-core attention f16 sinks
# CHECK: PASS tensor-core attention f16 explicit positions causal
# CHECK: PASS tensor-core attention f16 rotary llama3 gqa 4/2 causal D=128
# CHECK: PASS tensor-core attention bf16 rotary interleaved decode
# CHECK: PASS tensor-core attention f16 partial rotary 32 of 64
# CHECK: PASS tensor-core attention bf16 rope.rotate folded into tables
# CHECK: PASS tensor-core attention f16 padding mask [B,1,1,Sk] batch 2
# CHECK: PASS tensor-core attention bf16 additive mask [Sq,Sk]
# CHECK: PASS tensor-core attention f16 alibi causal gqa 4/2
# CHECK: PASS tensor-core attention bf16 t5 bias bidirectional
# CHECK: PASS tensor-core attention f16 decode split-K 16 ways with sinks
# CHECK: PASS tensor-core attention bf16 rotary llama3 gqa 8/2 decode Sq=2 packed
# CHECK: PASS tensor-core attention f16 gqa 8/2 decode Sq=3 window 40 softcap packed
# CHECK: PASS tensor-core attention f32 rotary llama3 gqa 4/2 causal D=128
# CHECK: PASS tensor-core attention f32 full attention Sq=70 Sk=200 D=32
# CHECK: PASS tensor-core attention f32 mqa decode Sq=3 Sk=190 causal
# CHECK: PASS tensor-core attention f32 sliding window 40 softcap 5 S=160
# CHECK: PASS tensor-core attention f32 explicit positions causal sinks
# CHECK: PASS tensor-core attention f32 rotary interleaved
# CHECK: PASS tensor-core attention f32 partial rotary 32 of 64
# CHECK: PASS tensor-core attention f32 rope.rotate folded into tables
# CHECK: PASS tensor-core attention f32 padding mask [B,1,1,Sk] batch 2
# CHECK: PASS tensor-core attention f32 additive mask [Sq,Sk]
# CHECK: PASS tensor-core attention f32 alibi causal gqa 4/2
# CHECK: PASS tensor-core attention f32 t5 bias bidirectional
# CHECK: PASS tensor-core attention f32 decode split-K 16 ways with sinks
# CHECK-NOT: FAIL
