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

import torch
import torch.nn.functional as F

from hf_layer import arguments, best_seconds, hf_rope, inputs


def main():
    threads, inv_freq, configs = arguments()
    torch.set_num_threads(threads)
    inv = torch.tensor(inv_freq, dtype=torch.float32)
    times = {}
    for hq, hkv, s, q, k, v in inputs(configs, 2 * len(inv_freq)):

        def layer():
            with torch.no_grad():
                qr, kr = hf_rope(q, k, inv)
                return F.scaled_dot_product_attention(qr, kr, v, is_causal=True, enable_gqa=hq != hkv)

        layer()  # warm-up
        times[f"{hq}/{hkv}/{s}"] = best_seconds(layer, s)
    print(json.dumps({"version": torch.__version__, "times": times}))


if __name__ == "__main__":
    main()
