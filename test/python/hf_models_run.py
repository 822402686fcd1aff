# RUN: %python %s | FileCheck %s
"""Each bundled Hugging Face config compiles and runs (f32 on the CPU) and
matches the float64 reference.

For every config: hf.attention_module(config) (dynamic sequence length, the
real head counts and head dims) is compiled once with --rope-lower-to-cpu and
called with random N(0, 1) Q, K, V at S = 8 for four position sets around the
original context length L (the scaling's original_max_position_embeddings, else
max_position_embeddings):
  below    L-8 .. L-1          contiguous, largest position + 1 = L
  across   L-4 .. L+3          contiguous, crosses L (longrope switches factors)
  spread<  8 sorted distinct positions in [0, L), the last L-1
  spread>  8 sorted distinct positions in [0, 1.5 L), the last > L
The spread sets put keys thousands of positions before their queries, so the
low frequencies that scaling changes turn by whole radians. The contiguous sets
check the phase at large absolute positions. Expected:
reference.attention(q, k, v, rotary=spec, causal=True, q_positions=pos,
k_positions=pos, scale=HF's scale).

Tolerance: |out - ref| <= 1e-5 * max|v|, elementwise. An output row is a convex
combination of value rows, so its error is a logit error times max|v|. The
logit errors come from f32 rotation (~1 ulp of the pair norm), an f32 dot
product of D <= 256 terms and an f32 exp. They are ~1e-6 relative, and the
measured error is <= 5e-7 * max|v|. 1e-5 (~80 f32 ulps at max|v|) leaves
headroom for summation order and nothing more. For every config with scaling,
the test also checks that dropping the scaling (plain RoPE with the same base
and dims) moves the output by more than 100x the tolerance on the spread sets
where the scaling is active (dynamic NTK is the identity up to L).
So the tolerance would catch a scaling that was ignored. For longrope
the same holds for the wrong factor list (short instead of long or the
reverse), which covers the switch at largest position + 1 = L.

Two synthetic variants also run, because no bundled config uses them:
dynamic NTK (CodeLlama with rope_scaling dynamic, factor 2) and linear
(GPT-NeoX-20B with linear, factor 4).
"""

import dataclasses
import json
from pathlib import Path

import numpy as np

from rope_mlir import hf
import rope_testing as T
from rope_mlir import reference as ref

CONFIGS = Path(__file__).resolve().parents[2] / "examples" / "configs"
S = 8
REL_TOL = 1e-5
SENSITIVITY = 100.0


def position_sets(L, rng):
    spread_lo = np.sort(rng.choice(L - 1, S - 1, replace=False))
    spread_hi = np.sort(rng.choice(np.arange(L + 1, L + L // 2), S - 1, replace=False))
    return {
        "below": np.arange(L - S, L),
        "across": np.arange(L - S // 2, L + S // 2),
        "spread<": np.append(spread_lo, L - 1),
        "spread>": np.append(np.sort(np.concatenate([spread_lo[: S // 2], spread_hi[: S // 2 - 1]])),
                             L + L // 2 - 1),
    }


def run(name, config, rng):
    spec = hf.spec_from_config(config)
    d, dv = hf.head_dims(config)
    cfg = config.get("text_config", config)
    hq = cfg.get("num_attention_heads") or cfg["n_head"]
    hkv = cfg.get("num_key_value_heads") or hq
    scale = hf.attention_scale(config)
    L = spec.scaling.original_max_position_embeddings or cfg.get("max_position_embeddings") or cfg["n_positions"]
    lib = T.compile(hf.attention_module(config))
    unscaled = dataclasses.replace(spec, scaling=ref.Scaling(), attention_factor=None)
    for label, pos in position_sets(int(L), rng).items():
        pos = pos.astype(np.int64)
        assert np.all(np.diff(pos) > 0), pos
        q = rng.standard_normal((1, hq, S, d)).astype(np.float32)
        k = rng.standard_normal((1, hkv, S, d)).astype(np.float32)
        v = rng.standard_normal((1, hkv, S, dv)).astype(np.float32)
        out = lib.call("attention_layer", q, k, v, pos)
        kw = dict(causal=True, q_positions=pos, k_positions=pos, scale=scale)
        expected = ref.attention(q, k, v, rotary=spec, **kw)
        atol = REL_TOL * float(np.abs(v).max())
        T.check(out, expected, atol, f"{name} {label} pos {pos[0]}..{pos[-1]}")
        # Dynamic NTK is the identity while the largest position + 1 <= L.
        active = spec.scaling.kind != "default" and not (
            spec.scaling.kind == "dynamic" and pos.max() + 1 <= L)
        if active and label.startswith("spread"):
            moved = float(np.abs(out - ref.attention(q, k, v, rotary=unscaled, **kw)).max())
            if not moved > SENSITIVITY * atol:
                raise AssertionError(f"FAIL {name} {label}: dropping the scaling moves the output by only "
                                     f"{moved:.3e} (tolerance {atol:.3e})")
            print(f"  without scaling the output moves by {moved / atol:.0f}x the tolerance")
        if spec.scaling.kind == "longrope" and label.startswith("spread"):
            # The other factor list (short <-> long) must be far off too, so an
            # off-by-one in the `max_position + 1 > L` switch would fail.
            sc = spec.scaling
            other = dataclasses.replace(sc, short_factor=sc.long_factor) if pos.max() + 1 <= L \
                else dataclasses.replace(sc, long_factor=sc.short_factor)
            moved = float(np.abs(out - ref.attention(
                q, k, v, rotary=dataclasses.replace(spec, scaling=other), **kw)).max())
            if not moved > SENSITIVITY * atol:
                raise AssertionError(f"FAIL {name} {label}: the other longrope factor list moves the "
                                     f"output by only {moved:.3e} (tolerance {atol:.3e})")
            print(f"  with the other longrope factor list it moves by {moved / atol:.0f}x the tolerance")


def main():
    rng = np.random.default_rng(20240723)
    for path in sorted(CONFIGS.glob("*.json")):
        run(path.stem, json.loads(path.read_text()), rng)
    codellama = json.loads((CONFIGS / "codellama_7b.json").read_text())
    run("synthetic_dynamic", dict(codellama, rope_scaling={"rope_type": "dynamic", "factor": 2.0}), rng)
    neox = json.loads((CONFIGS / "gpt_neox_20b.json").read_text())
    run("synthetic_linear", dict(neox, rope_scaling={"type": "linear", "factor": 4.0}), rng)


main()

# CHECK: PASS codellama_7b below
# CHECK: PASS codellama_7b across
# CHECK: PASS codellama_7b spread<
# CHECK: PASS codellama_7b spread>
# CHECK: PASS deepseek_v2_lite below
# CHECK: PASS deepseek_v2_lite across
# CHECK: PASS deepseek_v2_lite spread<
# CHECK: PASS deepseek_v2_lite spread>
# CHECK: PASS gpt_neox_20b below
# CHECK: PASS gpt_neox_20b across
# CHECK: PASS gpt_neox_20b spread<
# CHECK: PASS gpt_neox_20b spread>
# CHECK: PASS gptj_6b below
# CHECK: PASS gptj_6b across
# CHECK: PASS gptj_6b spread<
# CHECK: PASS gptj_6b spread>
# CHECK: PASS llama31_8b below
# CHECK: PASS llama31_8b across
# CHECK: PASS llama31_8b spread<
# CHECK: PASS llama31_8b spread>
# CHECK: PASS phi3_mini_128k_instruct below
# CHECK: PASS phi3_mini_128k_instruct across
# CHECK: PASS phi3_mini_128k_instruct spread<
# CHECK: PASS phi3_mini_128k_instruct spread>
# CHECK: PASS qwen25_7b_instruct_yarn below
# CHECK: PASS qwen25_7b_instruct_yarn across
# CHECK: PASS qwen25_7b_instruct_yarn spread<
# CHECK: PASS qwen25_7b_instruct_yarn spread>
# CHECK: PASS synthetic_dynamic below
# CHECK: PASS synthetic_dynamic across
# CHECK: PASS synthetic_dynamic spread<
# CHECK: PASS synthetic_dynamic spread>
# CHECK: PASS synthetic_linear below
# CHECK: PASS synthetic_linear across
# CHECK: PASS synthetic_linear spread<
# CHECK: PASS synthetic_linear spread>
