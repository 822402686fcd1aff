"""The tiny Hugging Face models of the frontend test tier, in one place.

`export_models.py` exports each of them to `models/<name>.mlir`; the
run-and-compare tests (`compare.py`) rebuild the same model from the same
config and seed and run PyTorch on it. Nothing is downloaded: every model is
a transformers class built from a small config with seeded random weights.

    import zoo
    module = zoo.build("llama_attn_eager")          # torch.nn.Module
    hs = zoo.hidden_states("llama_attn_eager")      # [1, S, hidden], seeded N(0, 1)
    ids = zoo.position_ids(zoo.SPREAD)              # [1, S]
    out = module(hs, ids)                            # [1, S, hidden]

Each module is a `Wrapper`: `forward(hidden_states [1, S, hidden] f32,
position_ids [1, S] i64) -> [1, S, hidden] f32`. It computes cos/sin inside
with the model's own rotary embedding (GPT-J: its own sin/cos cache, gathered
by position ids), the attention mask inside with transformers' own mask
functions (causal, or causal with a sliding window), and returns the output
of one attention layer (or of a whole decoder layer).

Weights. HF's default initialisation (std 0.02) makes every logit tiny, so
attention would be almost uniform and neither the rotation nor soft-capping
would change the output much: a test could then pass with either wrong.
Instead every matrix is N(0, 1/fan_in) and every bias N(0, 0.1²) (norm weights
1 + N(0, 0.1²)), drawn from `torch.manual_seed(seed)` in parameter order, and
the hidden states are N(0, 1): queries and keys are then O(1), logits O(1),
and the attention pattern depends strongly on the positions.

This module imports torch and transformers only inside functions, so
`MODELS` (names, files, positions, what each exercises) is readable from the
interpreter that has neither.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODEL_DIR = HERE / "models"


@dataclass(frozen=True)
class Model:
    name: str
    family: str            # llama, qwen2, phi3, gpt_neox, gptj, mistral, gemma2
    what: str              # one line: what this export exercises
    config: dict           # keyword arguments of the transformers config class
    attn: str = "eager"    # attn_implementation
    layer: str = "attention"  # "attention" (one attention module) or "decoder"
    layer_idx: int = 0
    seed: int = 0
    seq: int = 12
    # Sequences per call (the hidden states' leading dim; the mask and the
    # position ids broadcast over it).
    batch: int = 1
    # The weights' and activations' type: "f32", "bf16" or "f16".
    dtype: str = "f32"
    # Left padding of each sequence (one entry per batch row): the model then
    # takes a [batch, S] boolean attention_mask (True: a real token) as a
    # third input, as HF's tokenizers pad a batch. () for none.
    padding: tuple = ()
    # torch-mlir's output type: "linalg-on-tensors" or "tosa".
    output: str = "linalg-on-tensors"
    # Exported with a dynamic sequence length (torch.export Dim on the
    # hidden states, the position ids and the attention mask): one module
    # for every length; the position sets then come in several lengths.
    dynamic: bool = False
    # The position id sets the tests run, by label (each `seq` long, increasing);
    # the first is the one the export traces with.
    positions: dict = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return MODEL_DIR / f"{self.name}.mlir"


# Sequence length 12, unlike every head dim (16): an S×S score matrix is then
# told apart from a [S, D] product by its type.
S = 12

# Two position sets for every model: the prompt 0..S-1, and S distinct sorted
# positions with gaps (relative offsets 1..13 between neighbours), so that the
# rotation is exercised at many relative distances. Positions stay below 64:
# PyTorch forms the phase p·inv_freq in f32 (error ~p·2^-24 rad) and rope-mlir
# in f64 once a rotation is raised to a spec, so large p would measure
# PyTorch's rounding, not ours.
PROMPT = tuple(range(S))
SPREAD = (0, 1, 3, 7, 12, 13, 20, 28, 35, 41, 50, 63)
POSITIONS = {"prompt": PROMPT, "spread": SPREAD}

# Llama 3.1's rope block (theta 5e5, factor 8, low/high 1/4) with an original
# context of 256 instead of 8192, scaled down like the rest of the model: the
# bands of the llama3 rule (wavelength < 64 kept, > 256 divided by 8, between
# them smoothed) then all fall among the 8 frequencies of head dim 16 and
# change the output at the positions < 64 the tests use.
_LLAMA = dict(
    hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
    intermediate_size=128, num_hidden_layers=1, vocab_size=32, max_position_embeddings=2048,
    rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
                     "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                     "original_max_position_embeddings": 256},
)

# Phi-3 longrope: the short factors apply while max(position) + 1 <= 32, the
# long ones beyond: `prompt` and `short` take the short factors, `spread` the
# long ones.
PHI3_ORIG = 32
PHI3_SHORT = (0, 1, 3, 5, 8, 9, 13, 17, 20, 24, 27, 31)

# A dynamically shaped export runs at three lengths: the two sets of 12 and
# prompts of 29 and 48 tokens (positions stay below 64, as above).
DYNAMIC_POSITIONS = {"prompt": PROMPT, "spread": SPREAD, "prompt29": tuple(range(29)),
                     "prompt48": tuple(range(48))}

# Prompts of 512 tokens: 4 heads · 512² = 1M mask elements, far above what
# raising could once afford to evaluate element by element (2^16).
LONG = 512
LONG_POSITIONS = {"prompt": tuple(range(LONG))}

_GPTJ = dict(n_embd=64, n_head=4, rotary_dim=8, n_layer=1, n_positions=64, vocab_size=32,
             bos_token_id=None, eos_token_id=None)
_NEOX = dict(hidden_size=64, num_attention_heads=4, intermediate_size=128, num_hidden_layers=1,
             vocab_size=32, max_position_embeddings=2048,
             rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                              "partial_rotary_factor": 0.5})

_MODELS = [
    Model("llama_attn_eager", "llama",
          "Llama 3.1 attention: llama3 frequency scaling (theta 5e5, factor 8, original 256), GQA 4/2, "
          "HF's eager attention (matmul, scale, additive causal mask, softmax, matmul)",
          _LLAMA, positions=POSITIONS),
    Model("llama_attn_sdpa", "llama",
          "the same Llama attention with attn_implementation='sdpa' "
          "(torch's scaled_dot_product_attention, is_causal)",
          _LLAMA, attn="sdpa", positions=POSITIONS),
    Model("llama_attn_tosa", "llama",
          "the eager Llama attention exported as tosa (tosa.matmul, tosa.reduce_max/"
          "reduce_sum/reciprocal softmax, causal mask built by tosa.greater_equal/select, "
          "repeat_kv through tosa.tile/reshape)",
          _LLAMA, output="tosa", positions=POSITIONS),
    Model("llama_decoder_layer", "llama",
          "a whole LlamaDecoderLayer: RMSNorm, the eager attention above, residual, "
          "RMSNorm, SwiGLU MLP, residual",
          _LLAMA, layer="decoder", positions=POSITIONS),
    Model("qwen2_attn", "qwen2",
          "Qwen2 attention: YaRN (factor 4, original 32768, theta 1e6; ramp across the "
          "frequencies, attention factor 0.1 ln 4 + 1), q/k/v biases, GQA 4/2",
          dict(hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
               intermediate_size=128, num_hidden_layers=1, vocab_size=32,
               max_position_embeddings=131072,
               rope_parameters={"rope_type": "yarn", "rope_theta": 1000000.0, "factor": 4.0,
                                "original_max_position_embeddings": 32768}),
          positions=POSITIONS),
    Model("phi3_attn", "phi3",
          "Phi-3 attention: longrope with short and long factor lists (switch when "
          f"max position + 1 > {PHI3_ORIG}), attention factor sqrt(1 + ln 4 / ln 32), fused qkv, GQA 4/2",
          dict(hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
               intermediate_size=128, num_hidden_layers=1, vocab_size=32,
               bos_token_id=None, eos_token_id=None, pad_token_id=None,
               max_position_embeddings=4 * PHI3_ORIG, original_max_position_embeddings=PHI3_ORIG,
               rope_parameters={"rope_type": "longrope", "rope_theta": 10000.0,
                                "short_factor": [1.0, 1.02, 1.05, 1.1, 1.2, 1.5, 2.0, 2.5],
                                "long_factor": [1.0, 1.25, 1.6, 2.2, 3.5, 6.0, 12.0, 24.0]}),
          positions={"prompt": PROMPT, "short": PHI3_SHORT, "spread": SPREAD}),
    Model("gpt_neox_attn", "gpt_neox",
          "GPT-NeoX attention: partial rotary (rotary_pct 0.5 of head dim 16: 8 dims, "
          "half layout), fused qkv with bias, MHA 4",
          _NEOX,
          positions=POSITIONS),
    Model("gptj_attn", "gptj",
          "GPT-J attention: interleaved pairs (rotate_every_two), rotary_dim 8 of head dim 16, "
          "sin/cos cache gathered by position ids, scores divided by sqrt(D)",
          _GPTJ,
          positions=POSITIONS),
    Model("mistral_attn", "mistral",
          "Mistral attention: sliding window 4 (query at i sees keys i-3..i), theta 1e6, GQA 4/2",
          dict(hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
               intermediate_size=128, num_hidden_layers=1, vocab_size=32,
               max_position_embeddings=4096, sliding_window=4,
               rope_parameters={"rope_type": "default", "rope_theta": 1000000.0}),
          positions=POSITIONS),
    Model("gemma2_attn_sliding", "gemma2",
          "Gemma 2 attention, layer 0 (a sliding-window layer, window 4): logit soft-capping "
          "c·tanh(logits/c) with c = 2, scale query_pre_attn_scalar^-1/2 = 24^-1/2, GQA 4/2",
          dict(hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
               intermediate_size=128, num_hidden_layers=2, vocab_size=32,
               max_position_embeddings=4096, sliding_window=4, query_pre_attn_scalar=24,
               attn_logit_softcapping=2.0,
               rope_parameters={"rope_type": "default", "rope_theta": 10000.0}),
          layer_idx=0, positions=POSITIONS),
    Model("llama_attn_eager_s512", "llama",
          "the eager Llama attention (GQA 4/2) at a 512-token prompt: HF's causal mask "
          "over 512² elements",
          _LLAMA, seq=LONG, positions=LONG_POSITIONS),
    Model("llama_attn_eager_b2", "llama",
          "the eager Llama attention (GQA 4/2) on a batch of 2 sequences: the batched "
          "products run over batch·heads, and repeat_kv's collapse and expand spell "
          "the kv head of each in other terms",
          _LLAMA, batch=2, positions=POSITIONS),
    Model("llama_attn_eager_pad", "llama",
          "the eager Llama attention (GQA 4/2) on a batch of 2 with the second sequence "
          "left-padded by 3: HF's [B, S] attention_mask and-ed with the causal mask",
          _LLAMA, batch=2, padding=(0, 3), positions=POSITIONS),
    Model("llama_attn_eager_bf16", "llama",
          "the eager Llama attention (GQA 4/2) in bf16: products accumulated in f32 and "
          "rounded to bf16, the softmax in f32 between casts",
          _LLAMA, dtype="bf16", positions=POSITIONS),
    Model("llama_attn_tosa_s512", "llama",
          "the eager Llama attention exported as tosa at a 512-token prompt: the causal "
          "mask from tosa.greater_equal of arange constants over 512² elements",
          _LLAMA, output="tosa", seq=LONG, positions=LONG_POSITIONS),
    Model("llama_attn_eager_f16", "llama",
          "the eager Llama attention (GQA 4/2) in f16, as the bf16 one",
          _LLAMA, dtype="f16", positions=POSITIONS),
    Model("gptj_attn_s512", "gptj",
          "the GPT-J attention (interleaved pairs, rotary_dim 8 of 16) at a 512-token prompt",
          dict(_GPTJ, n_positions=LONG),
          seq=LONG, positions=LONG_POSITIONS),
    Model("gpt_neox_attn_s512", "gpt_neox",
          "the GPT-NeoX attention (partial rotary, 8 of 16 dims) at a 512-token prompt",
          _NEOX,
          seq=LONG, positions=LONG_POSITIONS),
    Model("gptj_attn_tosa", "gptj",
          "the GPT-J attention exported as tosa: x[..., ::2] as tosa.gather at constant "
          "indices, the sin/cos cache gathered flattened at p·8 + column, "
          "repeat_interleave as reshape + tosa.tile",
          _GPTJ, output="tosa", positions=POSITIONS),
    Model("gpt_neox_attn_tosa", "gpt_neox",
          "the GPT-NeoX attention (partial rotary) exported as tosa",
          _NEOX, output="tosa", positions=POSITIONS),
    Model("gptj_attn_pad", "gptj",
          "the GPT-J attention on a batch of 2 with the second sequence left-padded by 3 "
          "(an attention_mask input)",
          _GPTJ, batch=2, padding=(0, 3), positions=POSITIONS),
    Model("gpt_neox_attn_pad", "gpt_neox",
          "the GPT-NeoX attention on a batch of 2 with the second sequence left-padded by 3 "
          "(an attention_mask input)",
          _NEOX, batch=2, padding=(0, 3), positions=POSITIONS),
    Model("gptj_attn_bf16", "gptj",
          "the GPT-J attention in bf16 (its sin/cos cache in bf16 too)",
          _GPTJ, dtype="bf16", positions=POSITIONS),
    Model("gpt_neox_attn_bf16", "gpt_neox",
          "the GPT-NeoX attention in bf16",
          _NEOX, dtype="bf16", positions=POSITIONS),
    Model("llama_attn_eager_dyn", "llama",
          "the eager Llama attention (GQA 4/2) exported with a dynamic sequence length: "
          "repeat_kv and the mask's broadcasts as tensor.extract gathers guarded by "
          "size-1 tests, the views as tensor.reshape of computed shapes",
          _LLAMA, dynamic=True, positions=DYNAMIC_POSITIONS),
    Model("gptj_attn_dyn", "gptj",
          "the GPT-J attention (interleaved, partial) exported with a dynamic sequence length",
          _GPTJ, dynamic=True, positions=DYNAMIC_POSITIONS),
    Model("gpt_neox_attn_dyn", "gpt_neox",
          "the GPT-NeoX attention (partial rotary) exported with a dynamic sequence length",
          _NEOX, dynamic=True, positions=DYNAMIC_POSITIONS),
    Model("llama_attn_eager_pad_dyn", "llama",
          "the padded batch of two (GQA, attention_mask input) exported with a dynamic "
          "sequence length",
          _LLAMA, batch=2, padding=(0, 3), dynamic=True, positions=DYNAMIC_POSITIONS),
    Model("gemma2_attn_global", "gemma2",
          "Gemma 2 attention, layer 1 (a global layer: causal, no window), "
          "logit soft-capping c = 2, scale 24^-1/2",
          dict(hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
               intermediate_size=128, num_hidden_layers=2, vocab_size=32,
               max_position_embeddings=4096, sliding_window=4, query_pre_attn_scalar=24,
               attn_logit_softcapping=2.0,
               rope_parameters={"rope_type": "default", "rope_theta": 10000.0}),
          layer_idx=1, positions=POSITIONS),
]

MODELS: dict[str, Model] = {m.name: m for m in _MODELS}


def get(name: str) -> Model:
    if name not in MODELS:
        raise KeyError(f"name: unknown model {name!r}; known: {', '.join(MODELS)}")
    return MODELS[name]


# ---------------------------------------------------------------------------
# Building the modules (needs torch and transformers)
# ---------------------------------------------------------------------------


def _classes(family: str):
    """(config class, attention class, decoder layer class, rotary class or None)."""
    import transformers
    from transformers.models.gemma2 import modeling_gemma2
    from transformers.models.gpt_neox import modeling_gpt_neox
    from transformers.models.gptj import modeling_gptj
    from transformers.models.llama import modeling_llama
    from transformers.models.mistral import modeling_mistral
    from transformers.models.phi3 import modeling_phi3
    from transformers.models.qwen2 import modeling_qwen2

    table = {
        "llama": (transformers.LlamaConfig, modeling_llama.LlamaAttention,
                  modeling_llama.LlamaDecoderLayer, modeling_llama.LlamaRotaryEmbedding),
        "qwen2": (transformers.Qwen2Config, modeling_qwen2.Qwen2Attention,
                  modeling_qwen2.Qwen2DecoderLayer, modeling_qwen2.Qwen2RotaryEmbedding),
        "phi3": (transformers.Phi3Config, modeling_phi3.Phi3Attention,
                 modeling_phi3.Phi3DecoderLayer, modeling_phi3.Phi3RotaryEmbedding),
        "gpt_neox": (transformers.GPTNeoXConfig, modeling_gpt_neox.GPTNeoXAttention,
                     modeling_gpt_neox.GPTNeoXLayer, modeling_gpt_neox.GPTNeoXRotaryEmbedding),
        "gptj": (transformers.GPTJConfig, modeling_gptj.GPTJAttention,
                 modeling_gptj.GPTJBlock, None),
        "mistral": (transformers.MistralConfig, modeling_mistral.MistralAttention,
                    modeling_mistral.MistralDecoderLayer, modeling_mistral.MistralRotaryEmbedding),
        "gemma2": (transformers.Gemma2Config, modeling_gemma2.Gemma2Attention,
                   modeling_gemma2.Gemma2DecoderLayer, modeling_gemma2.Gemma2RotaryEmbedding),
    }
    if family not in table:
        raise KeyError(f"family: unknown model family {family!r}")
    return table[family]


def make_config(model: Model):
    """The transformers config object of `model`, with its attention implementation."""
    import copy
    config_cls = _classes(model.family)[0]
    cfg = config_cls(**copy.deepcopy(model.config))
    cfg._attn_implementation = model.attn
    return cfg


def sliding_window(model: Model, cfg) -> int | None:
    """The window of the exported layer as transformers applies it (None: causal only)."""
    if model.family == "mistral":
        return cfg.sliding_window
    layer_types = getattr(cfg, "layer_types", None)
    if layer_types and layer_types[model.layer_idx] == "sliding_attention":
        return cfg.sliding_window
    return None


def _init_weights(module, seed: int, family: str) -> None:
    import torch
    torch.manual_seed(seed)
    with torch.no_grad():
        for name, p in module.named_parameters():
            if p.dim() >= 2:
                p.normal_(0.0, 1.0 / math.sqrt(p.shape[-1]))
            elif "norm" in name:
                p.normal_(0.0, 0.1)
                if family != "gemma2":
                    p.add_(1.0)  # Gemma's RMSNorm multiplies by (1 + w)
            else:
                p.normal_(0.0, 0.1)


def _wrapper_class():
    import torch
    from transformers import masking_utils

    class Wrapper(torch.nn.Module):
        """forward(hidden_states [1, S, H], position_ids [1, S]) -> [1, S, H]."""

        def __init__(self, model: Model):
            super().__init__()
            self.model = model
            self.cfg = make_config(model)
            config_cls, attn_cls, layer_cls, rotary_cls = _classes(model.family)
            if model.layer == "decoder":
                self.layer = layer_cls(self.cfg, layer_idx=model.layer_idx)
            else:
                self.layer = attn_cls(self.cfg, layer_idx=model.layer_idx)
            self.rotary = rotary_cls(self.cfg) if rotary_cls is not None else None
            self.window = sliding_window(model, self.cfg)
            # HF registers inv_freq (and GPT-J its sin/cos cache) as non-persistent
            # buffers; torch.export puts those among its constants, where torch-mlir's
            # importer does not look for buffers. Persistent ones it imports as
            # dense_resource constants. The values are the same.
            for sub in self.modules():
                sub._non_persistent_buffers_set.clear()

        def mask(self, hidden_states, attention_mask=None):
            """HF's additive eager mask [B, 1, S, S]: 0 where visible, finfo.min
            elsewhere (also at padded keys when there is an attention_mask)."""
            if self.model.attn == "sdpa":
                return None  # HF's sdpa path then calls SDPA with is_causal=True
            S = hidden_states.shape[1]
            fn = (masking_utils.causal_mask_function if self.window is None
                  else masking_utils.sliding_window_causal_mask_function(self.window))
            return masking_utils.eager_mask(batch_size=hidden_states.shape[0], q_length=S,
                                            kv_length=S, mask_function=fn,
                                            attention_mask=attention_mask,
                                            dtype=hidden_states.dtype, device=hidden_states.device)

        def forward(self, hidden_states, position_ids, attention_mask=None):
            mask = self.mask(hidden_states, attention_mask)
            if self.model.family == "gptj":
                out, _ = self.layer(hidden_states, attention_mask=mask, position_ids=position_ids)
                return out
            cos_sin = self.rotary(hidden_states, position_ids)
            if self.model.layer == "decoder":
                return self.layer(hidden_states, attention_mask=mask, position_embeddings=cos_sin)
            out, _ = self.layer(hidden_states, attention_mask=mask, position_embeddings=cos_sin)
            return out

    return Wrapper


def build(name: str):
    """The wrapper module of model `name`, in eval mode, with its seeded weights."""
    return build_model(get(name))


def build_model(model: Model):
    """`build` for a `Model` (e.g. one with a changed config: same seed, so the
    same weights as long as the parameter shapes are the same)."""
    import transformers
    # Tiny configs draw advice meant for real checkpoints (e.g. Phi-3's
    # longrope factor taken from the context lengths, as Phi-3's own configs do).
    transformers.logging.set_verbosity_error()
    import torch
    module = _wrapper_class()(model).eval()
    _init_weights(module, model.seed, model.family)
    if model.dtype != "f32":
        module = module.to(torch_dtype(model.dtype))
    return module


def hidden_states(name: str, seq: int | None = None):
    """The f32 N(0, 1) hidden states [batch, S, hidden] the tests feed `name`
    (seeded; S = `seq`, by default the model's)."""
    import torch
    model = get(name)
    g = torch.Generator().manual_seed(1000 + model.seed)
    hidden = model.config.get("hidden_size") or model.config["n_embd"]
    hs = torch.randn(model.batch, seq or model.seq, hidden, generator=g, dtype=torch.float32)
    return hs.to(torch_dtype(model.dtype))


def torch_dtype(dtype: str):
    """The torch dtype of a model's `dtype`."""
    import torch
    return {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}[dtype]


def attention_mask(name: str, seq: int | None = None):
    """The [batch, S] boolean attention_mask of `name` (True: a real token, the
    first `padding[b]` of row b are padding; S = `seq`, by default the
    model's), or None without padding."""
    import torch
    model = get(name)
    if not model.padding:
        return None
    mask = torch.ones(model.batch, seq or model.seq, dtype=torch.bool)
    for b, pad in enumerate(model.padding):
        mask[b, :pad] = False
    return mask


def position_ids(positions):
    import torch
    ids = torch.tensor([list(positions)], dtype=torch.int64)
    if ids.dim() != 2 or not bool((ids[0, 1:] > ids[0, :-1]).all()):
        raise ValueError(f"positions: expected increasing position ids, got {list(positions)}")
    return ids


def weights_digest(module) -> str:
    """sha256 of every parameter and buffer (name, shape, f32 bytes), in state-dict order:
    recorded in each exported file, so a test can tell whether it rebuilt the
    weights that the file holds."""
    import torch
    h = hashlib.sha256()
    for key, t in module.state_dict().items():
        h.update(key.encode())
        h.update(str(tuple(t.shape)).encode())
        t = t.detach().contiguous().cpu()
        # numpy has no bf16: its bits as int16.
        h.update((t.view(torch.int16) if t.dtype == torch.bfloat16 else t).numpy().tobytes())
    return h.hexdigest()


def recorded_digest(text: str) -> str | None:
    """The weights digest in the header of an exported file, or None."""
    for line in text.splitlines()[:40]:
        if line.startswith("// weights-sha256: "):
            return line.split(":", 1)[1].strip()
    return None
