# UNSUPPORTED: asan
# RUN: %python %s | FileCheck %s
# RUN: %plain_attention %python %s | FileCheck %s
# RUN: %tiny_attention_tiles %python %s | FileCheck %s
# RUN: %split_keys_2 %python %s | FileCheck %s
# RUN: %split_keys_5 %python %s | FileCheck %s
# RUN: %gpu_mapping %python %s | FileCheck %s
"""rope.attention with a sliding window, logit soft-capping and sinks, against
the f64 reference (reference.attention, written from the definitions):
* window W (with causal): query at p sees keys in (p − W, p]; prefill with
  windows smaller and larger than a tile (tiles wholly outside the window
  are skipped by the tiled configurations, tiles wholly inside it run
  without the rule), positions in no order, decode with explicit
  positions and RoPE inside;
* softcap c: logits ← c·tanh(logits / c) before masking (large logits, so
  the cap changes the result), in decode without causal and with GQA and
  causal;
* sinks [Hq]: one logit per query head in the softmax denominator that adds
  no value; in decode, with GQA and causal, and a row whose keys are all
  masked out (it must be exactly 0);
* all three together with RoPE and f16 storage.

A compile costs a second or more per pipeline and a check nothing, so
features share cases where they are independent (soft-cap and sinks;
window, RoPE and explicit positions), each case checking that every one of
its features changes the result.

Tolerance: rope_testing.attention_atol with the logit bound L raised by the cap
(c) and the sinks (|sink|): ulp_f32(max|v|)·(L + 2·sqrt(Sk)) per row, plus
one storage ulp for f16. Each feature is also checked to change the result,
so dropping it cannot pass.
"""

import numpy as np

from rope_mlir import reference as ref
import rope_testing as T

g = T.rng(31)


def ty(*shape, e="f32"):
    return "tensor<" + "x".join(map(str, shape)) + f"x{e}>"


def module(B, Hq, Hkv, Sq, Sk, D, *, attrs="", positions=False, sinks=False,
           mask=None, e="f32"):
    qt, kt = ty(B, Hq, Sq, D, e=e), ty(B, Hkv, Sk, D, e=e)
    args = [f"%q: {qt}", f"%k: {kt}", f"%v: {kt}"]
    parts = []
    if mask is not None:
        args.append(f"%m: {ty(*mask, e='i1')}")
        parts.append(f"mask(%m : {ty(*mask, e='i1')})")
    if positions:
        args += [f"%qp: {ty(Sq, e='i64')}", f"%kp: {ty(Sk, e='i64')}"]
        parts.append(f"positions(%qp, %kp : {ty(Sq, e='i64')}, {ty(Sk, e='i64')})")
    parts.append(attrs)
    if sinks:
        args.append(f"%s: {ty(Hq)}")
        parts.append(f"sinks(%s : {ty(Hq)})")
    return (f"func.func @kernel({', '.join(args)}) -> {qt} {{\n"
            f"  %r = rope.attention %q, %k, %v {' '.join(parts)} : {qt}, {kt}, {kt}\n"
            f"  return %r : {qt}\n}}\n")


def run(name, *, B=1, Hq=2, Hkv=1, Sq, Sk, D=16, e="f32", attrs="", qp=None, kp=None,
        sinks=None, mask=None, ref_kwargs, scale_qk=1.0, changes=None):
    q = T.quantize(g.standard_normal((B, Hq, Sq, D)) * scale_qk, e)
    k = T.quantize(g.standard_normal((B, Hkv, Sk, D)) * scale_qk, e)
    v = T.quantize(g.standard_normal((B, Hkv, Sk, D)), e)
    with T.guard(name):
        text = module(B, Hq, Hkv, Sq, Sk, D, attrs=attrs, positions=qp is not None,
                      sinks=sinks is not None, mask=None if mask is None else mask.shape, e=e)
        lib = T.compile(text)
        args = [T.to_storage(a, e) for a in (q, k, v)]
        if mask is not None:
            args.append(mask)
        if qp is not None:
            args += [qp.astype(np.int64), kp.astype(np.int64)]
        if sinks is not None:
            args.append(sinks.astype(np.float32))
        out = T.from_storage(T.call(lib, "kernel", *args), e)
        kw = dict(ref_kwargs)
        if qp is not None:
            kw.update(q_positions=qp, k_positions=kp)
        if sinks is not None:
            kw["sinks"] = sinks
        if mask is not None:
            kw["mask"] = mask
        expected = ref.attention(q, k, v, **kw)
        atol = T.attention_atol(q, k, v, rotary=kw.get("rotary"), dtype=e)
        vmax = float(np.max(np.abs(v)))
        extra = 0.0
        if kw.get("softcap"):
            extra += kw["softcap"]
        if sinks is not None:
            extra += float(np.max(np.abs(sinks)))
        atol = atol + T.ulp(vmax, "f32") * extra
        T.check(out, expected, atol, name)
        for feature, value in (changes or {}).items():
            without = ref.attention(q, k, v, **{**kw, feature: value})
            assert np.abs(expected - without).max() > 1e-3, f"{name}: {feature} has no effect"
        return out


causal = {"causal": True}
# Windows smaller and larger than a tile (64 by default, 5 with tiny tiles,
# 3 with five splits; S = 48 is one default tile, and window 200 below is
# larger than one).
for W in (3, 7):
    run(f"window {W} prefill", Hq=2, Hkv=1, Sq=48, Sk=48, attrs=f"causal window = {W}",
        ref_kwargs={**causal, "window": W}, changes={"window": None})
# Default tiles (128 queries, 64 keys): key tiles that every query of the
# tile sees whole (run without the rule), the diagonal's, tiles cut by the
# window's edge, tiles skipped; then positions in no order, whose tiles'
# bounds decide which of those each tile is.
run("window 200 prefill", Hq=2, Sq=300, Sk=300, D=32, attrs="causal window = 200",
    ref_kwargs={**causal, "window": 200}, changes={"window": None})
run("causal shuffled positions", Hq=2, Sq=200, Sk=260, D=32, attrs="causal window = 150",
    qp=g.permutation(200) + 60, kp=g.permutation(260),
    ref_kwargs={**causal, "window": 150}, changes={"window": None})
spec = ref.RotarySpec(base=10000.0)
run("window rotary decode positions", Hq=2, Sq=2, Sk=30,
    attrs=f"rotary({spec.to_attr()}) causal window = 6",
    qp=np.array([40, 45]), kp=np.arange(30) * 2,
    ref_kwargs={**causal, "window": 6, "rotary": spec}, changes={"window": None})

run("softcap sinks decode", Hq=3, Hkv=1, Sq=1, Sk=33, attrs="softcap = 2.5", scale_qk=3.0,
    sinks=np.array([3.0, -1.0, 0.5]), ref_kwargs={"softcap": 2.5},
    changes={"softcap": None, "sinks": None})
masked = np.ones((1, 1, 12, 12), dtype=bool)
masked[..., 2, :] = False  # row 2 sees no key
out = run("softcap sinks causal gqa masked row", Hq=4, Hkv=2, Sq=12, Sk=12,
          attrs="causal softcap = 1.5", scale_qk=3.0, sinks=g.standard_normal(4) * 2.0,
          mask=masked, ref_kwargs={**causal, "softcap": 1.5},
          changes={"softcap": None, "sinks": None})
with T.guard("sinks fully masked row is zero"):
    assert out is not None and not np.any(out[:, :, 2, :]), "the masked row is not exactly 0"
    print("PASS sinks fully masked row is zero")

spec = ref.RotarySpec(base=500000.0)
run("window softcap sinks rotary f16", Hq=2, Hkv=1, Sq=16, Sk=16, e="f16",
    attrs=f"rotary({spec.to_attr()}) causal window = 4 softcap = 3.0",
    sinks=g.standard_normal(2), scale_qk=2.0,
    ref_kwargs={**causal, "window": 4, "softcap": 3.0, "rotary": spec},
    changes={"window": None, "softcap": None, "sinks": None})
T.finish()

# CHECK: PASS window 3 prefill:
# CHECK: PASS window 7 prefill:
# CHECK: PASS window 200 prefill:
# CHECK: PASS causal shuffled positions:
# CHECK: PASS window rotary decode positions:
# CHECK: PASS softcap sinks decode:
# CHECK: PASS softcap sinks causal gqa masked row:
# CHECK: PASS sinks fully masked row is zero
# CHECK: PASS window softcap sinks rotary f16:
# CHECK-NOT: FAIL
