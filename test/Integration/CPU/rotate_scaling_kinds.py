# RUN: %python %s | FileCheck %s
"""rope.rotate with the length-independent scaling kinds (default, linear,
llama3, explicit freq_factors) against the f64 reference, f32 storage.

Tolerance: 2 ulps of f32 at the pair norm per element (rope_testing.rotation_atol;
m = 1): three f32 roundings in a·cos − b·sin plus the cos/sin table error.
Positions reach 2^17 so that llama3's interpolated low frequencies matter.
Each kind is also checked to differ clearly from the default rotation, so a
kernel that ignored the scaling could not pass.
"""

import numpy as np

from rope_mlir import reference as ref
import rope_testing as T

FF = (1.0, 1.0, 1.5, 2.0, 4.0, 8.0, 16.0, 32.0)
# Each kernel's #rope.spec is the spec's own text (RotarySpec.to_attr).
SPECS = {
    "default": ref.RotarySpec(),
    "linear": ref.RotarySpec(scaling=ref.Scaling("linear", factor=4.0)),
    "llama3": ref.RotarySpec(base=500000.0, scaling=ref.Scaling(
        "llama3", factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
        original_max_position_embeddings=8192)),
    "freq_factors": ref.RotarySpec(scaling=ref.Scaling("freq_factors", freq_factors=FF)),
}

x = T.quantize(T.rng(1).standard_normal((2, 3, 9, 16)), "f32")
p = np.array([0, 1, 2, 17, 1000, 8191, 8192, 40000, 1 << 17], np.int64)
default = ref.rotate(x, p, ref.RotarySpec())

for name, spec in SPECS.items():
    with T.guard(f"rotate {name}"):
        lib = T.compile(T.rotate_module(spec.to_attr(), "tensor<2x3x?x16xf32>", "tensor<?xi64>"))
        out = T.call(lib, "kernel", T.to_storage(x, "f32"), p)
        T.check_rotation_stored(out, ref.rotate(x, p, spec), x, spec, "f32", 2, f"rotate {name}")
        if name != "default":
            diff = float(np.abs(out - default).max())
            assert diff > 0.1, f"{name}: output too close to the default rotation ({diff})"
T.finish()

# CHECK: PASS rotate default
# CHECK: PASS rotate linear
# CHECK: PASS rotate llama3
# CHECK: PASS rotate freq_factors
