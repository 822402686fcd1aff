# REQUIRES: cuda-device
# RUN: %python %s | FileCheck %s
"""rope.rotate on the GPU (--rope-lower-to-nvvm) against the f64 reference:
both pair layouts, every scaling kind, partial rotary with an offset,
per-batch positions, dynamic dims, and f16/bf16 storage (f32 math).

Tolerance: rope_testing.rotation_atol with 4 ulps of f32 at the pair norm (+1
storage ulp for f16/bf16). The CPU tests allow 2-3; on the GPU the cos/sin
come from libdevice's sinf/cosf, which are within 2 ulps (CUDA C
Programming Guide, mathematical functions), so the table error is up to
2·sqrt(2) ulps of the pair norm instead of about one, plus the three
roundings of a·cos − b·sin (fused or not). Each scaled case is also checked
to differ from the default rotation, so a dropped scaling cannot pass.

Without a GPU, utils/compile_gpu_tests.py compiles every case of this file
for sm_90 and sm_80 (test/Pipelines/gpu-tests-compile.test).
"""

import numpy as np

from rope_mlir import reference as ref
import rope_testing as T

FF = (1.0, 1.0, 1.5, 2.0, 4.0, 8.0, 16.0, 32.0)
SHORT = (1.0, 1.0, 1.25, 1.5, 2.0, 3.0, 5.0, 8.0)
LONG = (1.0, 2.0, 4.0, 8.0, 16.0, 24.0, 32.0, 48.0)

# name: (spec, x shape, x type, positions, storage); the kernel's
# #rope.spec is the spec's own text (RotarySpec.to_attr, through T.spec_attr).
P = np.array([0, 1, 2, 17, 1000, 8191, 8192, 40000, 1 << 17], np.int64)
CASES = {
    "default half f32": (ref.RotarySpec(), (2, 3, 9, 16), "tensor<2x3x9x16xf32>", P, "f32"),
    "interleaved partial offset": (
        ref.RotarySpec(base=100.0, rotary_dims=8, offset=4, layout="interleaved"),
        (2, 3, 9, 16), "tensor<2x3x9x16xf32>", P, "f32"),
    "linear": (ref.RotarySpec(scaling=ref.Scaling("linear", factor=4.0)),
               (1, 2, 9, 32), "tensor<1x2x?x32xf32>", P, "f32"),
    "llama3": (ref.RotarySpec(base=500000.0, scaling=ref.Scaling(
                   "llama3", factor=8.0, original_max_position_embeddings=8192)),
               (1, 2, 9, 64), "tensor<1x2x9x64xf32>", P, "f32"),
    "freq_factors": (ref.RotarySpec(scaling=ref.Scaling("freq_factors", freq_factors=FF)),
                     (2, 1, 9, 16), "tensor<2x1x9x16xf32>", P, "f32"),
    "yarn": (ref.RotarySpec(scaling=ref.Scaling("yarn", factor=4.0,
                                                original_max_position_embeddings=4096)),
             (1, 2, 9, 32), "tensor<1x2x9x32xf32>", P, "f32"),
    "dynamic ntk": (ref.RotarySpec(scaling=ref.Scaling("dynamic", factor=4.0,
                                                       original_max_position_embeddings=64)),
                    (1, 2, 9, 16), "tensor<1x2x?x16xf32>", P, "f32"),
    "longrope long": (ref.RotarySpec(layout="interleaved", scaling=ref.Scaling(
                          "longrope", short_factor=SHORT, long_factor=LONG, factor=8.0,
                          original_max_position_embeddings=64)),
                      (1, 2, 9, 16), "tensor<1x2x9x16xf32>", P, "f32"),
    "per-batch positions": (ref.RotarySpec(), (2, 2, 5, 16),
                            "tensor<2x2x5x16xf32>", np.array([[0, 1, 2, 3, 4], [7, 9, 11, 300, 4096]],
                                                             np.int64), "f32"),
    "f16 storage": (ref.RotarySpec(base=500000.0), (2, 4, 9, 64), "tensor<2x4x9x64xf16>", P, "f16"),
    "bf16 storage interleaved": (ref.RotarySpec(layout="interleaved"), (2, 4, 9, 64),
                                 "tensor<2x4x9x64xbf16>", P, "bf16"),
}

g = T.rng(21)
for name, (spec, shape, x_type, pos, dtype) in CASES.items():
    with T.guard(f"gpu rotate {name}"):
        pos_type = "tensor<" + "x".join(map(str, pos.shape)) + "xi64>"
        lib = T.gpu_compile(T.rotate_module(T.spec_attr(spec), x_type, pos_type))
        if lib is None:
            print(f"COMPILED gpu rotate {name}")
            continue
        x = T.quantize(g.standard_normal(shape), dtype)
        out = T.call(lib, "kernel", T.to_storage(x, dtype), pos)
        expected = ref.rotate(x, pos, spec)
        T.check_rotation_stored(out, expected, x, spec, dtype, 4, f"gpu rotate {name}")
        if spec.scaling.kind != "default":
            plain = ref.rotate(x, pos, ref.RotarySpec(base=spec.base, layout=spec.layout))
            assert np.abs(T.from_storage(out, dtype) - plain).max() > 1e-2, "scaling had no effect"

# rope.rotate_with_tables: HF's [1, 1, S, D] f32 tables, and GPT-J's
# interleaved [B, S, r] f16 tables of a partial rotation along seq_dim 1.
# Tolerance: rope_testing.table_rotation_atol (the tables are given: 2 f32 ulps,
# +1 storage ulp).
def tables_module(x_type, t_type, attrs=""):
    return (f"func.func @kernel(%x: {x_type}, %c: {t_type}, %s: {t_type}) -> {x_type} {{\n"
            f"  %r = rope.rotate_with_tables %x, %c, %s{attrs} : {x_type}, {t_type}\n"
            f"  return %r : {x_type}\n}}\n")


spec = ref.RotarySpec(base=500000.0)
c, s = ref.cos_sin_table(P, spec, 64)
TABLE_CASES = {
    "hf half [1,1,S,D]": (tables_module("tensor<1x4x?x64xf32>", "tensor<1x1x?x64xf32>"),
                          (1, 4, 9, 64), np.concatenate([c, c], -1)[None, None], "f32", {}),
    "interleaved [B,S,r] f16": (
        tables_module("tensor<2x9x3x20xf16>", "tensor<2x9x8xf16>",
                      " layout<interleaved> dims = 8 offset = 6 seq_dim = 1"),
        (2, 9, 3, 20), None, "f16",
        dict(layout="interleaved", rotary_dims=8, offset=6, seq_dim=1)),
}
for name, (text, shape, cos, dtype, kw) in TABLE_CASES.items():
    with T.guard(f"gpu rotate_with_tables {name}"):
        lib = T.gpu_compile(text)
        if lib is None:
            print(f"COMPILED gpu rotate_with_tables {name}")
            continue
        x = T.quantize(g.standard_normal(shape), dtype)
        if cos is None:
            pb = np.stack([np.arange(9), np.arange(100, 109)]).astype(np.int64)
            ct, st = ref.cos_sin_table(pb, ref.RotarySpec(rotary_dims=8, layout="interleaved"), 20)
            cos, sin = (T.quantize(np.repeat(t, 2, -1), dtype) for t in (ct, st))
        else:
            sin = np.concatenate([s, s], -1)[None, None]
            cos, sin = T.quantize(cos, dtype), T.quantize(sin, dtype)
        out = T.call(lib, "kernel", T.to_storage(x, dtype), T.to_storage(cos, dtype),
                     T.to_storage(sin, dtype))
        T.check_stored(out, ref.rotate_with_tables(x, cos, sin, **kw),
                       T.table_rotation_atol(x, cos, sin, dtype, **kw), dtype,
                       f"gpu rotate_with_tables {name}")
T.finish()

# CHECK: PASS gpu rotate default half f32
# CHECK: PASS gpu rotate interleaved partial offset
# CHECK: PASS gpu rotate linear
# CHECK: PASS gpu rotate llama3
# CHECK: PASS gpu rotate freq_factors
# CHECK: PASS gpu rotate yarn
# CHECK: PASS gpu rotate dynamic ntk
# CHECK: PASS gpu rotate longrope long
# CHECK: PASS gpu rotate per-batch positions
# CHECK: PASS gpu rotate f16 storage
# CHECK: PASS gpu rotate bf16 storage interleaved
# CHECK: PASS gpu rotate_with_tables hf half [1,1,S,D]
# CHECK: PASS gpu rotate_with_tables interleaved [B,S,r] f16
