#!/usr/bin/env python3
"""`make demo`: compile the bundled Llama-3.1-8B attention block with rope-opt
and LLVM, run it on random hidden states and weights, and compare it with the
independent float64 reference (numpy)."""

import os
import sys
import time
from pathlib import Path

import numpy as np

import rope_mlir
from rope_mlir import reference as ref

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE / "llama31_8b_attention_block.mlir"
SEQ = int(os.environ.get("ROPE_DEMO_SEQ", "64"))
# f32 end to end: 4096-long dot products in the projections and f32 softmax.
# Inputs are O(1) and weights ~N(0, 1/4096), so outputs are O(1); 2e-4
# absolute is ~1000 f32 ulps at 1, far above the accumulated rounding we
# expect (~sqrt(4096)·ulp per projection) and far below any real bug.
TOLERANCE = 2e-4

LLAMA31 = ref.RotarySpec(
    base=500000.0,
    scaling=ref.Scaling("llama3", factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
                        original_max_position_embeddings=8192))


def reference_block(hidden, positions, wq, wk, wv, wo, rotary=LLAMA31):
    x = hidden[0].astype(np.float64)
    s = x.shape[0]
    q = (x @ wq.T.astype(np.float64)).reshape(1, s, 32, 128).transpose(0, 2, 1, 3)
    k = (x @ wk.T.astype(np.float64)).reshape(1, s, 8, 128).transpose(0, 2, 1, 3)
    v = (x @ wv.T.astype(np.float64)).reshape(1, s, 8, 128).transpose(0, 2, 1, 3)
    o = ref.attention(q, k, v, causal=True, rotary=rotary,
                      q_positions=positions, k_positions=positions)
    o = o.transpose(0, 2, 1, 3).reshape(s, 4096)
    return (o @ wo.T.astype(np.float64))[None]


def main():
    print(f"== {EXAMPLE.relative_to(HERE.parent)} (verified, canonicalized; rope ops) ==")
    text = rope_mlir.lower(EXAMPLE, "canonicalize")
    for line in text.splitlines():
        if "rope." in line or "#rope" in line:
            print("  " + line.strip())

    t0 = time.perf_counter()
    lib = rope_mlir.compile(EXAMPLE)
    t_compile = time.perf_counter() - t0
    print(f"== compiled in process (--rope-lower-to-cpu + LLVM JIT) in {t_compile:.2f} s ==")

    rng = np.random.default_rng(0)
    hidden = rng.standard_normal((1, SEQ, 4096)).astype(np.float32)
    w = lambda o, i: (rng.standard_normal((o, i)) / np.sqrt(i)).astype(np.float32)
    wq, wk, wv, wo = w(4096, 4096), w(1024, 4096), w(1024, 4096), w(4096, 4096)
    positions = np.arange(SEQ, dtype=np.int64) + 8000  # straddles the 8192 original context

    t0 = time.perf_counter()
    out = lib.call("attention_block", hidden, positions, wq, wk, wv, wo)
    t_run = time.perf_counter() - t0
    expected = reference_block(hidden, positions, wq, wk, wv, wo)
    err = float(np.max(np.abs(out - expected)))
    flops = 2 * SEQ * 4096 * (4096 + 1024 + 1024 + 4096) + 4 * 32 * SEQ * SEQ * 128
    print(f"== ran attention_block: S={SEQ}, positions {positions[0]}..{positions[-1]} ==")
    print(f"   time {t_run * 1e3:.1f} ms ({flops / t_run / 1e9:.2f} GFLOP/s)")
    print(f"   max |error| vs f64 reference: {err:.3e} (tolerance {TOLERANCE:.0e})")
    if not err <= TOLERANCE:
        print("FAIL: error above tolerance")
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
