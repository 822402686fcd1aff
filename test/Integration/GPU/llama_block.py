# REQUIRES: cuda-device
# RUN: %python %s | FileCheck %s
"""The bundled Llama-3.1-8B attention block (examples/), in bf16, through the
GPU pipeline: its four projections (x·Wᵀ, hidden 4096) on the tensor-core
matmul and its RoPE + GQA 32/8 causal attention on the tensor-core attention
kernel, against the f64 reference of `make demo`.

Each case first checks the structure: the compiled module launches four
matmul kernels and one attention kernel on tensor cores.

Tolerance, first order, from the reference's own intermediates (inputs and
weights are bf16 values, so only roundings differ): the projections q, k, v
are rounded to bf16 (an ulp each at most), which moves each logit by at most
2·ulp_bf16(L) (L = logit_bound of the row) and the attention output o by
2·(2·ulp_bf16(L))·V + ulp_bf16(V) (V = max|v|); the attention kernel itself
adds tensor_core_attention_atol; then o·W_oᵀ carries that error times
Σ_j |W_o[n, j]|, plus the f32 accumulation (4096·u_f32 of Σ_j |o_j·W_o[n,j]|)
and the final rounding to bf16 (an ulp of the result). That is a worst case;
the result must also be 20 times closer to the reference than the block
without RoPE, and than zero, are.
"""

import re
import sys
from pathlib import Path

import numpy as np

import rope_testing as T

ROOT = Path(__file__).resolve().parents[3]
# `make demo`'s reference of the block (examples/demo.py).
sys.path.insert(0, str(ROOT / "examples"))
from demo import LLAMA31, reference_block  # noqa: E402

SEQS = (13, 70)


def bf16_block():
    text = (ROOT / "examples/llama31_8b_attention_block.mlir").read_text()
    text = text.replace("xf32>", "xbf16>").replace("0.0 : f32", "0.0 : bf16")
    return text.replace("ins(%zero : f32)", "ins(%zero : bf16)")


def tensor_core_kernels(source):
    """(matmul kernels, attention kernels) on tensor cores in the compiled
    module: the gpu.launch ops with 32 KB of shared tiles, and with a 32 KB query tile."""
    def ask():
        ir = T.rope_opt_run(["--rope-lower-to-nvvm=emulate=false format=isa",
                             "--mlir-print-ir-after=rope-host-buffers-to-gpu", "-o", "/dev/null"],
                            source).stderr
        return [len(re.findall(r"workgroup\(%\w+ : memref<2x64x64xbf16", ir)),
                len(re.findall(r"workgroup\(%\w+ : memref<128x128xbf16", ir))]
    return tuple(T.compiler_answer(repr(("tensor_core_kernels", source)), ask))


source = bf16_block()
with T.guard("llama block bf16 structure"):
    kernels = tensor_core_kernels(source)
    assert kernels == (4, 1), f"(matmul, attention) tensor-core kernels: {kernels}"
    print("PASS llama block bf16 structure: 4 matmuls and 1 attention on tensor cores")

g = T.rng(61)
for s in SEQS:
    with T.guard(f"llama block bf16 S={s}"):
        lib = T.gpu_compile(source)
        if lib is None:
            print(f"COMPILED llama block bf16 S={s}")
            continue
        hidden = T.quantize(g.standard_normal((1, s, 4096)), "bf16")
        positions = np.arange(s, dtype=np.int64) + 7
        w = [T.quantize(g.standard_normal(shape) / 64.0, "bf16")
             for shape in ((4096, 4096), (1024, 4096), (1024, 4096), (4096, 4096))]
        out = T.call(lib, "attention_block", T.to_storage(hidden, "bf16"), positions,
                     *[T.to_storage(x, "bf16") for x in w])
        expected = reference_block(hidden, positions, *w)
        x = hidden[0].astype(np.float64)
        heads = lambda t, h: t.reshape(1, s, h, 128).transpose(0, 2, 1, 3)
        q, k, v = (heads(x @ wi.T.astype(np.float64), h) for wi, h in zip(w, (32, 8, 8)))
        vmax = float(np.abs(v).max())
        lmax = float(T.logit_bound(q, k, rotary=LLAMA31).max())
        o_err = (4.0 * T.ulp(lmax, "bf16") * vmax + T.ulp(vmax, "bf16")
                 + float(np.max(T.tensor_core_attention_atol(q, k, v, rotary=LLAMA31,
                                                             dtype="bf16"))))
        wo = np.abs(w[3].astype(np.float64))
        atol = (o_err * wo.sum(axis=1) + 4096 * 2.0 ** -24 * vmax * wo.sum(axis=1)
                + T.ulp(np.abs(expected), "bf16"))
        got = T.from_storage(out, "bf16")
        T.check(got, expected, atol, f"llama block bf16 S={s}")
        # The bound above is a worst case (errors aligned with W_o's signs);
        # so that it cannot hide a wrong block, the result must also be 20
        # times closer to the reference than the block without RoPE is, and
        # than 0 is.
        plain = reference_block(hidden, positions, *w, rotary=None)
        err = np.abs(got - expected).max()
        assert 20 * err < np.abs(plain - expected).max(), "no closer than without RoPE"
        assert 20 * err < np.abs(expected).max(), "no closer than zero"
T.finish()

# CHECK: PASS llama block bf16 structure: 4 matmuls and 1 attention on tensor cores
# CHECK: {{PASS|COMPILED}} llama block bf16 S=13
# CHECK: {{PASS|COMPILED}} llama block bf16 S=70
# CHECK-NOT: FAIL
