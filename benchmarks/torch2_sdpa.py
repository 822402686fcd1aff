"""PyTorch 2 baseline for the prefill benchmark, run by benchmarks/run.py in
the frontend venv (PyTorch 2 from PyPI; Debian's python3-torch is 1.13, which
has no scaled_dot_product_attention).

What a PyTorch user writes for a Llama layer: RoPE applied the Hugging Face
way (x·cos + rotate_half(x)·sin with [S, D] tables of the llama3 spec's
frequencies), then `torch.nn.functional.scaled_dot_product_attention` with
`is_causal=True` and `enable_gqa=True` (its CPU path is a flash-attention
kernel). f32, B = 1, D = 128.

    python torch2_sdpa.py THREADS INV_FREQ_JSON CONFIGS_JSON [OURS_JSON]
prints {"version": ..., "times": {"Hq/Hkv/S": best seconds}} as JSON.

OURS_JSON ({"Hq/Hkv/S": path of our attention module's MLIR}, with the
rope_mlir package on PYTHONPATH): our compiled attention is timed in this
process too, its calls alternating with SDPA's, and "ours" gives its best
seconds. A shared 2-core VM drifts by 10-15% within minutes; ours and
SDPA timed minutes apart carried that drift into their ratio, alternating
calls share it.
"""

import json
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from hf_layer import arguments, best_seconds, hf_rope, inputs


def alternate(calls, s, rounds=None):
    """The best seconds of each of `calls`, timed in turns (one call of
    each per round, the order reversed every other round), with a pause
    before each turn: OpenMP's idle threads (LLVM's spin for 200 ms after a
    parallel region) then wait for the next call asleep, not on a core the
    other contender needs. Each turn's timed call follows an untimed one,
    which wakes the contender's threads and brings its data back into the
    caches after the other's turn (a short call timed straight after the
    pause ran at half speed)."""
    rounds = rounds or (4 if s >= 2048 else 6)
    best = [float("inf")] * len(calls)
    for r in range(rounds):
        order = range(len(calls)) if r % 2 == 0 else reversed(range(len(calls)))
        for i in order:
            time.sleep(0.3)
            calls[i]()
            t0 = time.perf_counter()
            calls[i]()
            best[i] = min(best[i], time.perf_counter() - t0)
    return best


def ours_call(path, q, k, v):
    """Our attention of the module at `path` (`@attention(q, k, v,
    positions)`) on the same tensors, compiled now."""
    from rope_mlir import compiler
    module = compiler.compile(Path(path).read_text())
    qn, kn, vn = q.numpy(), k.numpy(), v.numpy()
    positions = np.arange(q.shape[2], dtype=np.int64)
    return lambda: module.call("attention", qn, kn, vn, positions)


def main():
    threads, inv_freq, configs = arguments()
    ours_modules = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
    torch.set_num_threads(threads)
    inv = torch.tensor(inv_freq, dtype=torch.float32)
    times, ours = {}, {}
    for hq, hkv, s, q, k, v in inputs(configs, 2 * len(inv_freq)):

        def layer():
            with torch.no_grad():
                qr, kr = hf_rope(q, k, inv)
                return F.scaled_dot_product_attention(qr, kr, v, is_causal=True, enable_gqa=hq != hkv)

        key = f"{hq}/{hkv}/{s}"
        layer()  # warm-up
        if key in ours_modules:
            call = ours_call(ours_modules[key], q, k, v)
            call()  # warm-up
            times[key], ours[key] = alternate([layer, call], s)
        else:
            times[key] = best_seconds(layer, s)
    print(json.dumps({"version": torch.__version__, "times": times, "ours": ours}))


if __name__ == "__main__":
    main()
