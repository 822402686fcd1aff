# REQUIRES: torch
# Here with dynamic=True; torch_backend_batched_generate_static.test runs it
# with dynamic=False (two files: lit runs them side by side). The sanitizer
# suite runs Llama 3.1 alone, both ways (its compiler is the instrumented one).
# RUN: %if asan %{ env ROPE_BATCHED_MODELS=llama3.1 ROPE_BATCHED_DYNAMIC=1,0 %} %else %{ env ROPE_BATCHED_DYNAMIC=1 %} ROPE_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s %if asan %{ --check-prefixes=ASAN,COMMON %} %else %{ --check-prefixes=DYNAMIC,COMMON %}
"""Batched `generate` through `torch.compile(backend="rope_mlir")`: several
prompts in one batch, as Hugging Face's `generate` is used in practice.

A batch of two prompts once corrupted the heap under `dynamic=True`
(`malloc(): unaligned tcache chunk detected`): with a symbolic batch,
torch-mlir lowered the view `[B, S, 64] -> [B·S, 64]` (whose size B·S it
read from the token ids, not from the viewed tensor) as a collapse of the
wrong dims and typed the hidden states `[B, 1, 64]`, so the RMS norm wrote S
rows into a buffer of one. The backend now gives torch-mlir such views as
`aten.flatten` and `aten.unflatten` of the dims they merge and split
(`simplify_views`), and every linalg op a frontend wrote checks its extents
at run time (`rope-insert-runtime-checks`), so a wrongly typed operand is a
`RuntimeCheckError`, never an out-of-bounds write.

For every family of torch_backend_generate.py, and Qwen3 and Cohere (tiny
random configs, one layer, two for Gemma 2; head dim 16, GQA 4/2), with
`dynamic=True` and `dynamic=False`: batches of 2 and 3 prompts, of equal
length and left-padded to one (with their `attention_mask`, as Hugging Face
batches prompts of different lengths):

* the tokens are eager PyTorch's, exactly;
* every graph was compiled (a fallback to PyTorch warns: an error here);
* every graph raised each layer's attention to rope.attention (the prefill
  graphs with a dynamic batch too: Hugging Face's masked SDPA, its causal
  mask and'ed with the padding mask, and `_safe_softmax`), and each
  prefill graph folded the rotation of Q into it.

Then a compiled graph is called, through the backend's own callable, with
an extent it was not compiled for: it raises RuntimeCheckError; through the
GraphFunction that AOTAutograd calls, such a call runs in PyTorch instead,
with one warning.
"""

import os
import warnings

import torch

import rope_mlir.torch as rt
import tiny_decoders as D
from rope_mlir import compiler
from rope_mlir.errors import RuntimeCheckError

NEW_TOKENS = 4
LAYERS = {"gemma2": 2}  # else 1
# (batch, left padding of each prompt: None for equal lengths, no mask)
BATCHES = [(2, None), (3, [0, 3, 1])]
FAMILIES = ("llama3.1", "qwen2", "mistral", "gemma2", "phi3", "qwen3", "cohere")


def generate(model, kwargs):
    with torch.no_grad():
        return model.generate(**kwargs, max_new_tokens=NEW_TOKENS, do_sample=False)


def check(family, dynamic):
    layers = LAYERS.get(family, 1)
    model = D.build(family, layers=layers)
    g = torch.Generator().manual_seed(2)
    cases = [(b, pad, D.prompts(b, 9, pad, g)) for b, pad in BATCHES]
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
    assert all(r.attentions == layers for r in graphs), \
        f"{family}: rope.attention per graph {[r.attentions for r in graphs]}, {layers} expected"
    # A prefill graph is the one whose attention had the rotation of Q to fold.
    assert any(r.folded == layers for r in graphs), [r.folded for r in graphs]
    print(f"PASS {family} dynamic={dynamic}: {len(graphs)} graphs compiled, tokens equal for "
          f"batches {[b for b, _ in BATCHES]} (padded and not); rope.attention per graph: "
          f"{[r.attentions for r in graphs]}, folded: {[r.folded for r in graphs]}")
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

    model = D.build("llama")
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


def check_refusal_runs_in_pytorch():
    """The backend's GraphFunction (what AOTAutograd calls) of a graph
    compiled at 4 rows, called with 6: its compiled callable refuses them,
    and the call runs in PyTorch instead, with one warning per graph (the
    second refused call is silent); a call at 4 rows runs compiled again."""
    from torch.fx.experimental.proxy_tensor import make_fx

    def layer(x, w):
        return ((x @ w).relu(),)

    w = torch.randn(16, 8)
    x4, x6 = torch.randn(4, 16), torch.randn(6, 16)
    function = rt.GraphFunction(make_fx(layer)(x4, w), [x4, w],
                                compiler._make_options(None, "cpu", {}))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        at4 = function(x4, w)
        at6 = function(x6, w)
        again = function(x6, w)
        at4_again = function(x4, w)
    messages = [str(m.message) for m in caught]
    assert len(messages) == 1 and "refused its inputs" in messages[0], messages
    for out, x in ((at4, x4), (at6, x6), (again, x6), (at4_again, x4)):
        assert out[0].shape == (x.shape[0], 8) and torch.allclose(out[0], layer(x, w)[0], atol=1e-5)
    assert function.refused and len(function.variants) == 1
    print(f"PASS refused call runs in PyTorch: one warning ({messages[0][:70]}...)")


SELECTED = os.environ.get("ROPE_BATCHED_MODELS", ",".join(FAMILIES)).split(",")
MODES = [m == "1" for m in os.environ.get("ROPE_BATCHED_DYNAMIC", "1,0").split(",")]
for dynamic in MODES:
    for family in SELECTED:
        check(family, dynamic)
check_refused_extents(dynamic=False)
check_refused_extents(dynamic=True)
check_refusal_runs_in_pytorch()
print("done")

# DYNAMIC: PASS llama3.1 dynamic=True:
# DYNAMIC: PASS qwen2 dynamic=True:
# DYNAMIC: PASS mistral dynamic=True:
# DYNAMIC: PASS gemma2 dynamic=True:
# DYNAMIC: PASS phi3 dynamic=True:
# DYNAMIC: PASS qwen3 dynamic=True:
# DYNAMIC: PASS cohere dynamic=True:
# STATIC: PASS llama3.1 dynamic=False:
# STATIC: PASS qwen2 dynamic=False:
# STATIC: PASS mistral dynamic=False:
# STATIC: PASS gemma2 dynamic=False:
# STATIC: PASS phi3 dynamic=False:
# STATIC: PASS qwen3 dynamic=False:
# STATIC: PASS cohere dynamic=False:
# ASAN: PASS llama3.1 dynamic=True:
# ASAN: PASS llama3.1 dynamic=False:
# COMMON: PASS refused extent dynamic=False:
# COMMON: PASS refused extent dynamic=True:
# COMMON: PASS refused call runs in PyTorch: one warning
# COMMON: done
