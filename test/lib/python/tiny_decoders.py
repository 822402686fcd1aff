"""Tiny random Hugging Face decoders for the `torch.compile` backend's tests.

    import tiny_decoders as D       # test/lib/python is on PYTHONPATH (test/lit.cfg.py)
    model = D.build("mistral", layers=1)

One config per family (no download), hidden 64, 4 query heads on 2 kv heads
of head dim 16: small enough that compiling a graph takes seconds, with the
features of each family set so that they take part (Llama 3's frequency
bands among head dim 16's frequencies, Mistral's window passed by a prompt
of 23, Gemma 2's soft-cap and alternating layers, Phi-3's LongRoPE).
The weights are N(0, 0.2): random weights of N(0, 0.02) give near-uniform
logits, whose greedy choice is decided by rounding; N(0, 0.2) makes each
choice clear, so compiled and eager tokens can be compared exactly.
"""

from __future__ import annotations

import torch
import transformers

COMMON = dict(hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
              intermediate_size=128, vocab_size=256,
              bos_token_id=None, eos_token_id=None, pad_token_id=0, tie_word_embeddings=False)

# family: (config class, model class, config)
MODELS = {
    # Llama 3.1: llama3 frequency scaling (original context 64: its bands fall among
    # head dim 16's frequencies), GQA 4/2.
    "llama3.1": (transformers.LlamaConfig, transformers.LlamaForCausalLM, dict(
        max_position_embeddings=512,
        rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
                         "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                         "original_max_position_embeddings": 64})),
    # Qwen2: q/k/v biases, theta 1e6.
    "qwen2": (transformers.Qwen2Config, transformers.Qwen2ForCausalLM, dict(
        max_position_embeddings=512,
        rope_parameters={"rope_type": "default", "rope_theta": 1000000.0})),
    # Mistral: sliding window 8 (the second prompt and the decode steps pass it).
    "mistral": (transformers.MistralConfig, transformers.MistralForCausalLM, dict(
        max_position_embeddings=512, sliding_window=8,
        rope_parameters={"rope_type": "default", "rope_theta": 1000000.0})),
    # Gemma 2: alternating sliding (window 8) and global layers, logit soft-capping,
    # query_pre_attn_scalar scale, final logit soft-capping.
    "gemma2": (transformers.Gemma2Config, transformers.Gemma2ForCausalLM, dict(
        max_position_embeddings=512, sliding_window=8, query_pre_attn_scalar=24,
        attn_logit_softcapping=2.0, final_logit_softcapping=30.0,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0})),
    # Phi-3: fused qkv and gate/up projections, longrope (short factors: the whole
    # run stays within the original context of 64).
    "phi3": (transformers.Phi3Config, transformers.Phi3ForCausalLM, dict(
        max_position_embeddings=256, original_max_position_embeddings=64,
        rope_parameters={"rope_type": "longrope", "rope_theta": 10000.0,
                         "short_factor": [1.0, 1.02, 1.05, 1.1, 1.2, 1.5, 2.0, 2.5],
                         "long_factor": [1.0, 1.25, 1.6, 2.2, 3.5, 6.0, 12.0, 24.0]})),
    # Llama with the default rotary embedding.
    "llama": (transformers.LlamaConfig, transformers.LlamaForCausalLM, dict(
        max_position_embeddings=256)),
    # Qwen3: RMS norms on Q and K per head before the rotation.
    "qwen3": (transformers.Qwen3Config, transformers.Qwen3ForCausalLM, dict(
        max_position_embeddings=256)),
    # Cohere: the interleaved pair layout, layer norm, logit scale.
    "cohere": (transformers.CohereConfig, transformers.CohereForCausalLM, dict(
        max_position_embeddings=256)),
    # Mixtral: a mixture of 4 experts, 2 per token (Hugging Face's grouped_mm
    # experts: a sort, a histc, grouped matmuls and a scatter between layers).
    "mixtral": (transformers.MixtralConfig, transformers.MixtralForCausalLM, dict(
        max_position_embeddings=256, num_local_experts=4, num_experts_per_tok=2)),
    # Qwen3-MoE: Qwen3's attention, a mixture of 4 experts in every layer.
    "qwen3_moe": (transformers.Qwen3MoeConfig, transformers.Qwen3MoeForCausalLM, dict(
        max_position_embeddings=256, num_experts=4, num_experts_per_tok=2,
        moe_intermediate_size=32, decoder_sparse_step=1)),
}

# Gemma 2's soft-cap needs HF's eager attention; the others take its default, SDPA.
ATTENTION = {"gemma2": "eager"}


def build(family: str, layers: int = 1, seed: int = 0, **overrides) -> torch.nn.Module:
    """The family's tiny model in eval mode, its weights drawn from `seed`;
    `overrides` replace config fields (heads, head dim, ...)."""
    config_cls, model_cls, extra = MODELS[family]
    config = config_cls(**{**COMMON, "num_hidden_layers": layers, **extra, **overrides})
    config._attn_implementation = ATTENTION.get(family, "sdpa")
    return instantiate(model_cls, config, seed)


def instantiate(model_cls, config, seed: int = 0) -> torch.nn.Module:
    """`model_cls(config)` in eval mode, its matrices drawn from N(0, 0.2)
    with `seed` (the module docstring says why 0.2)."""
    torch.manual_seed(seed)
    model = model_cls(config).eval()
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2:
                p.normal_(0.0, 0.2)
    return model


def prompts(batch: int, length: int, padding=None, generator=None) -> dict:
    """`generate`'s inputs for `batch` prompts of `length` tokens; with
    `padding` (one count per prompt), each prompt left-padded by its count
    (pad id 0) with the attention_mask that says so, as Hugging Face's
    tokenizers batch prompts of different lengths."""
    ids = torch.randint(1, 256, (batch, length), generator=generator)
    if padding is None:
        return {"input_ids": ids}
    mask = torch.ones_like(ids)
    for row, pad in enumerate(padding):
        ids[row, :pad] = 0
        mask[row, :pad] = 0
    return {"input_ids": ids, "attention_mask": mask}
