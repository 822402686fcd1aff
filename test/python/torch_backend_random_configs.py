# REQUIRES: torch
# Two dozen models of two graphs each take minutes on the sanitizer build;
# its run of torch_backend_batched_generate.py covers batches there.
# UNSUPPORTED: asan
# RUN: env ROPE_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
"""A differential test of the `torch.compile` backend over random shapes.

Each case draws a family (Llama, Qwen2, Mistral, Qwen3, Cohere, Gemma 2),
the heads, kv heads (a divisor of the heads: MHA, GQA and MQA), the head
dim, the layers, Mistral's and Gemma 2's window, the batch, the prompt
length and each prompt's left padding (with its attention_mask), and
`dynamic` (True or False); it builds the tiny random model, runs greedy
`generate` for 3 new tokens eagerly and through
`model.compile(backend="rope_mlir", dynamic=...)` (a prefill graph and
decode graphs over the model's cache), and checks:

* the tokens are eager PyTorch's;
* the logits of every step are within RTOL · max|eager logits| of
  eager's (as in torch_backend_generate.py: both in f32, other summation
  orders; measured up to ~5e-6, RTOL = 1e-4);
* every graph was compiled, none fell back to PyTorch, and every graph
  raised each layer's attention to rope.attention.

The first case is fixed (a batch of one-token prompts at a dynamic batch);
the draws are seeded (ROPE_RANDOM_CONFIGS_SEED, default 0; ROPE_RANDOM_CONFIGS_CASES
cases, default 24): a failing case prints its draw, which reproduces it alone.
"""

import os
import random
import warnings

import torch

import rope_mlir.torch as rt
import tiny_decoders as D

RTOL = 1e-4
NEW_TOKENS = 3
FAMILIES = ("llama", "qwen2", "mistral", "qwen3", "cohere", "gemma2")


def draw(rng: random.Random) -> dict:
    heads = rng.choice([1, 2, 4, 8])
    kv_heads = rng.choice([d for d in range(1, heads + 1) if heads % d == 0])
    head_dim = rng.choice([8, 16, 32])
    family = rng.choice(FAMILIES)
    batch = rng.choice([1, 2, 3])
    length = rng.randint(1, 20)
    case = dict(family=family, heads=heads, kv_heads=kv_heads, head_dim=head_dim,
                layers=rng.choice([1, 2]), batch=batch, length=length,
                padding=None, dynamic=rng.choice([True, False]))
    if rng.random() < 0.6:
        # At least one token of each prompt is kept (HF's masking of a row
        # with no key at all is its own choice of NaN or zeros).
        case["padding"] = [rng.randint(0, length - 1) for _ in range(batch)]
    if family in ("mistral", "gemma2"):
        case["window"] = rng.randint(2, 24)
    return case


def build(case: dict) -> torch.nn.Module:
    overrides = dict(num_attention_heads=case["heads"], num_key_value_heads=case["kv_heads"],
                     head_dim=case["head_dim"], hidden_size=case["heads"] * case["head_dim"])
    if "window" in case:
        overrides["sliding_window"] = case["window"]
    return D.build(case["family"], layers=case["layers"], **overrides)


def generate(model, kwargs):
    with torch.no_grad():
        out = model.generate(**kwargs, max_new_tokens=NEW_TOKENS, do_sample=False,
                             output_logits=True, return_dict_in_generate=True)
    return out.sequences, torch.stack(out.logits)


def run(case: dict, seed: int) -> float:
    model = build(case)
    g = torch.Generator().manual_seed(seed)
    kwargs = D.prompts(case["batch"], case["length"], case["padding"], g)
    tokens, logits = generate(model, kwargs)
    rt.clear_reports()
    model.compile(backend="rope_mlir", dynamic=case["dynamic"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fallback warns: fail instead
        ctokens, clogits = generate(model, kwargs)
    assert torch.equal(tokens, ctokens), f"tokens {ctokens.tolist()}, eager {tokens.tolist()}"
    rel = float((clogits - logits).abs().max() / logits.abs().max())
    assert rel <= RTOL, f"logits differ by {rel:.2e} > {RTOL:.0e}"
    graphs = rt.reports()
    assert graphs and all(r.compiled for r in graphs), [r.fallback for r in graphs]
    assert all(r.attentions == case["layers"] for r in graphs), \
        f"rope.attention per graph: {[r.attentions for r in graphs]}"
    torch._dynamo.reset()
    return rel


seed = int(os.environ.get("ROPE_RANDOM_CONFIGS_SEED", "0"))
count = int(os.environ.get("ROPE_RANDOM_CONFIGS_CASES", "24"))
rng = random.Random(seed)
worst = 0.0
families = set()
# Before the draws, a one-token prompt in a batch of two at a dynamic batch:
# the prefill attends over one key, its every softmax reduction one element.
FIXED = dict(family="qwen3", heads=1, kv_heads=1, head_dim=32, layers=1, batch=2, length=1,
             padding=None, dynamic=True)
worst = run(FIXED, seed * 1000 + 999)
print(f"fixed case: {FIXED}")
for index in range(count):
    case = draw(rng)
    try:
        worst = max(worst, run(case, seed * 1000 + index))
    except Exception:
        print(f"FAIL case {index} of seed {seed}: {case}")
        raise
    families.add(case["family"])
    print(f"case {index}: {case}")
print(f"PASS {count} random configs (seed {seed}, {len(families)} families): tokens equal, "
      f"every graph compiled with its attention raised, max|logits - eager| / max|eager| "
      f"= {worst:.1e}")

# CHECK: PASS 24 random configs
