# REQUIRES: torch
# RUN: %torch_python %s | FileCheck %s
"""python/rope_mlir/reference.py (through hf.spec_from_config) gives the
frequencies and attention factor that transformers itself computes, for every
scaling kind and for every config bundled in examples/configs/.

For each config dict C, HF's side is transformers' own initialisation on the
config object it builds from C: the model's rotary embedding module
(`<Model>RotaryEmbedding(config)`: its `inv_freq` buffer and
`attention_scaling`; the default kind lives there since transformers 5.x has
no "default" entry in ROPE_INIT_FUNCTIONS), and
`modeling_rope_utils.ROPE_INIT_FUNCTIONS[rope_type](config, seq_len=...)` for
the context-length dependent kinds (dynamic: several lengths below and above
max_position_embeddings; longrope: at and just past the original length, where
it switches from the short to the long factors). Ours is
`reference.inv_freq(hf.spec_from_config(C), head_dim, max_position=seq_len-1)`
and `reference.attention_factor(spec)` on the same dict C. GPT-J has no
rotary module (its attention builds a sin/cos cache with
`create_sinusoidal_positions`), so its cache is compared with
`reference.cos_sin_table`.

Tolerance. HF computes the frequencies in float32, ours in float64, so HF's
values carry float32 rounding: `base ** (2i/r)` with the exponent rounded to
f32 (relative error up to 2i/r·ln(base)·u, u = 2^-24: ~14 u for base 1e6), the
pow, the division, and for the scaled kinds a few more operations (llama3's
smoothing, yarn's ramp blend, the longrope product). The check is elementwise
|ours − hf| <= (8 + 2·(2i/r)·ln(base))·u·|ours|, about 4x the worst case of
that analysis; the printed max of |ours − hf| / (u·|ours|) shows how close it
is. A formula difference (a factor applied to the wrong band, a wrong length,
short vs long factors) is orders of magnitude larger. The attention factor is
computed in float64 (Python math) on both sides: |ours − hf| <= 1e-12.
GPT-J's cache holds f32 sin/cos of the f32 phase f32(p)·f~ with f~ its f32
frequencies: |ours − hf| <= p·f·(u/2 + the inv_freq bound above) + 2u (the
phase error, then sin/cos and the stored value, each within an ulp of 1).

Two known differences are left out, neither in a bundled config:
transformers 5.x takes an explicit longrope `factor` over the ratio
max_position_embeddings / original_max_position_embeddings when the latter is
at the top level, where hf.py follows 4.x (its docstring says so); and
Llama's own default initialisation ignores partial_rotary_factor (its
attention rotates the whole head), where hf.py honours it for every model.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import numpy as np
import torch
import transformers
from transformers import modeling_rope_utils as mru

from rope_mlir import hf, reference as ref
import rope_testing as T

transformers.logging.set_verbosity_error()
CONFIGS = Path(__file__).resolve().parents[2] / "examples" / "configs"
U = 2.0 ** -24


def rotary_class(model_type: str):
    """The `<Model>RotaryEmbedding` class of transformers' implementation of `model_type`."""
    import importlib
    mod = importlib.import_module(f"transformers.models.{model_type}.modeling_{model_type}")
    found = [getattr(mod, n) for n in dir(mod) if n.endswith("RotaryEmbedding")
             and isinstance(getattr(mod, n), type) and issubclass(getattr(mod, n), torch.nn.Module)]
    if len(found) != 1:
        raise LookupError(f"model_type {model_type!r}: expected one *RotaryEmbedding class, "
                          f"found {[c.__name__ for c in found]}")
    return found[0]


def hf_config(config: dict):
    """transformers' config object for a config.json dict."""
    d = copy.deepcopy(config)
    return transformers.AutoConfig.for_model(d.pop("model_type"), **d)


def inv_freq_tolerance(spec, head_dim: int, ours: np.ndarray) -> np.ndarray:
    r = spec.rotary_dims or head_dim
    e = np.arange(0, r, 2, dtype=np.float64) / r
    return (8.0 + 2.0 * e * math.log(spec.base)) * U * np.abs(ours)


def check_case(label: str, config: dict, seq_lens=(None,)) -> None:
    """One config: HF's inv_freq/attention factor vs ours at each seq_len."""
    cfg = hf_config(config)
    spec = hf.spec_from_config(config)
    model_type = config["model_type"]
    head_dim = hf.head_dims(config)[0]  # the whole query/key head (MLA: [nope | rope])
    kind = spec.scaling.kind
    rotary = rotary_class(model_type)(cfg)
    worst_ulps = 0.0
    for seq_len in seq_lens:
        if seq_len is None:
            theirs = rotary.inv_freq.double().numpy()
            their_m = float(rotary.attention_scaling)
        else:
            f, m = mru.ROPE_INIT_FUNCTIONS[cfg.rope_parameters["rope_type"]](cfg, None, seq_len=seq_len)
            theirs, their_m = f.double().numpy(), float(m)
        max_position = None if seq_len is None else seq_len - 1
        if seq_len is None and kind == "dynamic":
            max_position = cfg.max_position_embeddings - 1  # HF's init length
        ours = ref.inv_freq(spec, head_dim, max_position)
        T.check(ours, theirs, inv_freq_tolerance(spec, head_dim, ours),
                f"{label} inv_freq seq_len={seq_len}")
        worst_ulps = max(worst_ulps, float(np.max(np.abs(ours - theirs) / (U * np.abs(ours)))))
        our_m = ref.attention_factor(spec)
        T.check(our_m, their_m, 1e-12, f"{label} attention_factor={our_m:.9f} seq_len={seq_len}")
    print(f"  {label}: kind {kind}, max |ours - hf| = {worst_ulps:.1f} u·|ours|")


def synthetic_cases():
    """Every scaling kind on Llama configs with two head dims (128 and 96:
    2i/r is exact in f32 only for a power of two), and on GPT-NeoX configs
    with partial rotary (Llama's own default initialisation ignores
    partial_rotary_factor; GPT-NeoX's reads it, as the scaled kinds do)."""
    kinds = {
        "default": {},
        "linear": {"factor": 4.0},
        "dynamic": {"factor": 2.0},
        "yarn": {"factor": 4.0, "original_max_position_embeddings": 2048},
        "yarn-mscale": {"factor": 40.0, "original_max_position_embeddings": 2048,
                        "mscale": 0.707, "mscale_all_dim": 0.707, "beta_fast": 16, "beta_slow": 2},
        "yarn-notrunc": {"factor": 8.0, "original_max_position_embeddings": 1024, "truncate": False},
        "llama3": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                   "original_max_position_embeddings": 1024},
        "longrope": None,  # factor lists depend on r
    }
    for head_dim, theta, prf in ((128, 500000.0, None), (96, 10000.0, None), (96, 1000000.0, 0.5)):
        r = int(head_dim * (prf or 1.0))
        for name, extra in kinds.items():
            kind = name.split("-")[0]
            if extra is None:
                extra = {"short_factor": [1.0 + 0.05 * i for i in range(r // 2)],
                         "long_factor": [1.0 + 0.75 * i for i in range(r // 2)],
                         "original_max_position_embeddings": 2048}
            rp = {"rope_type": kind, "rope_theta": theta, **extra}
            if prf is None:
                config = dict(model_type="llama", hidden_size=1024, num_attention_heads=8,
                              num_key_value_heads=2, head_dim=head_dim, max_position_embeddings=8192,
                              rope_parameters=rp)
            else:
                rp["partial_rotary_factor"] = prf
                config = dict(model_type="gpt_neox", hidden_size=8 * head_dim, num_attention_heads=8,
                              max_position_embeddings=8192, rope_parameters=rp)
            seq_lens = {"dynamic": (None, 4096, 8192, 8193, 20000, 65536),
                        "longrope": (None, 2048, 2049, 8192)}.get(kind, (None,))
            label = f"{name} D={head_dim} theta={theta:g}" + (f" prf={prf}" if prf else "")
            yield label, config, seq_lens


def check_gptj(label: str, config: dict) -> None:
    from transformers.models.gptj import modeling_gptj
    spec = hf.spec_from_config(config)
    head_dim = hf.head_dims(config)[0]
    n = 4096
    table = modeling_gptj.create_sinusoidal_positions(n, spec.rotary_dims).double().numpy()
    h = spec.rotary_dims // 2
    their_sin, their_cos = table[:, :h], table[:, h:]
    p = np.arange(n)
    cos, sin = ref.cos_sin_table(p, spec, head_dim)
    phase = p[:, None] * ref.inv_freq(spec, head_dim)
    # HF's phase: f32(p)·f~ rounded, f~ = its f32 inv_freq (inv_freq_tolerance).
    atol = phase * (0.5 * U + inv_freq_tolerance(spec, head_dim, np.ones(h))) + 2.0 * U
    T.check(cos, their_cos, atol, f"{label} cos cache (positions < {n})")
    T.check(sin, their_sin, atol, f"{label} sin cache (positions < {n})")


def main() -> None:
    for label, config, seq_lens in synthetic_cases():
        with T.guard(label):
            check_case(label, config, seq_lens)
    for path in sorted(CONFIGS.glob("*.json")):
        config = json.loads(path.read_text())
        label = f"bundled {path.name}"
        with T.guard(label):
            if config["model_type"] == "gptj":
                check_gptj(label, config)
                continue
            kind = hf.spec_from_config(config).scaling.kind
            cfg = hf_config(config)
            seq_lens = (None,)
            if kind == "longrope":
                orig = cfg.rope_parameters["original_max_position_embeddings"]
                seq_lens = (None, orig, orig + 1, cfg.max_position_embeddings)
            check_case(label, config, seq_lens)
    T.finish()
    print("reference matches transformers")


if __name__ == "__main__":
    main()

# Every kind, on two head dims, full and partial rotary:
# CHECK-DAG: PASS default D=128 theta=500000 inv_freq
# CHECK-DAG: PASS linear D=96 theta=10000 inv_freq
# CHECK-DAG: PASS dynamic D=128 theta=500000 inv_freq seq_len=65536
# CHECK-DAG: PASS yarn D=96 theta=1e+06 prf=0.5 attention_factor
# CHECK-DAG: PASS yarn-mscale D=128 theta=500000 attention_factor
# CHECK-DAG: PASS yarn-notrunc D=96 theta=10000 inv_freq
# CHECK-DAG: PASS llama3 D=96 theta=1e+06 prf=0.5 inv_freq
# CHECK-DAG: PASS longrope D=128 theta=500000 inv_freq seq_len=2049
# CHECK-DAG: PASS longrope D=96 theta=10000 attention_factor
# Every bundled config:
# CHECK-DAG: PASS bundled codellama_7b.json inv_freq
# CHECK-DAG: PASS bundled deepseek_v2_lite.json attention_factor
# CHECK-DAG: PASS bundled gpt_neox_20b.json inv_freq
# CHECK-DAG: PASS bundled gptj_6b.json cos cache
# CHECK-DAG: PASS bundled gptj_6b.json sin cache
# CHECK-DAG: PASS bundled llama31_8b.json inv_freq
# CHECK-DAG: PASS bundled phi3_mini_128k_instruct.json inv_freq seq_len=4097
# CHECK-DAG: PASS bundled qwen25_7b_instruct_yarn.json attention_factor
# CHECK: reference matches transformers
