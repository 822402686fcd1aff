"""What the frontend-venv baselines of the prefill benchmark share
(torch2_sdpa.py and iree_attention.py, both run by benchmarks/run.py): the
same inputs, RoPE applied the Hugging Face way, and the same timing rule.
Runs in the frontend venv (PyTorch 2)."""

import json
import sys
import time

import torch


def arguments():
    """THREADS, the spec's inverse frequencies and the [Hq, Hkv, S] configs
    from the command line, as run.py passes them."""
    return int(sys.argv[1]), json.loads(sys.argv[2]), json.loads(sys.argv[3])


def inputs(configs, head_dim):
    """(Hq, Hkv, S, q, k, v) per config: f32, B = 1, from one seeded
    generator, so both baselines see the same tensors."""
    gen = torch.Generator().manual_seed(1)
    for hq, hkv, s in configs:
        q = torch.randn(1, hq, s, head_dim, generator=gen)
        k = torch.randn(1, hkv, s, head_dim, generator=gen)
        v = torch.randn(1, hkv, s, head_dim, generator=gen)
        yield hq, hkv, s, q, k, v


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat([-x[..., h:], x[..., :h]], dim=-1)


def hf_rope(q, k, inv_freq):
    """q and k rotated as HF's Llama does it: [S, D] cos/sin tables of
    positions 0..S-1 (x·cos + rotate_half(x)·sin)."""
    pos = torch.arange(q.shape[2], dtype=torch.float32)
    freqs = torch.outer(pos, inv_freq)
    emb = torch.cat([freqs, freqs], dim=-1)
    cos, sin = emb.cos(), emb.sin()
    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


def best_seconds(call, s):
    """The best of a few timed calls (one at S >= 2048, where a call is
    long), after the caller's warm-up."""
    best = float("inf")
    for _ in range(1 if s >= 2048 else 3):
        t0 = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - t0)
    return best
