# RUN: %python %s | FileCheck %s
"""Split-K ("flash-decoding"): the keys of rope.attention split into N ranges
whose partial online-softmax states (accumulator, max, sum) are computed in
parallel and merged exactly (PartialReductionOpInterface of
rope.online_attention), through `--rope-lower-to-cpu=split-keys=N`, for
N = 1..8 and key counts that do not divide evenly (the last split shorter,
down to a single key; more splits than keys gives one split per key), in decode (Sq = 1, 2) and prefill shapes, with causal masking,
explicit positions, RoPE inside, sinks (the sink sits in the initial state,
merged once) and a sliding window; key tiles of 3 inside each split.

Tolerance: rope_testing.attention_atol (with |sink| added to the logit bound);
merging rescales each partial state by exp(m_s − m) once, one more rounding
of each term.
"""

import numpy as np

from rope_mlir import reference as ref
import rope_testing as T

g = T.rng(53)


def ty(*shape, e="f32"):
    return "tensor<" + "x".join(map(str, shape)) + f"x{e}>"


def case(name, *, Hq, Hkv, Sq, Sk, D=16, splits, attrs="", rotary=None, sinks=False,
         window=None, positions=None):
    B = 2
    q = T.quantize(g.standard_normal((B, Hq, Sq, D)), "f32")
    k = T.quantize(g.standard_normal((B, Hkv, Sk, D)), "f32")
    v = T.quantize(g.standard_normal((B, Hkv, Sk, D)), "f32")
    qt, kt = ty(B, Hq, Sq, D), ty(B, Hkv, Sk, D)
    args, parts = [f"%q: {qt}", f"%k: {kt}", f"%v: {kt}"], []
    if positions is not None:
        qp, kp = positions
        args += [f"%qp: {ty(*qp.shape, e='i64')}", f"%kp: {ty(*kp.shape, e='i64')}"]
        parts.append(f"positions(%qp, %kp : {ty(*qp.shape, e='i64')}, {ty(*kp.shape, e='i64')})")
    parts.append(attrs)
    if sinks:
        args.append(f"%s: {ty(Hq)}")
        parts.append(f"sinks(%s : {ty(Hq)})")
    text = (f"func.func @kernel({', '.join(args)}) -> {qt} {{\n"
            f"  %r = rope.attention %q, %k, %v {' '.join(parts)} : {qt}, {kt}, {kt}\n"
            f"  return %r : {qt}\n}}\n")
    with T.guard(name):
        lib = T.compile(
            text, pipeline=f"--rope-lower-to-cpu=split-keys={splits} key-tile=3")
        call_args = [q.astype(np.float32), k.astype(np.float32), v.astype(np.float32)]
        kw = {"causal": "causal" in attrs, "rotary": rotary, "window": window}
        if positions is not None:
            call_args += [positions[0].astype(np.int64), positions[1].astype(np.int64)]
            kw.update(q_positions=positions[0], k_positions=positions[1])
        extra = 0.0
        if sinks:
            s = g.standard_normal(Hq) * 2.0
            call_args.append(s.astype(np.float32))
            kw["sinks"] = s
            extra = float(np.max(np.abs(s)))
        out = T.call(lib, "kernel", *call_args)
        expected = ref.attention(q, k, v, **kw)
        atol = T.attention_atol(q, k, v, rotary=rotary) + T.ulp(float(np.max(np.abs(v))), "f32") * extra
        T.check(out, expected, atol, name)


for splits in range(1, 9):
    case(f"decode splits={splits} Sk=37", Hq=4, Hkv=1, Sq=1, Sk=37, splits=splits, attrs="causal")
for Sk in (1, 2, 5, 11):
    case(f"decode splits=8 Sk={Sk}", Hq=2, Hkv=2, Sq=1, Sk=Sk, splits=8, attrs="causal")
spec = ref.RotarySpec(base=500000.0)
case("decode rotary sinks splits=3", Hq=8, Hkv=2, Sq=2, Sk=50, splits=3,
     attrs=f"rotary({spec.to_attr()}) causal", rotary=spec, sinks=True)
case("decode positions window splits=4", Hq=2, Hkv=1, Sq=2, Sk=29, splits=4,
     attrs="causal window = 9", window=9,
     positions=(np.array([[60, 61], [30, 33]]), np.stack([np.arange(29) * 2, np.arange(29)])))
case("prefill splits=5", Hq=4, Hkv=2, Sq=13, Sk=13, splits=5, attrs="causal")
T.finish()

# CHECK: PASS decode splits=1 Sk=37:
# CHECK: PASS decode splits=2 Sk=37:
# CHECK: PASS decode splits=3 Sk=37:
# CHECK: PASS decode splits=4 Sk=37:
# CHECK: PASS decode splits=5 Sk=37:
# CHECK: PASS decode splits=6 Sk=37:
# CHECK: PASS decode splits=7 Sk=37:
# CHECK: PASS decode splits=8 Sk=37:
# CHECK: PASS decode splits=8 Sk=1:
# CHECK: PASS decode splits=8 Sk=2:
# CHECK: PASS decode splits=8 Sk=5:
# CHECK: PASS decode splits=8 Sk=11:
# CHECK: PASS decode rotary sinks splits=3:
# CHECK: PASS decode positions window splits=4:
# CHECK: PASS prefill splits=5:
