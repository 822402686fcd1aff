# REQUIRES: torch
# The sanitizer suite runs Llama alone (its compiler is the instrumented one).
# RUN: %if asan %{ env ROPE_BATCHED_MODELS=llama %} %else %{ env %} ROPE_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s %if asan %{ --check-prefix=ASAN %} %else %{ --check-prefixes=CHECK,ASAN %}
"""Batched `generate` through `torch.compile(backend="rope_mlir")`: several
prompts in one batch, as Hugging Face's `generate` is used in practice.

A batch of two prompts once corrupted the heap under `dynamic=True`
(`malloc(): unaligned tcache chunk detected`): with a symbolic batch,
torch-mlir lowered the view `[B, S, 64] -> [B·S, 64]` (whose size B·S it
read from the token ids, not from the viewed tensor) as a collapse of the
wrong dims and typed the hidden states `[B, 1, 64]`, so the RMS norm wrote S
rows into a buffer of one. The backend now gives torch-mlir such views as
`aten.flatten` (`views_as_flatten`), and every linalg op a frontend wrote
checks its extents at run time (`rope-insert-runtime-checks`), so a wrongly
typed operand is a `RuntimeCheckError`, never an out-of-bounds write.

For Llama (`dynamic=True` and `False`), Qwen3 and Cohere (`dynamic=True`;
tiny random configs, one layer, head dim 16, GQA 4/2): batches of 2 and 3
prompts, of equal length and left-padded to one (with their
`attention_mask`, as Hugging Face batches prompts of different lengths):

* the tokens are eager PyTorch's, exactly;
* every graph was compiled (a fallback to PyTorch warns: an error here);
* the decode graphs raised their attention to rope.attention.

A prefill with a batch above 1 is compiled, but its attention (Hugging
Face's masked SDPA, `_safe_softmax`) is not raised yet; that is printed.

Then a compiled graph is called, through the backend's own callable, with
an extent it was not compiled for: it raises RuntimeCheckError.
"""

import os
import warnings

import torch
import transformers

import rope_mlir.torch as rt
from rope_mlir import compiler
from rope_mlir.errors import RuntimeCheckError

NEW_TOKENS = 4
_COMMON = dict(hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
               intermediate_size=128, vocab_size=256, num_hidden_layers=1,
               max_position_embeddings=256, bos_token_id=None, eos_token_id=None,
               pad_token_id=0, tie_word_embeddings=False)
MODELS = {
    "llama": (transformers.LlamaConfig, transformers.LlamaForCausalLM),
    "qwen3": (transformers.Qwen3Config, transformers.Qwen3ForCausalLM),
    "cohere": (transformers.CohereConfig, transformers.CohereForCausalLM),
}
# (batch, left padding of each prompt: None for equal lengths, no mask)
BATCHES = [(2, None), (3, [0, 3, 1])]


def build(family):
    config_cls, model_cls = MODELS[family]
    config = config_cls(**_COMMON)
    config._attn_implementation = "sdpa"
    torch.manual_seed(0)
    model = model_cls(config).eval()
    with torch.no_grad():  # clear greedy choices (see torch_backend_generate.py)
        for p in model.parameters():
            if p.dim() >= 2:
                p.normal_(0.0, 0.2)
    return model


def inputs(batch, padding, g):
    ids = torch.randint(1, 256, (batch, 9), generator=g)
    if padding is None:
        return {"input_ids": ids}
    mask = torch.ones_like(ids)
    for row, pad in enumerate(padding):
        ids[row, :pad] = 0
        mask[row, :pad] = 0
    return {"input_ids": ids, "attention_mask": mask}


def generate(model, kwargs):
    with torch.no_grad():
        return model.generate(**kwargs, max_new_tokens=NEW_TOKENS, do_sample=False)


def check(family, dynamic):
    model = build(family)
    g = torch.Generator().manual_seed(2)
    cases = [(b, pad, inputs(b, pad, g)) for b, pad in BATCHES]
    eager = [generate(model, kw) for _, _, kw in cases]
    rt.clear_reports()
    model.compile(backend="rope_mlir", dynamic=dynamic)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fallback warns: fail instead
        compiled = [generate(model, kw) for _, _, kw in cases]
    for (b, pad, _), e, c in zip(cases, eager, compiled):
        assert torch.equal(e, c), f"{family} B={b} padding={pad}: {c.tolist()} != {e.tolist()}"
    graphs = rt.reports()
    assert graphs and all(r.compiled for r in graphs), [r.fallback for r in graphs]
    decode = [r for r in graphs if r.attentions]
    assert decode, f"{family}: no graph raised its attention: {graphs}"
    print(f"PASS {family} dynamic={dynamic}: {len(graphs)} graphs compiled, tokens equal for "
          f"batches {[b for b, _ in BATCHES]} (padded and not); rope.attention per graph: "
          f"{[r.attentions for r in graphs]}")
    torch._dynamo.reset()


class Recording:
    """A GraphFunction of the backend that keeps the arguments of its last
    call, so that the test can call its compiled callable directly."""

    def __init__(self, graph, example_inputs):
        self.function = rt.GraphFunction(graph, example_inputs, compiler._make_options(None, "cpu", {}))
        self.args = None

    def __call__(self, *args):
        self.args = args
        return self.function(*args)


def check_refused_extents(dynamic):
    """The backend's compiled callable of a prefill graph (batch 2) called
    with the token ids of a batch of 3: with a static batch, the extent it
    took from the example inputs; with a dynamic one, the relation between
    the token ids and the position ids. Both raise RuntimeCheckError from
    the callable itself, before anything is written."""
    from torch._dynamo.backends.common import aot_autograd
    from torch_mlir.extras.fx_decomp_util import get_decomposition_table

    recorded = []

    def forward(graph, example_inputs):
        recorded.append(Recording(graph, example_inputs))
        return recorded[-1]

    model = build("llama")
    fn = torch.compile(model, dynamic=dynamic, backend=aot_autograd(
        fw_compiler=forward, decompositions=get_decomposition_table()))
    with torch.no_grad():
        fn(torch.randint(1, 256, (2, 9)), position_ids=torch.arange(9).expand(2, 9))
    graph = recorded[0]
    run = next(iter(graph.function.variants.values()))
    args = list(graph.args)
    ids = next(i for i, a in enumerate(args) if isinstance(a, torch.Tensor)
               and a.dtype == torch.int64 and a.dim() == 2)
    args[ids] = torch.zeros((3, 9), dtype=torch.int64)
    try:
        run(*args)
    except RuntimeCheckError as e:
        print(f"PASS refused extent dynamic={dynamic}: {str(e).splitlines()[0][:200]}")
    else:
        raise AssertionError(f"dynamic={dynamic}: a graph called with a batch of 2 ran with 3")
    torch._dynamo.reset()


CASES = [("llama", True), ("llama", False), ("qwen3", True), ("cohere", True)]
FAMILIES = os.environ.get("ROPE_BATCHED_MODELS", ",".join(MODELS)).split(",")
for family, dynamic in CASES:
    if family in FAMILIES:
        check(family, dynamic)
check_refused_extents(dynamic=False)
check_refused_extents(dynamic=True)
print("done")

# ASAN: PASS llama dynamic=True:
# ASAN: PASS llama dynamic=False:
# CHECK: PASS qwen3 dynamic=True:
# CHECK: PASS cohere dynamic=True:
# ASAN: PASS refused extent dynamic=False:
# ASAN: PASS refused extent dynamic=True:
# ASAN: done
