# RUN: %python %s | FileCheck %s
"""rope.rotate_with_tables compiled for the CPU against the f64 reference
`reference.rotate_with_tables` (written from Hugging Face's
``q·cos + rotate_half(q)·sin``), for each table form a frontend emits:
[1, 1, S, D] (HF's cat(freqs, freqs) unsqueezed), [S, r/2] with partial
rotary at an offset, [B, S, r] with interleaved pairs along seq_dim 1, and
arbitrary (non-rotation) f16 tables, which the op applies element for element.

Tolerances: each output element is x_j·c_j ± x_j'·s_j in f32 (three
roundings): 2 ulps of f32 at |x_j·c_j| + |x_j'·s_j| (`table_atol`); f16
storage adds one f16 ulp of the result. Against the spec-based reference (the
tables being f32 roundings of m·cos, m·sin) one more f32 ulp at the pair
norm: 3 ulps (rope_testing.rotation_atol).
"""

import numpy as np

from rope_mlir import reference as ref
import rope_testing as T


def module(x_type, t_type, attrs=""):
    return (f"func.func @kernel(%x: {x_type}, %c: {t_type}, %s: {t_type}) -> {x_type} {{\n"
            f"  %r = rope.rotate_with_tables %x, %c, %s{attrs} : {x_type}, {t_type}\n"
            f"  return %r : {x_type}\n}}\n")


table_atol = T.table_rotation_atol


rng = T.rng(11)

# HF Llama: [1, 1, S, D] tables with duplicated halves, dynamic sequence.
D, S = 16, 7
spec = ref.RotarySpec(base=10000.0)
p = np.array([0, 1, 2, 3, 40, 500, 6000], np.int64)
c, s = ref.cos_sin_table(p, spec, D)
cos = np.concatenate([c, c], -1).astype(np.float32)[None, None]
sin = np.concatenate([s, s], -1).astype(np.float32)[None, None]
x = T.quantize(rng.standard_normal((1, 4, S, D)), "f32")
with T.guard("hf half [1,1,S,D]"):
    lib = T.compile(module(f"tensor<1x4x?x{D}xf32>", f"tensor<1x1x?x{D}xf32>"))
    out = T.call(lib, "kernel", T.to_storage(x, "f32"), cos, sin)
    T.check(out, ref.rotate_with_tables(x, cos, sin), table_atol(x, cos, sin), "hf half [1,1,S,D] vs tables")
    T.check_rotation_stored(out, ref.rotate(x, p, spec), x, spec, "f32", 3, "hf half [1,1,S,D] vs spec")

# Pair tables [S, r/2], partial rotary dims 8 at offset 4 of a 20-wide head.
D = 20
spec = ref.RotarySpec(base=100.0, rotary_dims=8, offset=4)
c, s = (t.astype(np.float32) for t in ref.cos_sin_table(p, spec, D))
x = T.quantize(rng.standard_normal((2, 3, S, D)), "f32")
kw = dict(rotary_dims=8, offset=4)
with T.guard("pair tables [S,r/2] partial"):
    lib = T.compile(module(f"tensor<2x3x{S}x{D}xf32>", f"tensor<{S}x4xf32>", " dims = 8 offset = 4"))
    out = T.call(lib, "kernel", T.to_storage(x, "f32"), c, s)
    T.check(out, ref.rotate_with_tables(x, c, s, **kw), table_atol(x, c, s, **kw), "pair tables [S,r/2] partial")
    T.check(out[..., :4], x[..., :4], 0.0, "pair tables pass-through low")
    T.check(out[..., 12:], x[..., 12:], 0.0, "pair tables pass-through high")

# GPT-J: interleaved [B, S, r] tables (repeat_interleave), x as [B, S, H, D].
spec = ref.RotarySpec(base=10000.0, rotary_dims=8, offset=6, layout="interleaved")
pb = np.array([[0, 1, 2, 3, 4, 5, 6], [9, 10, 11, 12, 13, 14, 15]], np.int64)
c, s = ref.cos_sin_table(pb, spec, D)
cos = np.repeat(c, 2, -1).astype(np.float32)
sin = np.repeat(s, 2, -1).astype(np.float32)
x = T.quantize(rng.standard_normal((2, S, 3, D)), "f32")
kw = dict(layout="interleaved", rotary_dims=8, offset=6, seq_dim=1)
with T.guard("interleaved [B,S,r] seq_dim 1"):
    lib = T.compile(module(f"tensor<2x?x3x{D}xf32>", "tensor<2x?x8xf32>",
                                         " layout<interleaved> dims = 8 offset = 6 seq_dim = 1"))
    out = T.call(lib, "kernel", T.to_storage(x, "f32"), cos, sin)
    T.check(out, ref.rotate_with_tables(x, cos, sin, **kw), table_atol(x, cos, sin, **kw),
            "interleaved [B,S,r] seq_dim 1 vs tables")
    T.check_rotation_stored(out, ref.rotate(x, pb, spec, seq_dim=1), x, spec, "f32", 3,
                            "interleaved [B,S,r] seq_dim 1 vs spec")

# Arbitrary f16 tables (not a rotation: halves differ), f16 data.
D = 12
x = T.quantize(rng.standard_normal((2, 2, S, D)), "f16")
cos = T.quantize(rng.standard_normal((1, 2, S, D)), "f16")
sin = T.quantize(rng.standard_normal((1, 2, S, D)), "f16")
with T.guard("arbitrary f16 tables"):
    lib = T.compile(module(f"tensor<2x2x{S}x{D}xf16>", f"tensor<1x2x{S}x{D}xf16>"))
    out = T.call(lib, "kernel", T.to_storage(x, "f16"), T.to_storage(cos, "f16"), T.to_storage(sin, "f16"))
    T.check_stored(out, ref.rotate_with_tables(x, cos, sin), table_atol(x, cos, sin, "f16"), "f16",
                   "arbitrary f16 tables")
T.finish()

# CHECK: PASS hf half [1,1,S,D] vs tables
# CHECK: PASS hf half [1,1,S,D] vs spec
# CHECK: PASS pair tables [S,r/2] partial
# CHECK: PASS pair tables pass-through low
# CHECK: PASS pair tables pass-through high
# CHECK: PASS interleaved [B,S,r] seq_dim 1 vs tables
# CHECK: PASS interleaved [B,S,r] seq_dim 1 vs spec
# CHECK: PASS arbitrary f16 tables
