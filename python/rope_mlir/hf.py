"""Import a Hugging Face ``config.json`` as a rotary spec and an attention module.

    spec = spec_from_config(json.load(open("config.json")))     # spec.RotarySpec
    text = spec_attr(spec, head_dim=128)                         # '#rope.spec<...>'
    mlir = attention_module(config, seq_len=None)                # func.func @attention_layer

    python3 -m rope_mlir.hf CONFIG.json          # prints the module
    python3 -m rope_mlir.hf CONFIG.json --spec   # prints only the #rope.spec attribute

Which Hugging Face semantics
----------------------------
The frequencies follow ``transformers/modeling_rope_utils.py`` as of transformers
4.56/4.57, which differ from older and newer releases in a few corner cases. Each
choice below names the alternatives.

* Keys. ``rope_scaling`` (transformers 4.x) or ``rope_parameters`` (5.x, which
  may also hold ``rope_theta`` and ``partial_rotary_factor``). The kind is
  ``rope_type``, else the legacy ``type``, else ``default``. ``"su"`` (early
  Phi-3 configs) means ``longrope``, and so does ``"yarn"`` in a Phi-3 config
  (``Phi3Config`` renames both). Per-layer dictionaries (5.x, e.g. Gemma 3:
  ``{"full_attention": {...}, "sliding_attention": {...}}``) need ``layer_type``.
* Base. ``rope_theta`` (inside the rope dict first, as in 5.x), else GPT-NeoX's
  ``rotary_emb_base``, else 10000. GPT-J and CodeGen hard-code 10000.
* Head dim. ``head_dim`` when set and non-null, else ``hidden_size //
  num_attention_heads``. GPT-J/CodeGen/GPT-2 names (``n_embd``, ``n_head``,
  ``n_positions``) are accepted. A config whose text model is in
  ``text_config`` is read from there.
* Rotary dims. ``int(head_dim * partial_rotary_factor)`` (``rotary_pct`` is
  GPT-NeoX's name for the factor), or ``rotary_dim`` (GPT-J, CodeGen). They
  must be even.
* ``linear``: ``inv_freq / factor``.
* ``dynamic``: HF measures the context against ``max_position_embeddings`` and
  ignores an ``original_max_position_embeddings`` in ``rope_scaling``, so ours
  does too: ``#rope.dynamic<original_max_position_embeddings = max_position_embeddings>``.
  HF recomputes the frequencies when a sequence grows past the cached length
  and keeps them until the sequence drops below the original length. We
  recompute them for every call from its largest position, with no state
  between calls.
* ``yarn``: the correction range uses ``rope_scaling.original_max_position_embeddings``,
  else a top-level ``original_max_position_embeddings`` (5.x), else
  ``max_position_embeddings``. The *explicit* ``factor`` sets both the
  interpolated frequencies and the attention factor (``0.1·ln(factor)+1``, or
  the ``mscale``/``mscale_all_dim`` ratio when both are non-zero). This is the
  rule since transformers 4.56 (PR #40320, issue #38224) and in 5.x, where
  ``max_position_embeddings / original_max_position_embeddings`` is used only
  when ``factor`` is missing. Earlier 4.x releases, from the DeepSeek-V3 port
  (around 4.50) through 4.55, instead *replaced* ``factor`` by that ratio
  whenever ``rope_scaling`` has ``original_max_position_embeddings``. For Qwen2.5 with the model card's
  snippet (32768/32768 = 1) that turns YaRN off entirely. Pass
  ``legacy_yarn_factor=True`` (CLI ``--legacy-yarn-factor``) to reproduce
  those versions. Releases before 4.50 ignored ``original_max_position_embeddings``
  for YaRN altogether, which we do not model. ``beta_fast``/``beta_slow``
  default to 32/1 (also when 0 or null, as HF's ``or`` does), and ``truncate``
  defaults to true.
* ``llama3``: ``factor``, ``low_freq_factor``, ``high_freq_factor`` are
  required, as HF requires them. ``original_max_position_embeddings`` comes
  from ``rope_scaling``, else the top level, else ``max_position_embeddings``.
* ``longrope``: the frequencies are ``inv_freq / short_factor`` while
  ``max_position + 1 <= original_max_position_embeddings``, else
  ``/ long_factor``. The original length is the top-level
  ``original_max_position_embeddings`` (Phi-3 keeps it there; 4.x reads only
  that; ``Phi3Config`` defaults it to 4096), else ``rope_scaling``'s (5.x),
  else ``max_position_embeddings``. The
  attention factor is ``sqrt(1 + ln(factor)/ln(L_orig))`` with
  ``factor = max_position_embeddings / original_max_position_embeddings``
  whenever the original length is at the top level, as in all 4.x releases.
  Otherwise it is ``rope_scaling.factor``, else that ratio. 5.x prefers an
  explicit ``factor`` over the top-level ratio; the two agree for every Phi-3
  config we know, since those have no ``factor``.
* An explicit ``attention_factor`` (yarn, longrope) becomes the spec's
  ``attention_factor``.
* Precision. HF builds ``inv_freq`` in float32 (``torch.arange(...).float()``),
  and so the ramp and the factors too. We follow the same formulas in float64,
  which is the contract of ``reference.py`` and of the compiler
  (the phase rule of rope.table in docs/Dialects/RopeDialect.md). So at large positions our phases are more exact than
  HF's own.

Layout
------
``interleaved`` (pairs ``(2i, 2i+1)``) for models whose HF code rotates
adjacent pairs: ``gptj`` and ``codegen`` (``rotate_every_two``), ``cohere``,
``cohere2``, ``glm`` and ``glm4`` (``x[..., 0::2]``/``x[..., 1::2]`` with
``repeat_interleave``d tables), and ``deepseek_v2``/``deepseek_v3`` (unless
``rope_interleave`` is false). ``half`` (``rotate_half``, pairs
``(i, i + r/2)``) for every other model.

DeepSeek-V2/V3 (multi-head latent attention)
---------------------------------------------
HF applies RoPE only to the ``qk_rope_head_dim`` part of each query/key head.
It uses yarn with ``dim = qk_rope_head_dim`` (``DeepseekV2Config`` sets
``head_dim = qk_rope_head_dim`` for the rope utilities). The query and key heads
are ``[nope | rope]``, ``qk_nope_head_dim + qk_rope_head_dim`` wide, and the
value head is ``v_head_dim``. The pairs are interleaved. HF's native DeepSeek-V2
code multiplies ``(x[2i], x[2i+1])`` as complex numbers. The remote
``modeling_deepseek.py`` and HF's DeepSeek-V3 first de-interleave (``view(...,
d/2, 2).transpose``) and then ``rotate_half``. That rotates the same pairs by
the same angles and only permutes the rotated dims, identically in Q and K,
so Q·Kᵀ is unchanged. So :func:`spec_from_config` returns
``dims = qk_rope_head_dim, offset = qk_nope_head_dim, layout = interleaved``
relative to the full ``[nope | rope]`` head, and :func:`head_dims` gives
``(qk_nope + qk_rope, v_head_dim)``.

:func:`attention_module` takes that simplification for MLA. It takes the
*decompressed* per-head Q, K (with the shared ``k_pe`` already broadcast to
every head and concatenated after ``k_nope``) and V. It does not model the
low-rank ``kv_a``/``kv_b`` projections or the absorbed-weight inference form,
which are projections outside attention. The softmax scale is HF's:
``(qk_nope + qk_rope)^-0.5 · mscale²`` with ``mscale = 0.1·mscale_all_dim·ln(factor)+1``
when ``mscale_all_dim`` is set. The result is exactly the attention HF
computes for those Q, K, V; nothing is approximated.

Not supported (``ValueError``): multimodal RoPE (``mrope_section``, Qwen2-VL),
kinds other than default/linear/dynamic/yarn/llama3/longrope (e.g. the
short-lived ``ntk``), odd or oversized rotary dims, per-frequency lists of the
wrong length, and (in :func:`attention_module` only) attention logit
soft-capping (Gemma 2). Sliding-window attention is not modelled: the module is
plain causal attention, which is identical to HF's for sequences no longer than
the window. The module says so in a comment when the config enables a window.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass

from .spec import RotarySpec, Scaling

__all__ = ["spec_from_config", "head_dims", "spec_attr", "attention_module",
           "attention_scale", "INTERLEAVED_MODEL_TYPES", "MLA_MODEL_TYPES"]

# Models whose HF implementation rotates adjacent pairs (2i, 2i+1).
INTERLEAVED_MODEL_TYPES = frozenset(
    {"gptj", "codegen", "cohere", "cohere2", "glm", "glm4", "deepseek_v2", "deepseek_v3"})
# Multi-head latent attention: rope on a qk_rope_head_dim slice of each head.
MLA_MODEL_TYPES = frozenset({"deepseek_v2", "deepseek_v3"})
# Models whose HF code hard-codes the base (no rope_theta in the config).
_FIXED_BASE_MODEL_TYPES = frozenset({"gptj", "codegen"})

_SUPPORTED_KINDS = ("default", "linear", "dynamic", "yarn", "llama3", "longrope")

# GPT-2-style names that HF configs map onto the common ones (attribute_map).
_ALIASES = {
    "hidden_size": ("n_embd", "d_model"),
    "num_attention_heads": ("n_head", "num_heads"),
    "max_position_embeddings": ("n_positions", "n_ctx", "max_sequence_length"),
}


# ---------------------------------------------------------------------------
# Config access
# ---------------------------------------------------------------------------


def _text_config(config: dict) -> dict:
    """The dict that describes the language model (multimodal configs nest it)."""
    if not isinstance(config, dict):
        raise ValueError(f"config must be a dict (a parsed config.json), got {type(config).__name__}")
    if "text_config" in config and isinstance(config["text_config"], dict) and not any(
            k in config for k in ("num_attention_heads", "n_head")):
        inner = dict(config["text_config"])
        inner.setdefault("model_type", config.get("model_type", ""))
        return inner
    return config


def _get(cfg: dict, key: str, default=None):
    if cfg.get(key) is not None:
        return cfg[key]
    for alias in _ALIASES.get(key, ()):
        if cfg.get(alias) is not None:
            return cfg[alias]
    return default


def _require(cfg: dict, key: str, what: str = "config"):
    value = _get(cfg, key)
    if value is None:
        raise ValueError(f"{what} has no {key!r}")
    return value


def _model_type(cfg: dict) -> str:
    return str(cfg.get("model_type") or "")


def _as_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    return int(value)


def _as_float(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return v


def _positive(value, name: str) -> float:
    v = _as_float(value, name)
    if v <= 0:
        raise ValueError(f"{name} must be positive, got {value!r}")
    return v


def _rope_dict(cfg: dict, layer_type: str | None) -> dict:
    """rope_scaling (4.x) or rope_parameters (5.x); per-layer dicts need layer_type."""
    rp = cfg.get("rope_scaling") or cfg.get("rope_parameters") or {}
    if not isinstance(rp, dict):
        raise ValueError(f"rope_scaling/rope_parameters must be a dict, got {rp!r}")
    nested = rp and all(isinstance(v, dict) for v in rp.values())
    if nested:
        if layer_type is None:
            raise ValueError(
                f"the config has per-layer RoPE parameters for layer types {sorted(rp)}; "
                "pass layer_type= (CLI: --layer-type) to pick one")
        if layer_type not in rp:
            raise ValueError(f"layer_type {layer_type!r} not in the config's RoPE layer types {sorted(rp)}")
        return dict(rp[layer_type])
    if layer_type is not None:
        raise ValueError("layer_type was given but the config has one RoPE for all layers")
    return dict(rp)


def _num_heads(cfg: dict) -> int:
    return _as_int(_require(cfg, "num_attention_heads"), "num_attention_heads")


def _plain_head_dim(cfg: dict) -> int:
    hd = cfg.get("head_dim")
    if hd is not None:
        return _as_int(hd, "head_dim")
    hidden = _as_int(_require(cfg, "hidden_size"), "hidden_size")
    return hidden // _num_heads(cfg)


def _is_mla(cfg: dict) -> bool:
    return _model_type(cfg) in MLA_MODEL_TYPES and cfg.get("qk_rope_head_dim") is not None


def head_dims(config: dict) -> tuple[int, int]:
    """(query/key head dim, value head dim) of the attention layer."""
    cfg = _text_config(config)
    if _is_mla(cfg):
        nope = _as_int(cfg.get("qk_nope_head_dim") or 0, "qk_nope_head_dim")
        rope = _as_int(cfg["qk_rope_head_dim"], "qk_rope_head_dim")
        v = _as_int(cfg.get("v_head_dim") or nope + rope, "v_head_dim")
        return nope + rope, v
    d = _plain_head_dim(cfg)
    return d, d


# ---------------------------------------------------------------------------
# Config -> RotarySpec
# ---------------------------------------------------------------------------


def _kind(cfg: dict, rp: dict) -> str:
    kind = rp.get("rope_type", rp.get("type")) or "default"
    if not isinstance(kind, str):
        raise ValueError(f"rope_type must be a string, got {kind!r}")
    if "mrope_section" in rp or kind in ("mrope", "3d"):
        raise ValueError("multimodal RoPE (mrope_section, e.g. Qwen2-VL) is not supported: "
                         "its positions are 3-D (temporal, height, width)")
    if kind == "su":
        kind = "longrope"  # early Phi-3 configs
    if kind == "yarn" and _model_type(cfg) in ("phi3", "phimoe"):
        kind = "longrope"  # Phi3Config renames it, for backward compatibility
    if kind not in _SUPPORTED_KINDS:
        raise ValueError(f"unsupported RoPE type {kind!r}; supported: {', '.join(_SUPPORTED_KINDS)}")
    return kind


def _base(cfg: dict, rp: dict) -> float:
    if _model_type(cfg) in _FIXED_BASE_MODEL_TYPES:
        return 10000.0  # hard-coded in create_sinusoidal_positions
    for value, name in ((rp.get("rope_theta"), "rope_theta"), (cfg.get("rope_theta"), "rope_theta"),
                        (cfg.get("rotary_emb_base"), "rotary_emb_base")):
        if value is not None:
            base = _positive(value, name)
            if base <= 1.0:
                raise ValueError(f"{name} must be greater than 1, got {base}")
            return base
    return 10000.0


def _rotary_dims(cfg: dict, rp: dict, head_dim: int) -> int:
    if _is_mla(cfg):
        r = _as_int(cfg["qk_rope_head_dim"], "qk_rope_head_dim")
        source = "qk_rope_head_dim"
    else:
        factor = rp.get("partial_rotary_factor")
        source = "partial_rotary_factor"
        if factor is None:
            factor = cfg.get("partial_rotary_factor")
        if factor is None and cfg.get("rotary_pct") is not None:
            factor, source = cfg["rotary_pct"], "rotary_pct"
        if factor is not None:
            factor = _positive(factor, source)
            r = int(head_dim * factor)  # HF: int(head_dim * partial_rotary_factor)
        elif cfg.get("rotary_dim") is not None:
            r, source = _as_int(cfg["rotary_dim"], "rotary_dim"), "rotary_dim"
        else:
            r, source = head_dim, "head_dim"
    if r <= 0 or r % 2 or r > head_dim:
        raise ValueError(f"rotary dims {r} (from {source}) must be even and in (0, {head_dim}]")
    return r


def _layout(cfg: dict) -> str:
    mt = _model_type(cfg)
    if mt in MLA_MODEL_TYPES and cfg.get("rope_interleave") is False:
        return "half"
    return "interleaved" if mt in INTERLEAVED_MODEL_TYPES else "half"


def _factor_list(rp: dict, key: str, h: int) -> tuple:
    values = rp.get(key)
    if not isinstance(values, (list, tuple)) or not values:
        raise ValueError(f"longrope needs a non-empty list {key!r}, got {values!r}")
    out = tuple(_positive(v, f"{key}[{i}]") for i, v in enumerate(values))
    if len(out) != h:
        raise ValueError(f"longrope {key!r} has {len(out)} entries, expected rotary_dims/2 = {h}")
    return out


@dataclass(frozen=True)
class _ScalingInputs:
    """What the scaling of a config is made of: its kind, the rope dict,
    the rotary dims and the context lengths the config states."""
    kind: str
    rp: dict
    r: int
    max_pos: object  # max_position_embeddings, or None
    top_orig: object  # the top-level original_max_position_embeddings, or None
    legacy_yarn_factor: bool

    def need_max_pos(self, why: str) -> int:
        if self.max_pos is None:
            raise ValueError(f"{self.kind} scaling needs max_position_embeddings ({why})")
        return _as_int(self.max_pos, "max_position_embeddings")

    def orig_from(self, *candidates) -> int:
        """The first candidate given, else max_position_embeddings."""
        for value in candidates:
            if value is not None:
                v = _as_int(value, "original_max_position_embeddings")
                if v <= 0:
                    raise ValueError(f"original_max_position_embeddings must be positive, got {v}")
                return v
        return self.need_max_pos("as the original context length")

    def factor(self, required: bool = True):
        f = self.rp.get("factor")
        if f is None:
            if required:
                raise ValueError(f"{self.kind} scaling needs 'factor' in rope_scaling")
            return None
        return _positive(f, "factor")


def _linear_scaling(c: _ScalingInputs) -> Scaling:
    return Scaling("linear", factor=c.factor())


def _dynamic_scaling(c: _ScalingInputs) -> Scaling:
    if c.r <= 2:
        raise ValueError("dynamic scaling needs rotary dims > 2")
    return Scaling("dynamic", factor=c.factor(),
                   original_max_position_embeddings=c.need_max_pos("HF's dynamic NTK reference length"))


def _yarn_scaling(c: _ScalingInputs) -> Scaling:
    rp = c.rp
    orig = c.orig_from(rp.get("original_max_position_embeddings"), c.top_orig)
    factor = c.factor(required=False)
    if factor is None or (c.legacy_yarn_factor and rp.get("original_max_position_embeddings") is not None):
        factor = c.need_max_pos("for the implicit yarn factor") / orig
    if factor <= 0:
        raise ValueError(f"yarn factor must be positive, got {factor}")
    mscale = rp.get("mscale") or None  # HF tests truthiness
    mscale_all_dim = rp.get("mscale_all_dim") or None
    truncate = rp.get("truncate", True)
    if not isinstance(truncate, bool):
        raise ValueError(f"yarn truncate must be true or false, got {truncate!r}")
    return Scaling(
        "yarn", factor=factor, original_max_position_embeddings=orig,
        beta_fast=_positive(rp.get("beta_fast") or 32, "beta_fast"),
        beta_slow=_positive(rp.get("beta_slow") or 1, "beta_slow"),
        mscale=None if mscale is None else _positive(mscale, "mscale"),
        mscale_all_dim=None if mscale_all_dim is None else _positive(mscale_all_dim, "mscale_all_dim"),
        truncate=truncate)


def _llama3_scaling(c: _ScalingInputs) -> Scaling:
    rp = c.rp
    for key in ("factor", "low_freq_factor", "high_freq_factor"):
        if rp.get(key) is None:
            raise ValueError(f"llama3 scaling needs {key!r} in rope_scaling")
    lo = _positive(rp["low_freq_factor"], "low_freq_factor")
    hi = _positive(rp["high_freq_factor"], "high_freq_factor")
    if hi <= lo:
        raise ValueError(f"llama3 high_freq_factor ({hi}) must exceed low_freq_factor ({lo})")
    return Scaling("llama3", factor=c.factor(), low_freq_factor=lo, high_freq_factor=hi,
                   original_max_position_embeddings=c.orig_from(
                       rp.get("original_max_position_embeddings"), c.top_orig))


def _longrope_scaling(c: _ScalingInputs) -> Scaling:
    orig = c.orig_from(c.top_orig, c.rp.get("original_max_position_embeddings"))
    if orig <= 1:
        raise ValueError(f"longrope original_max_position_embeddings must exceed 1, got {orig}")
    if c.top_orig is not None:
        factor = c.need_max_pos("for the attention factor") / orig
    else:
        factor = c.factor(required=False)
        if factor is None:
            factor = c.need_max_pos("for the attention factor") / orig
    if factor <= 0:
        raise ValueError(f"longrope factor must be positive, got {factor}")
    return Scaling("longrope", factor=factor, original_max_position_embeddings=orig,
                   short_factor=_factor_list(c.rp, "short_factor", c.r // 2),
                   long_factor=_factor_list(c.rp, "long_factor", c.r // 2))


_SCALINGS = {
    "default": lambda c: Scaling(),
    "linear": _linear_scaling,
    "dynamic": _dynamic_scaling,
    "yarn": _yarn_scaling,
    "llama3": _llama3_scaling,
    "longrope": _longrope_scaling,
}


def spec_from_config(config: dict, *, layer_type: str | None = None,
                     legacy_yarn_factor: bool = False) -> RotarySpec:
    """The rotary spec of a Hugging Face config (see the module docstring for the rules).

    For DeepSeek-V2/V3 the spec is relative to the full ``[nope | rope]`` query/key
    head (``offset = qk_nope_head_dim``); see :func:`head_dims`.
    """
    cfg = _text_config(config)
    rp = _rope_dict(cfg, layer_type)
    kind = _kind(cfg, rp)
    qk_dim, _ = head_dims(cfg)
    mla = _is_mla(cfg)
    offset = qk_dim - _as_int(cfg["qk_rope_head_dim"], "qk_rope_head_dim") if mla else 0
    head_dim = qk_dim - offset
    r = _rotary_dims(cfg, rp, head_dim)
    base = _base(cfg, rp)
    layout = _layout(cfg)
    max_pos = _get(cfg, "max_position_embeddings")
    top_orig = cfg.get("original_max_position_embeddings")
    if top_orig is None and _model_type(cfg) in ("phi3", "phimoe"):
        top_orig = 4096  # Phi3Config's default for the attribute
    # HF reads an explicit attention_factor for yarn and longrope only.
    attention_factor = rp.get("attention_factor") if kind in ("yarn", "longrope") else None
    attention_factor = None if attention_factor is None else _positive(attention_factor, "attention_factor")
    scaling = _SCALINGS[kind](_ScalingInputs(kind, rp, r, max_pos, top_orig, legacy_yarn_factor))
    rotary_dims = None if (r == head_dim and offset == 0) else r
    return RotarySpec(base=base, rotary_dims=rotary_dims, offset=offset, layout=layout,
                      scaling=scaling, attention_factor=attention_factor)


# ---------------------------------------------------------------------------
# RotarySpec -> MLIR attribute text
# ---------------------------------------------------------------------------


def _mlir_float(value) -> str:
    """An f64 literal that MLIR parses back to the same double (repr, with a
    '.'): the softmax scale of the attention module."""
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"cannot print non-finite value {value!r} as an MLIR float")
    mantissa, e, exponent = repr(v).partition("e")
    if "." not in mantissa:
        mantissa += ".0"  # MLIR float literals need a '.': 1e-05 -> 1.0e-05
    return mantissa + e + exponent


def spec_attr(spec: RotarySpec, head_dim: int) -> str:
    """``#rope.spec<...>`` for ``spec`` on heads of ``head_dim`` elements, as the
    dialect prints it (defaults omitted; RotarySpec.to_attr)."""
    return spec.to_attr(head_dim)


# ---------------------------------------------------------------------------
# Config -> attention module
# ---------------------------------------------------------------------------


def _yarn_get_mscale(scale: float, mscale: float) -> float:
    return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0


def attention_scale(config: dict, *, layer_type: str | None = None) -> float | None:
    """The softmax scale HF uses, or None for the default ``1/sqrt(head_dim)``."""
    cfg = _text_config(config)
    qk_dim, _ = head_dims(cfg)
    if _is_mla(cfg):
        scale = qk_dim ** -0.5
        rp = _rope_dict(cfg, layer_type)
        if rp and (rp.get("rope_type", rp.get("type")) or "default") != "default":
            mscale_all_dim = rp.get("mscale_all_dim") or 0
            if mscale_all_dim:
                m = _yarn_get_mscale(_positive(rp["factor"], "factor"), float(mscale_all_dim))
                scale = scale * m * m
        return scale
    if cfg.get("query_pre_attn_scalar") is not None:  # Gemma
        return _positive(cfg["query_pre_attn_scalar"], "query_pre_attn_scalar") ** -0.5
    return None


def attention_module(config: dict, seq_len: int | None = None, *, layer_type: str | None = None,
                     legacy_yarn_factor: bool = False) -> str:
    """An MLIR module with ``func.func @attention_layer(%q, %k, %v, %positions)``.

    q ``[1, Hq, S, D]``, k ``[1, Hkv, S, D]``, v ``[1, Hkv, S, Dv]`` (f32),
    positions ``[S]`` (i64, shared by queries and keys); returns ``[1, Hq, S, Dv]``.
    ``D == Dv`` except for DeepSeek's MLA (see the module docstring).
    """
    cfg = _text_config(config)
    if cfg.get("attn_logit_softcapping") is not None:
        raise ValueError("attention logit soft-capping (attn_logit_softcapping) is not supported")
    spec = spec_from_config(cfg, layer_type=layer_type, legacy_yarn_factor=legacy_yarn_factor)
    hq = _num_heads(cfg)
    hkv = _as_int(cfg.get("num_key_value_heads") or hq, "num_key_value_heads")
    if hkv <= 0 or hq % hkv:
        raise ValueError(f"num_attention_heads ({hq}) must be a multiple of num_key_value_heads ({hkv})")
    d, dv = head_dims(cfg)
    if seq_len is None:
        s = "?"
    else:
        s = str(_as_int(seq_len, "seq_len"))
        if int(s) <= 0:
            raise ValueError(f"seq_len must be positive, got {seq_len}")
    scale = attention_scale(cfg, layer_type=layer_type)

    tq = f"tensor<1x{hq}x{s}x{d}xf32>"
    tk = f"tensor<1x{hkv}x{s}x{d}xf32>"
    tv = f"tensor<1x{hkv}x{s}x{dv}xf32>"
    to = f"tensor<1x{hq}x{s}x{dv}xf32>"
    tp = f"tensor<{s}xi64>"

    mt = _model_type(cfg) or "unknown"
    notes = [f"// Attention layer imported from a Hugging Face config (model_type {mt}) by rope_mlir.hf:",
             f"// {hq} query heads, {hkv} key/value heads, head dim {d}"
             + (f", value head dim {dv}" if dv != d else "") + "; causal, RoPE on Q and K inside."]
    if _is_mla(cfg):
        notes.append("// DeepSeek MLA: Q/K heads are [nope | rope] with the shared k_pe broadcast to every")
        notes.append("// head; the low-rank KV projections are outside this function.")
    window = cfg.get("sliding_window")
    if window is not None and cfg.get("use_sliding_window", True):
        notes.append(f"// Sliding window {window} not modelled: identical for sequences up to {window} tokens.")
    scale_text = "" if scale is None else f" scale = {_mlir_float(scale)}"
    return "\n".join(notes + [
        f"#rotary = {spec_attr(spec, d)}",
        "",
        f"func.func @attention_layer(%q: {tq}, %k: {tk}, %v: {tv}, %positions: {tp}) -> {to} {{",
        f"  %o = rope.attention %q, %k, %v positions(%positions, %positions : {tp}, {tp})",
        f"      rotary(#rotary) causal{scale_text}",
        f"      : {tq}, {tk}, {tv}",
        f"  return %o : {to}",
        "}",
        "",
    ])


# ---------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m rope_mlir.hf",
        description="Print the rope-mlir attention module (or only the #rope.spec) of a Hugging Face config.json.")
    parser.add_argument("config", help="path to config.json")
    parser.add_argument("--spec", action="store_true", help="print only the #rope.spec attribute")
    parser.add_argument("--seq-len", type=int, default=None, help="static sequence length (default: dynamic)")
    parser.add_argument("--layer-type", default=None, help="layer type for per-layer RoPE configs")
    parser.add_argument("--legacy-yarn-factor", action="store_true",
                        help="transformers 4.50-4.55 yarn: factor = max_position_embeddings / "
                             "original_max_position_embeddings")
    args = parser.parse_args(argv)
    try:
        with open(args.config) as f:
            config = json.load(f)
        if args.spec:
            spec = spec_from_config(config, layer_type=args.layer_type,
                                    legacy_yarn_factor=args.legacy_yarn_factor)
            print(spec_attr(spec, head_dims(config)[0]))
        else:
            print(attention_module(config, args.seq_len, layer_type=args.layer_type,
                                   legacy_yarn_factor=args.legacy_yarn_factor), end="")
    except (OSError, json.JSONDecodeError, ValueError) as e:
        print(f"error: {args.config}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
