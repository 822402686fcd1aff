# RUN: %python %s | FileCheck %s
"""rope_mlir.hf: every bundled config imports to the expected spec, and the
importer's rules (key spellings, HF fallbacks, errors) hold on small synthetic
configs. Nothing is compiled (see hf_roundtrip.* and hf_models_run.py for
that); spec texts are the dialect's, printed and parsed through the C API.

Expected values are written out from the public config.json values and HF's
formulas, not derived from hf.py.
"""

import json
import math
from pathlib import Path

from rope_mlir import hf
from rope_mlir import reference as ref
from rope_mlir.spec import RotarySpec, Scaling

CONFIGS = Path(__file__).resolve().parents[2] / "examples" / "configs"


def load(name):
    return json.loads((CONFIGS / f"{name}.json").read_text())


def check(name, cond, detail=""):
    if not cond:
        raise AssertionError(f"FAIL {name}: {detail}")


def expect_spec(name, config, expected, head, attr=None, **kw):
    spec = hf.spec_from_config(config, **kw)
    check(name, spec == expected, f"\n  got      {spec}\n  expected {expected}")
    check(name, hf.head_dims(config) == head, f"head dims {hf.head_dims(config)} != {head}")
    if attr is not None:
        # `attr` is the spec as a person writes it; the dialect prints both
        # the same way when they are the same spec.
        text, canonical = hf.spec_attr(spec, head[0]), RotarySpec.from_attr(attr).to_attr()
        check(name, text == canonical, f"\n  got      {text}\n  expected {canonical} ({attr})")
    print(f"PASS import {name}")
    return spec


def expect_error(name, fn, needle):
    try:
        fn()
    except ValueError as e:
        check(name, needle in str(e), f"message {str(e)!r} lacks {needle!r}")
        print(f"PASS error {name}")
        return
    raise AssertionError(f"FAIL {name}: no ValueError")


# --- the bundled configs -----------------------------------------------------

LLAMA3 = Scaling("llama3", factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
                 original_max_position_embeddings=8192)
# CHECK: PASS import llama31_8b
llama = expect_spec(
    "llama31_8b", load("llama31_8b"), RotarySpec(base=500000.0, scaling=LLAMA3), (128, 128),
    "#rope.spec<base = 500000.0, scaling = #rope.llama3<factor = 8.0, "
    "original_max_position_embeddings = 8192>>")

# CHECK: PASS import qwen25_7b_instruct_yarn
qwen = expect_spec(
    "qwen25_7b_instruct_yarn", load("qwen25_7b_instruct_yarn"),
    RotarySpec(base=1000000.0, scaling=Scaling("yarn", factor=4.0, original_max_position_embeddings=32768)),
    (128, 128),
    "#rope.spec<base = 1000000.0, scaling = #rope.yarn<factor = 4.0, "
    "original_max_position_embeddings = 32768>>")
check("qwen attention factor", math.isclose(ref.attention_factor(qwen), 0.1 * math.log(4.0) + 1.0, rel_tol=1e-15))

phi3_cfg = load("phi3_mini_128k_instruct")
rs = phi3_cfg["rope_scaling"]
# CHECK: PASS import phi3_mini_128k_instruct
phi3 = expect_spec(
    "phi3_mini_128k_instruct", phi3_cfg,
    RotarySpec(scaling=Scaling("longrope", factor=131072 / 4096, original_max_position_embeddings=4096,
                               short_factor=tuple(rs["short_factor"]), long_factor=tuple(rs["long_factor"]))),
    (96, 96))
check("phi3 list lengths", len(rs["short_factor"]) == len(rs["long_factor"]) == 48)
check("phi3 list ends", rs["long_factor"][0] == 1.0700000524520874 and rs["long_factor"][-1] == 64.76000213623047
      and rs["short_factor"][0] == 1.1 and rs["short_factor"][-1] == 3.049999999999997)
# sqrt(1 + ln 32 / ln 4096); llama.cpp's GGUF of this model stores 1.190238118171692 (f32).
check("phi3 attention factor", abs(ref.attention_factor(phi3) - 1.190238118171692) < 1e-7,
      ref.attention_factor(phi3))

# CHECK: PASS import gpt_neox_20b
expect_spec("gpt_neox_20b", load("gpt_neox_20b"), RotarySpec(rotary_dims=24), (96, 96),
            "#rope.spec<dims = 24>")

# CHECK: PASS import gptj_6b
expect_spec("gptj_6b", load("gptj_6b"), RotarySpec(rotary_dims=64, layout="interleaved"), (256, 256),
            "#rope.spec<dims = 64, layout = interleaved>")

ds_cfg = load("deepseek_v2_lite")
# CHECK: PASS import deepseek_v2_lite
ds = expect_spec(
    "deepseek_v2_lite", ds_cfg,
    RotarySpec(rotary_dims=64, offset=128, layout="interleaved",
               scaling=Scaling("yarn", factor=40.0, original_max_position_embeddings=4096,
                               mscale=0.707, mscale_all_dim=0.707)),
    (192, 128),
    "#rope.spec<dims = 64, offset = 128, layout = interleaved, scaling = #rope.yarn<factor = 40.0, "
    "original_max_position_embeddings = 4096, mscale = 0.707, mscale_all_dim = 0.707>>")
check("deepseek attention factor", ref.attention_factor(ds) == 1.0)
m = 0.1 * 0.707 * math.log(40.0) + 1.0
check("deepseek softmax scale", math.isclose(hf.attention_scale(ds_cfg), 192 ** -0.5 * m * m, rel_tol=1e-15))

# CHECK: PASS import codellama_7b
expect_spec("codellama_7b", load("codellama_7b"), RotarySpec(base=1000000.0), (128, 128),
            "#rope.spec<base = 1000000.0>")
check("default scale", hf.attention_scale(load("codellama_7b")) is None)

# --- key spellings and HF fallbacks ------------------------------------------

LLAMA_BASE = {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
              "num_key_value_heads": 8, "max_position_embeddings": 131072}

# transformers 5.x: rope_parameters carries rope_theta too.
# CHECK: PASS import rope_parameters
expect_spec("rope_parameters", dict(LLAMA_BASE, rope_parameters={
    "rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0,
    "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}), llama, (128, 128))

# CHECK: PASS import linear_type_key
expect_spec("linear_type_key", dict(LLAMA_BASE, rope_scaling={"type": "linear", "factor": 2.0,
                                                                 "attention_factor": 3.0}),  # ignored, as in HF
            RotarySpec(scaling=Scaling("linear", factor=2.0)), (128, 128),
            "#rope.spec<scaling = #rope.linear<factor = 2.0>>")

# HF's dynamic NTK measures against max_position_embeddings, whatever rope_scaling says.
# CHECK: PASS import dynamic
expect_spec("dynamic", dict(LLAMA_BASE, max_position_embeddings=4096,
                            rope_scaling={"rope_type": "dynamic", "factor": 2,
                                          "original_max_position_embeddings": 1024}),
            RotarySpec(scaling=Scaling("dynamic", factor=2.0, original_max_position_embeddings=4096)),
            (128, 128),
            "#rope.spec<scaling = #rope.dynamic<factor = 2.0, original_max_position_embeddings = 4096>>")

# yarn without factor: max_position_embeddings / original (5.x); explicit betas, truncate, attention_factor.
# CHECK: PASS import yarn_implicit_factor
expect_spec("yarn_implicit_factor", dict(LLAMA_BASE, rope_scaling={
    "rope_type": "yarn", "original_max_position_embeddings": 32768, "beta_fast": 16.0,
    "beta_slow": 2, "truncate": False, "attention_factor": 1.25}),
    RotarySpec(scaling=Scaling("yarn", factor=4.0, original_max_position_embeddings=32768, beta_fast=16.0,
                               beta_slow=2.0, truncate=False), attention_factor=1.25),
    (128, 128),
    "#rope.spec<scaling = #rope.yarn<factor = 4.0, original_max_position_embeddings = 32768, "
    "beta_fast = 16.0, beta_slow = 2.0, truncate = false>, attention_factor = 1.25>")

# transformers 4.50-4.55: factor := max_position_embeddings / original, which turns the
# Qwen2.5 model-card snippet into no scaling at all.
# CHECK: PASS import yarn_legacy_factor
expect_spec("yarn_legacy_factor", load("qwen25_7b_instruct_yarn"),
            RotarySpec(base=1000000.0, scaling=Scaling("yarn", factor=1.0, original_max_position_embeddings=32768)),
            (128, 128), legacy_yarn_factor=True)

# yarn: no original_max_position_embeddings anywhere -> max_position_embeddings; mscale=0 is falsy.
# CHECK: PASS import yarn_defaults
expect_spec("yarn_defaults", dict(LLAMA_BASE, max_position_embeddings=4096,
                                  rope_scaling={"type": "yarn", "factor": 2.0, "mscale": 0, "beta_fast": None}),
            RotarySpec(scaling=Scaling("yarn", factor=2.0, original_max_position_embeddings=4096)), (128, 128))

# Early Phi-3 configs say "su"; Phi3Config also renames "yarn" to longrope.
su = dict(phi3_cfg, rope_scaling=dict(rs, type="su"))
# CHECK: PASS import phi3_su
expect_spec("phi3_su", su, phi3, (96, 96))
# CHECK: PASS import phi3_yarn_alias
expect_spec("phi3_yarn_alias", dict(phi3_cfg, rope_scaling=dict(rs, type="yarn")), phi3, (96, 96))

# longrope without a top-level original length (a non-Phi-3 model): rope_scaling's
# original length, and its explicit factor.
lr = {k: v for k, v in phi3_cfg.items() if k != "original_max_position_embeddings"}
lr["rope_scaling"] = dict(rs, type="longrope", factor=8.0, original_max_position_embeddings=4096)
lr["model_type"] = "llama"
# CHECK: PASS import longrope_explicit_factor
expect_spec("longrope_explicit_factor", lr, RotarySpec(scaling=Scaling(
    "longrope", factor=8.0, original_max_position_embeddings=4096,
    short_factor=tuple(rs["short_factor"]), long_factor=tuple(rs["long_factor"]))), (96, 96))

# Phi3Config defaults original_max_position_embeddings to 4096 when the config omits it,
# and HF 4.x then takes factor = max_position_embeddings / 4096 over rope_scaling's.
phi3_no_orig = {k: v for k, v in phi3_cfg.items() if k != "original_max_position_embeddings"}
phi3_no_orig["rope_scaling"] = dict(rs, factor=8.0)
# CHECK: PASS import phi3_default_original
expect_spec("phi3_default_original", phi3_no_orig, phi3, (96, 96))

# Partial rotary: partial_rotary_factor (also inside rope_parameters), explicit head_dim.
# CHECK: PASS import partial_rotary_factor
expect_spec("partial_rotary_factor", {"model_type": "phi", "hidden_size": 2560, "num_attention_heads": 32,
                                      "partial_rotary_factor": 0.4, "rope_theta": 10000.0},
            RotarySpec(rotary_dims=32), (80, 80), "#rope.spec<dims = 32>")
# CHECK: PASS import partial_in_rope_parameters
expect_spec("partial_in_rope_parameters",
            {"model_type": "glm", "hidden_size": 4096, "num_attention_heads": 32, "head_dim": 128,
             "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.5}},
            RotarySpec(rotary_dims=64, layout="interleaved"), (128, 128))
# CHECK: PASS import explicit_head_dim
expect_spec("explicit_head_dim", {"model_type": "gemma", "hidden_size": 3072, "num_attention_heads": 16,
                                  "head_dim": 256, "rope_theta": 10000.0, "query_pre_attn_scalar": 256},
            RotarySpec(), (256, 256), "#rope.spec<>")
check("gemma scale", hf.attention_scale({"model_type": "gemma", "hidden_size": 3072, "num_attention_heads": 16,
                                         "head_dim": 256, "query_pre_attn_scalar": 256}) == 1 / 16)

# Multimodal configs keep the language model in text_config.
# CHECK: PASS import text_config
expect_spec("text_config", {"model_type": "llava", "text_config": load("llama31_8b")}, llama, (128, 128))

# Per-layer RoPE (5.x) needs a layer type.
per_layer = dict(LLAMA_BASE, layer_types=["full_attention", "sliding_attention"], rope_parameters={
    "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0},
    "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}})
# CHECK: PASS import per_layer
expect_spec("per_layer", per_layer, RotarySpec(base=1000000.0, scaling=Scaling("linear", factor=8.0)),
            (128, 128), layer_type="full_attention")

# --- attribute printing ------------------------------------------------------

check("float 1e-05", hf._mlir_float(1e-05) == "1.0e-05", hf._mlir_float(1e-05))
check("float 1e+16", hf._mlir_float(1e16) == "1.0e+16", hf._mlir_float(1e16))
check("float repr", float(hf._mlir_float(0.1 + 0.2)) == 0.1 + 0.2)
check("inverse", hf.spec_attr(RotarySpec(inverse=True, offset=2, rotary_dims=4), 8)
      == "#rope.spec<dims = 4, offset = 2, inverse = true>")
check("freq_factors", hf.spec_attr(RotarySpec(scaling=Scaling("freq_factors", freq_factors=(1.0, 2.5))), 4)
      == "#rope.spec<scaling = #rope.freq_factors<factors = [1.000000e+00, 2.500000e+00]>>")
# CHECK: PASS spec_attr formatting
print("PASS spec_attr formatting")

mod = hf.attention_module(load("llama31_8b"), seq_len=16)
check("static module", "func.func @attention_layer(%q: tensor<1x32x16x128xf32>, %k: tensor<1x8x16x128xf32>, "
      "%v: tensor<1x8x16x128xf32>, %positions: tensor<16xi64>) -> tensor<1x32x16x128xf32>" in mod, mod)
check("module causal", ") causal\n" in mod, mod)
check("window note", "Sliding window 262144" in hf.attention_module(phi3_cfg))
check("no window note", "Sliding window" not in hf.attention_module(load("qwen25_7b_instruct_yarn")))
# CHECK: PASS attention_module text
print("PASS attention_module text")

# --- errors ------------------------------------------------------------------

# CHECK: PASS error mrope
expect_error("mrope", lambda: hf.spec_from_config(dict(LLAMA_BASE, rope_scaling={
    "type": "mrope", "mrope_section": [16, 24, 24]})), "multimodal RoPE")
# CHECK: PASS error unknown_kind
expect_error("unknown_kind", lambda: hf.spec_from_config(dict(LLAMA_BASE, rope_scaling={
    "rope_type": "ntk", "factor": 2.0})), "unsupported RoPE type 'ntk'")
# CHECK: PASS error odd_rotary_dims
expect_error("odd_rotary_dims", lambda: hf.spec_from_config(dict(LLAMA_BASE, partial_rotary_factor=0.15)),
             "must be even")
# CHECK: PASS error longrope_length
expect_error("longrope_length", lambda: hf.spec_from_config(dict(phi3_cfg, rope_scaling=dict(
    rs, short_factor=rs["short_factor"][:47]))), "has 47 entries, expected rotary_dims/2 = 48")
# CHECK: PASS error llama3_missing_key
expect_error("llama3_missing_key", lambda: hf.spec_from_config(dict(LLAMA_BASE, rope_scaling={
    "rope_type": "llama3", "factor": 8.0, "high_freq_factor": 4.0})), "'low_freq_factor'")
# CHECK: PASS error linear_missing_factor
expect_error("linear_missing_factor", lambda: hf.spec_from_config(dict(LLAMA_BASE, rope_scaling={
    "rope_type": "linear"})), "needs 'factor'")
# CHECK: PASS error per_layer_needs_layer_type
expect_error("per_layer_needs_layer_type", lambda: hf.spec_from_config(per_layer), "pass layer_type=")
# CHECK: PASS error gqa
expect_error("gqa", lambda: hf.attention_module(dict(LLAMA_BASE, num_key_value_heads=5)),
             "must be a multiple of num_key_value_heads")
# CHECK: PASS error softcapping
expect_error("softcapping", lambda: hf.attention_module(dict(LLAMA_BASE, attn_logit_softcapping=50.0)),
             "soft-capping")
# CHECK: PASS error no_heads
expect_error("no_heads", lambda: hf.spec_from_config({"model_type": "llama", "hidden_size": 4096}),
             "'num_attention_heads'")
