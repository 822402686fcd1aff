"""bf16 matmul baseline for benchmarks/run.py, run in the frontend venv:
`torch.matmul` on bf16 tensors (oneDNN: AMX tiles or AVX-512 BF16 where
the CPU has them) against our compiled bf16 `linalg.matmul` (f32
accumulation, the result rounded to bf16 once, as PyTorch's) and our f32
`linalg.matmul` of the same size (the path bf16 must beat where the host
has a bf16 engine), calls alternating so that all share the machine's
drift.

    python matmul_bf16.py THREADS SIZES_JSON
prints {"version": ..., "engine": "amx" | "avx512bf16" | "fma",
"times": {"N": {"torch": s, "ours": s, "ours_f32": s, "rel_err": e}}} as
JSON (best seconds per call).
"""

import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from rope_mlir import compiler


def module(n, dtype="bf16"):
    """@matmul of two n × n `dtype` operands into f32; a bf16 product's
    result rounded to bf16 once by its consumer, as PyTorch's."""
    a, f = f"tensor<{n}x{n}x{dtype}>", f"tensor<{n}x{n}xf32>"
    o, result = (f, "%p") if dtype == "f32" else (f"tensor<{n}x{n}x{dtype}>", "%r")
    rounding = "" if dtype == "f32" else f"""
  %eo = tensor.empty() : {o}
  %r = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}} ins(%p : {f}) outs(%eo : {o}) {{
  ^bb0(%x: f32, %y: {dtype}):
    %t = arith.truncf %x : f32 to {dtype}
    linalg.yield %t : {dtype}
  }} -> {o}"""
    return f"""
func.func @matmul(%a: {a}, %b: {a}) -> {o} {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : {f}
  %c = linalg.fill ins(%zero : f32) outs(%e : {f}) -> {f}
  %p = linalg.matmul ins(%a, %b : {a}, {a}) outs(%c : {f}) -> {f}{rounding}
  return {result} : {o}
}}"""


def best_alternating(calls, rounds=5):
    """The best seconds of each call, timed in turns after a warm-up call."""
    best = [float("inf")] * len(calls)
    for r in range(rounds):
        order = range(len(calls)) if r % 2 == 0 else reversed(range(len(calls)))
        for i in order:
            calls[i]()
            time.sleep(0.25)  # OpenMP's spinning threads go to sleep
            calls[i]()
            t = time.perf_counter()
            calls[i]()
            best[i] = min(best[i], time.perf_counter() - t)
    return best


def engine():
    """The engine the host's bf16 products run on: the runtime check the
    functions of a library built for the host call (none: FMAs)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "engine.so"
        compiler.compile(module(64), "cpu", output=path)
        data = path.read_bytes()
    for name, check in (("amx", b"ropeRequireCpuTiles"), ("avx512bf16", b"ropeRequireCpuDotProducts")):
        if check in data:
            return name
    return "fma"


def main():
    threads, sizes = int(sys.argv[1]), json.loads(sys.argv[2])
    torch.set_num_threads(threads)
    times = {}
    for n in sizes:
        g = torch.Generator().manual_seed(n)
        a = torch.randn(n, n, generator=g).to(torch.bfloat16)
        b = torch.randn(n, n, generator=g).to(torch.bfloat16)
        lib = compiler.compile(module(n), "cpu")
        lib_f32 = compiler.compile(module(n, "f32"), "cpu")
        a32, b32 = a.float().numpy(), b.float().numpy()
        a_bits, b_bits = a.view(torch.int16).numpy().view(np.uint16), b.view(torch.int16).numpy().view(np.uint16)
        ours = lib.call("matmul", a_bits, b_bits)
        got = torch.from_numpy(np.ascontiguousarray(ours).view(np.int16)).view(torch.bfloat16).float()
        want = a.double() @ b.double()
        err = float((got.double() - want).abs().max() / want.abs().max())
        t_torch, t_ours, t_f32 = best_alternating([lambda: torch.matmul(a, b),
                                                   lambda: lib.call("matmul", a_bits, b_bits),
                                                   lambda: lib_f32.call("matmul", a32, b32)])
        times[str(n)] = {"torch": t_torch, "ours": t_ours, "ours_f32": t_f32, "rel_err": err}
    print(json.dumps({"version": torch.__version__, "engine": engine(), "times": times}))


if __name__ == "__main__":
    main()
