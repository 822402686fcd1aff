"""PyTorch 2 baseline for the prefill benchmark, run by benchmarks/run.py in
the frontend venv (PyTorch 2 from PyPI; Debian's python3-torch is 1.13, which
has no scaled_dot_product_attention).

What a PyTorch user writes for a Llama layer: RoPE applied the Hugging Face
way (x·cos + rotate_half(x)·sin with [S, D] tables of the llama3 spec's
frequencies), then `torch.nn.functional.scaled_dot_product_attention` with
`is_causal=True` and `enable_gqa=True` (its CPU path is a flash-attention
kernel). f32, B = 1, D = 128.

    python torch2_sdpa.py THREADS INV_FREQ_JSON CONFIGS_JSON
prints {"version": ..., "times": {"Hq/Hkv/S": best seconds}} as JSON.
"""

import json
import sys
import time

import torch
import torch.nn.functional as F


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat([-x[..., h:], x[..., :h]], dim=-1)


def main():
    threads, inv_freq, configs = int(sys.argv[1]), json.loads(sys.argv[2]), json.loads(sys.argv[3])
    torch.set_num_threads(threads)
    inv = torch.tensor(inv_freq, dtype=torch.float32)
    times = {}
    gen = torch.Generator().manual_seed(1)
    for hq, hkv, s in configs:
        d = 2 * len(inv_freq)
        q = torch.randn(1, hq, s, d, generator=gen)
        k = torch.randn(1, hkv, s, d, generator=gen)
        v = torch.randn(1, hkv, s, d, generator=gen)
        pos = torch.arange(s, dtype=torch.float32)

        def layer():
            with torch.no_grad():
                freqs = torch.outer(pos, inv)
                emb = torch.cat([freqs, freqs], dim=-1)
                cos, sin = emb.cos(), emb.sin()
                qr = q * cos + rotate_half(q) * sin
                kr = k * cos + rotate_half(k) * sin
                return F.scaled_dot_product_attention(qr, kr, v, is_causal=True, enable_gqa=hq != hkv)

        layer()  # warm-up
        reps = 1 if s >= 2048 else 3
        best = float("inf")
        for _ in range(reps):
            t0 = time.perf_counter()
            layer()
            best = min(best, time.perf_counter() - t0)
        times[f"{hq}/{hkv}/{s}"] = best
    print(json.dumps({"version": torch.__version__, "times": times}))


if __name__ == "__main__":
    main()
