# RUN: %python %s | FileCheck %s
"""RotarySpec.to_attr / RotarySpec.from_attr (rope_mlir.spec), which print and
parse `#rope.spec` with the dialect itself through the C API (ropeSpecPrint,
ropeSpecParse):

* random specs of every scaling kind round-trip: from_attr(to_attr(s)) == s;
  rope-opt prints the same text back, and reads it as the same spec;
* text as a person writes it (defaults spelled out, `dims = 0`, short
  floats) reads as the spec it means; a head dim drops full-head `dims`;
* numpy numbers are plain numbers in a spec;
* an invalid spec (in Python or as text, caught in Python or by the dialect's
  parser or verifier) is a SpecError, a ValueError, that names the field or
  quotes the dialect's diagnostic.
"""

import subprocess

import numpy as np

import rope_mlir
from rope_mlir.spec import RotarySpec, Scaling
import rope_testing as T

g = np.random.default_rng(7)


def nice(lo, hi):
    return float(np.round(g.uniform(lo, hi), 3))


def random_scaling(h):
    kind = str(g.choice(["default", "linear", "dynamic", "yarn", "llama3", "longrope", "freq_factors"]))
    orig = int(g.choice([2048, 4096, 8192]))
    return {
        "default": lambda: Scaling(),
        "linear": lambda: Scaling("linear", factor=nice(1, 8)),
        "dynamic": lambda: Scaling("dynamic", factor=nice(1, 8), original_max_position_embeddings=orig),
        "yarn": lambda: Scaling("yarn", factor=nice(1, 40), original_max_position_embeddings=orig,
                                beta_fast=nice(8, 64), beta_slow=nice(0.5, 2),
                                truncate=bool(g.random() < 0.5),
                                mscale=nice(0.5, 2) if g.random() < 0.5 else None,
                                mscale_all_dim=nice(0.5, 2) if g.random() < 0.3 else None),
        "llama3": lambda: Scaling("llama3", factor=nice(2, 16), low_freq_factor=nice(1, 2),
                                  high_freq_factor=nice(3, 8), original_max_position_embeddings=orig),
        "longrope": lambda: Scaling("longrope", short_factor=tuple(nice(1, 2) for _ in range(h)),
                                    long_factor=tuple(nice(1, 40) for _ in range(h)),
                                    factor=nice(1, 32), original_max_position_embeddings=orig),
        "freq_factors": lambda: Scaling("freq_factors", freq_factors=tuple(nice(1, 8) for _ in range(h))),
    }[kind]()


def random_spec():
    h = int(g.choice([2, 4, 8, 16]))
    offset = int(g.integers(1, 3)) * 2 if g.random() < 0.3 else 0
    return RotarySpec(base=float(g.choice([10000.0, 500000.0, nice(100, 1e6)])),
                      rotary_dims=2 * h if offset or g.random() < 0.5 else None, offset=offset,
                      layout=str(g.choice(["half", "interleaved"])), scaling=random_scaling(h),
                      attention_factor=nice(0.5, 2) if g.random() < 0.2 else None,
                      inverse=bool(g.random() < 0.2))


def printed_by_rope_opt(attrs):
    """rope-opt's own printing of each attribute (one op per spec)."""
    lines = [f'  "test.use"() {{spec{i} = {a}}} : () -> ()' for i, a in enumerate(attrs)]
    text = "func.func @f() {\n" + "\n".join(lines) + "\n  return\n}\n"
    out = subprocess.run([str(T.rope_opt()), "--allow-unregistered-dialect"], input=text,
                         capture_output=True, text=True, check=True, env=T.tool_env()).stdout
    found = {}
    for line in out.splitlines():
        if "test.use" in line:
            body = line.split("{", 1)[1].rsplit("}", 1)[0]
            key, attr = body.split(" = ", 1)
            found[int(key[len("spec"):])] = attr
    return [found[i] for i in range(len(attrs))]


specs = [random_spec() for _ in range(200)]
texts = [s.to_attr() for s in specs]
bad = [(s, t) for s, t in zip(specs, texts) if RotarySpec.from_attr(t) != s]
assert not bad, bad[:3]
reprinted = printed_by_rope_opt(texts)
bad = [(t, r) for t, r in zip(texts, reprinted) if t != r]
assert not bad, bad[:3]
kinds = sorted({s.scaling.kind for s in specs})
print(f"ROUNDTRIP {len(specs)} specs, the same text as rope-opt's: {', '.join(kinds)}")
# CHECK: ROUNDTRIP 200 specs, the same text as rope-opt's: default, dynamic, freq_factors, linear, llama3, longrope, yarn

# The dialect's printing: defaults omitted, floats as MLIR prints them.
print("TEXT", RotarySpec(base=500000.0, scaling=Scaling(
    "llama3", factor=8.0, original_max_position_embeddings=8192)).to_attr())
# CHECK: TEXT #rope.spec<base = 5.000000e+05, scaling = #rope.llama3<factor = 8.000000e+00, original_max_position_embeddings = 8192>>
print("DEFAULT", RotarySpec().to_attr(), RotarySpec(layout="half", base=10000).to_attr(64))
# CHECK: DEFAULT #rope.spec<> #rope.spec<>

# A head dim drops `dims` when they cover the whole head, and checks the range.
print("HEAD", RotarySpec(rotary_dims=8).to_attr(8), RotarySpec(rotary_dims=4, offset=2).to_attr(8),
      RotarySpec(offset=2).to_attr(8))
# CHECK: HEAD #rope.spec<> #rope.spec<dims = 4, offset = 2> #rope.spec<dims = 6, offset = 2>

# Text as written by hand.
written = {
    "#rope.spec<dims = 0, scaling = #rope.linear<factor = 2.0>>":
        RotarySpec(scaling=Scaling("linear", factor=2.0)),
    "#rope.spec<base = 10000.0, layout = half, inverse = false, attention_factor = 1.5>":
        RotarySpec(attention_factor=1.5),
    "#rope.spec<dims = 8, offset = 4, layout = interleaved, scaling = #rope.yarn<factor = 4.0, "
    "original_max_position_embeddings = 4096, truncate = false, mscale = 0.707>>":
        RotarySpec(rotary_dims=8, offset=4, layout="interleaved", scaling=Scaling(
            "yarn", factor=4.0, original_max_position_embeddings=4096, truncate=False, mscale=0.707)),
    "#rope.spec<scaling = #rope.freq_factors<factors = [1.0, 2.5]>>":
        RotarySpec(scaling=Scaling("freq_factors", freq_factors=(1.0, 2.5))),
}
for text, spec in written.items():
    assert RotarySpec.from_attr(text) == spec, (text, RotarySpec.from_attr(text))
    assert RotarySpec.from_attr(spec.to_attr()) == spec, spec
print("WRITTEN", len(written), "texts read as their specs")
# CHECK: WRITTEN 4 texts read as their specs

# numpy numbers (and integral floats where an integer is meant) are plain numbers.
plain = RotarySpec(base=500000.0, rotary_dims=8, offset=2, attention_factor=1.25, scaling=Scaling(
    "longrope", factor=4.0, original_max_position_embeddings=4096, short_factor=(1.0, 1.5, 2.0, 2.5),
    long_factor=(1.0, 2.0, 3.0, 4.0)))
numpyish = RotarySpec(base=np.float32(500000.0), rotary_dims=np.int64(8), offset=np.int32(2),
                      attention_factor=np.float64(1.25), inverse=np.bool_(False), scaling=Scaling(
                          "longrope", factor=np.float16(4.0), original_max_position_embeddings=4096.0,
                          short_factor=np.array([1.0, 1.5, 2.0, 2.5]),
                          long_factor=[np.float32(v) for v in (1.0, 2.0, 3.0, 4.0)]))
assert numpyish.to_attr() == plain.to_attr(), (numpyish.to_attr(), plain.to_attr())
print("NUMPY", RotarySpec.from_attr(numpyish.to_attr()) == plain)
# CHECK: NUMPY True

# Invalid specs: SpecError, a ValueError, whether Python or the dialect finds it.
invalid_specs = [
    RotarySpec(rotary_dims=6),                                    # checked against head dim 4
    RotarySpec(rotary_dims=5),
    RotarySpec(offset=2),
    RotarySpec(layout="diagonal"),
    RotarySpec(base=float("nan")),
    RotarySpec(scaling=Scaling("linear", factor="2")),
    RotarySpec(scaling=Scaling("dynamic", factor=2.0)),
    RotarySpec(scaling=Scaling("ntk", factor=2.0)),
    RotarySpec(scaling=Scaling("longrope", short_factor=(1.0,), original_max_position_embeddings=64)),
    RotarySpec(rotary_dims=4, scaling=Scaling("freq_factors", freq_factors=(1.0, 2.0, 3.0))),
    RotarySpec(scaling=Scaling("linear", factor=0.0)),
]
for i, spec in enumerate(invalid_specs):
    try:
        text = spec.to_attr(4 if i == 0 else None)
        print("ACCEPTED", spec, text)
    except rope_mlir.SpecError as e:
        assert isinstance(e, ValueError)
        print("SPEC ERROR", e)
# CHECK-NOT: ACCEPTED
# CHECK: SPEC ERROR rotary dims 6 at offset 0 do not fit head dim 4
# CHECK: SPEC ERROR rotary_dims must be a positive even number, got 5
# CHECK: SPEC ERROR offset: an offset needs rotary_dims (or a head_dim to take them from)
# CHECK: SPEC ERROR layout must be one of half, interleaved, got 'diagonal'
# CHECK: SPEC ERROR base must be finite, got nan
# CHECK: SPEC ERROR scaling.factor must be a real number, got '2'
# CHECK: SPEC ERROR dynamic scaling needs original_max_position_embeddings
# CHECK: SPEC ERROR scaling.kind: unknown scaling kind 'ntk'; expected one of default, linear, dynamic, yarn, llama3, longrope, freq_factors
# CHECK: SPEC ERROR longrope scaling needs long_factor
# CHECK: SPEC ERROR invalid rotary spec: expects 'factors' to have rotary_dims/2 = 2 entries, got 3
# CHECK: SPEC ERROR invalid rotary spec: expects 'factor' to be positive and finite, got 0.000000e+00

invalid_texts = ["#rope.spec<base = >", "#rope.spec<bse = 1.0>", "#rope.spec<layout = diagonal>",
                 "#rope.spec<scaling = #rope.linear<factr = 2.0>>", "#rope.table<>",
                 "#rope.spec<> x", "#rope.spec<dims = 3>", "", 42]
for text in invalid_texts:
    try:
        RotarySpec.from_attr(text)
        print("ACCEPTED", text)
    except rope_mlir.SpecError as e:
        assert isinstance(e, ValueError)
        print("TEXT ERROR", e)
# CHECK-NOT: ACCEPTED
# CHECK: TEXT ERROR invalid rotary spec '#rope.spec<base = >' at column 19: expected floating point literal
# CHECK: TEXT ERROR invalid rotary spec '#rope.spec<bse = 1.0>' at column 18: {{.*}}unknown struct parameter name: bse
# CHECK: TEXT ERROR invalid rotary spec '#rope.spec<layout = diagonal>' at column 21: {{.*}}one of: half, interleaved
# CHECK: TEXT ERROR invalid rotary spec '#rope.spec<scaling = #rope.linear<factr = 2.0>>' at column 43: {{.*}}unknown struct parameter name: factr
# CHECK: TEXT ERROR invalid rotary spec '#rope.table<>' at column 7: unknown attribute `table` in dialect `rope`
# CHECK: TEXT ERROR invalid rotary spec '#rope.spec<> x' at column 14: found trailing characters: 'x'
# CHECK: TEXT ERROR invalid rotary spec '#rope.spec<dims = 3>' at column 11: expects 'dims' to be even and non-negative
# CHECK: TEXT ERROR invalid rotary spec '': expected attribute value
# CHECK: TEXT ERROR expected `#rope.spec<...>` text (str), got int
