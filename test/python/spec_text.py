# RUN: %python %s | FileCheck %s
"""RotarySpec.to_attr / RotarySpec.from_attr (rope_mlir.spec_text) against
the dialect itself: for random specs of every scaling kind, the printed text
parses in rope-opt, rope-opt's own printing of it parses back to the same
RotarySpec, and so does the text as written; malformed text is a ValueError
that says where.
"""

import subprocess

import numpy as np

from rope_mlir import testing
from rope_mlir.reference import RotarySpec, Scaling

g = np.random.default_rng(7)


def nice(lo, hi):
    return float(np.round(g.uniform(lo, hi), 3))


def random_spec(h):
    kind = str(g.choice(["default", "linear", "dynamic", "yarn", "llama3", "longrope", "freq_factors"]))
    orig = int(g.choice([2048, 4096, 8192]))
    sc = {
        "default": Scaling(),
        "linear": Scaling("linear", factor=nice(1, 8)),
        "dynamic": Scaling("dynamic", factor=nice(1, 8), original_max_position_embeddings=orig),
        "yarn": Scaling("yarn", factor=nice(1, 40), original_max_position_embeddings=orig,
                        beta_fast=nice(8, 64), beta_slow=nice(0.5, 2), truncate=bool(g.random() < 0.5),
                        mscale=nice(0.5, 2) if g.random() < 0.5 else None),
        "llama3": Scaling("llama3", factor=nice(2, 16), low_freq_factor=nice(1, 2),
                          high_freq_factor=nice(3, 8), original_max_position_embeddings=orig),
        "longrope": Scaling("longrope", short_factor=tuple(nice(1, 2) for _ in range(h)),
                            long_factor=tuple(nice(1, 40) for _ in range(h)), factor=nice(1, 32),
                            original_max_position_embeddings=orig),
        "freq_factors": Scaling("freq_factors", freq_factors=tuple(nice(1, 8) for _ in range(h))),
    }[kind]
    return RotarySpec(base=float(g.choice([10000.0, 500000.0, nice(100, 1e6)])),
                      rotary_dims=2 * h if g.random() < 0.5 else None,
                      offset=int(g.integers(0, 3)) * 2 if g.random() < 0.3 else 0,
                      layout=str(g.choice(["half", "interleaved"])), scaling=sc,
                      attention_factor=nice(0.5, 2) if g.random() < 0.2 else None,
                      inverse=bool(g.random() < 0.2))


def printed_by_rope_opt(attrs):
    """rope-opt's own printing of each attribute (one op per spec)."""
    lines = [f'  "test.use"() {{spec{i} = {a}}} : () -> ()' for i, a in enumerate(attrs)]
    text = "func.func @f() {\n" + "\n".join(lines) + "\n  return\n}\n"
    out = subprocess.run([str(testing.rope_opt()), "--allow-unregistered-dialect"], input=text,
                         capture_output=True, text=True, check=True, env=testing.tool_env()).stdout
    found = {}
    for line in out.splitlines():
        if "test.use" in line:
            body = line.split("{", 1)[1].rsplit("}", 1)[0]
            key, attr = body.split(" = ", 1)
            found[int(key[len("spec"):])] = attr
    return [found[i] for i in range(len(attrs))]


specs = []
for _ in range(200):
    h = int(g.choice([2, 4, 8, 16]))
    spec = random_spec(h)
    if spec.offset and spec.rotary_dims is None:
        spec = RotarySpec(**{**spec.__dict__, "rotary_dims": 2 * h})
    specs.append(spec)
texts = [s.to_attr() for s in specs]
assert all(RotarySpec.from_attr(t) == s for t, s in zip(texts, specs)), "own text"
reprinted = printed_by_rope_opt(texts)
bad = [(s, r) for s, r in zip(specs, reprinted) if RotarySpec.from_attr(r) != s]
assert not bad, bad[:3]
kinds = sorted({s.scaling.kind for s in specs})
print(f"ROUNDTRIP {len(specs)} specs through rope-opt's printer: {', '.join(kinds)}")
# CHECK: ROUNDTRIP 200 specs through rope-opt's printer: default, dynamic, freq_factors, linear, llama3, longrope, yarn

# A head dim drops `dims` when they cover the whole head, and checks the range.
print("HEAD", RotarySpec(rotary_dims=8).to_attr(8), RotarySpec(rotary_dims=4, offset=2).to_attr(8))
# CHECK: HEAD #rope.spec<> #rope.spec<dims = 4, offset = 2>
print("PARSE", RotarySpec.from_attr("#rope.spec<dims = 0, scaling = #rope.linear<factor = 2.000000e+00>>"))
# CHECK: PARSE RotarySpec(base=10000.0, rotary_dims=None, offset=0, layout='half', scaling=Scaling(kind='linear', factor=2.0

for text in ["#rope.spec<base = >", "#rope.spec<bse = 1.0>", "#rope.spec<layout = diagonal>",
             "#rope.spec<scaling = #rope.linear<factr = 2.0>>", "#rope.table<>", "#rope.spec<> x"]:
    try:
        RotarySpec.from_attr(text)
        print("ACCEPTED", text)
    except ValueError as e:
        print("ERROR", e)
try:
    RotarySpec(rotary_dims=6).to_attr(4)
except ValueError as e:
    print("ERROR", e)
# CHECK: ERROR expected a value at '>' in '#rope.spec<base = >'
# CHECK: ERROR #rope.spec has no parameter 'bse'
# CHECK: ERROR layout must be half or interleaved, got 'diagonal'
# CHECK: ERROR #rope.linear has no parameter 'factr'
# CHECK: ERROR expected #rope.spec, got #rope.table
# CHECK: ERROR unexpected text after the spec at 'x'
# CHECK: ERROR rotary dims 6 at offset 0 do not fit head dim 4
# CHECK-NOT: ACCEPTED
