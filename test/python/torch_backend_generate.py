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

import rope_mlir.torch as rt
import tiny_decoders as D

RTOL = 1e-4
NEW_TOKENS = 16
PROMPTS = (7, 23)  # prompt lengths: the second is past Mistral's and Gemma 2's windows
LAYERS = {"gemma2": 2}  # else 1 (see above)
FAMILIES = ("llama3.1", "qwen2", "mistral", "gemma2", "phi3")


def build(family):
    return D.build(family, layers=LAYERS.get(family, 1))


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


for family in FAMILIES:
    check(family)
print("done")

# CHECK: PASS llama3.1:
# CHECK: PASS qwen2:
# CHECK: PASS mistral:
# CHECK: PASS gemma2:
# CHECK: PASS phi3:
# CHECK: done
