# REQUIRES: torch
# Five models of ten graphs each take minutes on the sanitizer build; its run
# of torch_backend.py covers the backend there.
# UNSUPPORTED: asan
# RUN: env ROPE_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
"""`torch.compile(backend="rope_mlir")` under Hugging Face's `generate`.

For each model family (small random configs, no download): greedy
`generate` with the model's own KV cache, 16 new tokens from two prompts of
different lengths, eager PyTorch first, then the same model compiled in
place with `model.compile(backend="rope_mlir", dynamic=True)`:

* the tokens are eager PyTorch's, exactly;
* the logits of every step are within RTOL · max|eager logits| of eager's.
  Both compute in f32 with other summation orders (projections over 64-256
  terms, Q·Kᵀ over 16, P·V over up to 39 keys) and other exp/sin/cos/tanh;
  each op moves a logit by a few f32 ulps of its scale, and the layers
  (one, two for Gemma 2) plus the head add them up: measured 1e-6..5e-6
  (printed). RTOL = 1e-4 leaves 20x; a lost feature (the rotation, the
  window, the soft-cap) moves logits by 1e-1 of their scale (the frontend
  tier's `sensitive` checks);
* every graph was compiled (no fallback to PyTorch), every layer's
  attention was raised to rope.attention in the prefill and the decode
  graphs, and in the prefill graph the query's rotation is folded inside;
* the second prompt, of another length, reuses the compiled graphs
  (dynamic sequence length: no new graph).

Each model has one layer, except Gemma 2, which has two: its layers
alternate between a sliding window and global attention, and it is the
case of graphs holding several attentions (each raised, each folded).
A layer more in the other models would repeat the same layer's graph
(compiling a graph is most of this test's time, and it grows with the
layers): what the test checks of them is the family's own attention.
"""

import warnings

import torch
import transformers

import rope_mlir.torch as rt

RTOL = 1e-4
NEW_TOKENS = 16
PROMPTS = (7, 23)  # prompt lengths: the second is past Mistral's and Gemma 2's windows
LAYERS = {"gemma2": 2}  # else 1 (see above)

_COMMON = dict(hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
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
}


def build(family):
    config_cls, model_cls, extra = MODELS[family]
    config = config_cls(**{**_COMMON, "num_hidden_layers": LAYERS.get(family, 1), **extra})
    # HF's default (SDPA) where the model has it; Gemma 2's soft-cap needs eager.
    config._attn_implementation = "eager" if family == "gemma2" else "sdpa"
    torch.manual_seed(0)
    model = model_cls(config).eval()
    # Random weights of N(0, 0.02) give near-uniform logits, whose greedy
    # choice is decided by rounding; N(0, 0.2) makes the choice clear.
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2:
                p.normal_(0.0, 0.2)
    return model


def generate(model, prompt):
    with torch.no_grad():
        out = model.generate(prompt, max_new_tokens=NEW_TOKENS, do_sample=False,
                             output_logits=True, return_dict_in_generate=True)
    return out.sequences, torch.stack(out.logits)


def check(family):
    model = build(family)
    g = torch.Generator().manual_seed(1)
    prompts = [torch.randint(1, 256, (1, n), generator=g) for n in PROMPTS]
    eager = [generate(model, p) for p in prompts]
    rt.clear_reports()
    model.compile(backend="rope_mlir", dynamic=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fallback warns: fail instead
        compiled = [generate(model, p) for p in prompts]
    worst = 0.0
    for n, (tokens, logits), (ctokens, clogits) in zip(PROMPTS, eager, compiled):
        assert torch.equal(tokens, ctokens), \
            f"{family} prompt {n}: tokens {ctokens.tolist()}, eager {tokens.tolist()}"
        rel = float((clogits - logits).abs().max() / logits.abs().max())
        assert rel <= RTOL, f"{family} prompt {n}: logits differ by {rel:.2e} > {RTOL:.0e}"
        worst = max(worst, rel)
    graphs = rt.reports()
    assert graphs and all(r.compiled for r in graphs), [r.fallback for r in graphs]
    prefill, decode = graphs[0], graphs[-1]
    layers = LAYERS.get(family, 1)
    assert prefill.attentions == layers and prefill.folded == layers, prefill
    assert decode.attentions == layers, decode
    print(f"PASS {family}: {len(graphs)} graphs, tokens equal, max|logits - eager| / "
          f"max|eager| = {worst:.1e}; prefill: {prefill.attentions} rope.attention "
          f"({prefill.folded} with the rotation folded in), decode: {decode.attentions}")
    torch._dynamo.reset()


for family in MODELS:
    check(family)
print("done")

# CHECK: PASS llama3.1:
# CHECK: PASS qwen2:
# CHECK: PASS mistral:
# CHECK: PASS gemma2:
# CHECK: PASS phi3:
# CHECK: done
