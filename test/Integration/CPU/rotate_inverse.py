# RUN: %python %s | FileCheck %s
"""Inverse rotation (inverse = true, angle −φ), f32:
* round trip: rope.rotate then rope.rotate inverse, two ops in one function,
  must give the input back: half, interleaved, partial rotary with offset,
  llama3 frequencies (m = 1, so R_pᵀ R_p = I and the canonicaliser may fold
  the pair), and once with the positions passed as two arguments holding the
  same values, so nothing can fold and both rotations really run;
* with an attention factor (yarn, m != 1) the pair does not cancel: the
  result is m²·x, against the reference composition;
* inverse alone against the reference (half, interleaved partial, yarn).

Tolerances: round trip with m = 1: 4 ulps of f32 at the pair norm (two
rotations of <= 2 ulps each; rotation preserves the norm). Yarn round trip:
3 ulps at m·n for the first rotation, carried through the second (× m), plus
3 ulps at m²·n for the second: 7 ulps at m²·n. Inverse alone: 2 ulps (m = 1)
or 3 ulps (m != 1) at m·(pair norm), as every f32 rotation
(rope_testing.rotation_atol).
"""

import numpy as np

from rope_mlir import reference as ref
import rope_testing as T

TY = "tensor<2x3x?x16xf32>"
PT = "tensor<?xi64>"
# Each kernel's #rope.spec is the spec's own text (RotarySpec.to_attr).
ROUND_TRIP = {
    "half": ref.RotarySpec(),
    "interleaved": ref.RotarySpec(layout="interleaved"),
    "partial": ref.RotarySpec(rotary_dims=8, offset=4, layout="interleaved"),
    "llama3": ref.RotarySpec(base=500000.0, scaling=ref.Scaling(
        "llama3", factor=8.0, original_max_position_embeddings=1024)),
}
YARN_SPEC = ref.RotarySpec(scaling=ref.Scaling("yarn", factor=4.0, original_max_position_embeddings=256))
INVERSE = {  # name: (spec, f32 ulps)
    "inverse_half": (ref.RotarySpec(inverse=True), 2),
    "inverse_interleaved_partial": (
        ref.RotarySpec(rotary_dims=12, offset=2, layout="interleaved", inverse=True), 2),
    "inverse_yarn": (ref.RotarySpec(scaling=YARN_SPEC.scaling, inverse=True), 3),
}

def inverted(spec):
    return ref.RotarySpec(**{**spec.__dict__, "inverse": not spec.inverse})


def round_trip(spec, separate_positions=False):
    q = "%q" if separate_positions else "%p"
    extra = f", %q: {PT}" if separate_positions else ""
    return f"""
func.func @kernel(%x: {TY}, %p: {PT}{extra}) -> {TY} {{
  %y = rope.rotate %x, %p rotary({spec.to_attr()}) : {TY}, {PT}
  %z = rope.rotate %y, {q} rotary({inverted(spec).to_attr()}) : {TY}, {PT}
  return %z : {TY}
}}"""


x = T.quantize(T.rng(6).standard_normal((2, 3, 7, 16)), "f32")
p = np.array([0, 1, 9, 130, 1023, 5000, 70000], np.int64)
xs = T.to_storage(x, "f32")

for name, spec in ROUND_TRIP.items():
    with T.guard(f"round trip {name}"):
        lib = T.compile(round_trip(spec))
        T.check_rotation_stored(T.call(lib, "kernel", xs, p), x, x, spec, "f32", 4, f"round trip {name}")

with T.guard("round trip unfolded"):
    lib = T.compile(round_trip(ref.RotarySpec(), separate_positions=True))
    out = T.call(lib, "kernel", xs, p, p.copy())
    T.check_rotation_stored(out, x, x, ref.RotarySpec(), "f32", 4, "round trip unfolded")

with T.guard("round trip yarn"):
    lib = T.compile(round_trip(YARN_SPEC))
    out = T.call(lib, "kernel", xs, p)
    m = ref.attention_factor(YARN_SPEC)
    expected = ref.rotate(ref.rotate(x, p, YARN_SPEC), p, inverted(YARN_SPEC))
    assert np.allclose(expected, m * m * x, rtol=0, atol=1e-12)
    T.check(out, expected, 7 * T.ulp(m * m * T.pair_norms(x, YARN_SPEC), "f32"), "round trip yarn")

for name, (spec, ulps) in INVERSE.items():
    with T.guard(name):
        lib = T.compile(T.rotate_module(spec.to_attr(), TY, PT))
        out = T.call(lib, "kernel", xs, p)
        T.check_rotation_stored(out, ref.rotate(x, p, spec), x, spec, "f32", ulps, name)
        forward = ref.rotate(x, p, inverted(spec))
        assert np.abs(out - forward).max() > 0.1, f"{name}: same as the forward rotation"
T.finish()

# CHECK: PASS round trip half
# CHECK: PASS round trip interleaved
# CHECK: PASS round trip partial
# CHECK: PASS round trip llama3
# CHECK: PASS round trip unfolded
# CHECK: PASS round trip yarn
# CHECK: PASS inverse_half
# CHECK: PASS inverse_interleaved_partial
# CHECK: PASS inverse_yarn
