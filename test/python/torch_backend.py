# REQUIRES: torch
# RUN: rm -rf %t && env ROPE_MLIR_CACHE_DIR=%t/cache ROPE_MLIR_DUMP_DIR=%t/dump %torch_python %s | FileCheck %s
"""The `rope_mlir` torch.compile backend's mechanics, one property each
(torch_backend_generate.py runs whole models under `generate`):

* the name: `backend="rope_mlir"` after `import rope_mlir.torch`;
* parameters are arguments of the compiled function, never constants in
  the IR: a Llama decoder layer's imported IR has no dense_resource blob;
  their descriptors, kept between calls, follow a parameter given new
  memory or new values, and a non-contiguous input is read as it is;
* dynamic=True: one compiled graph serves three prompt lengths, and an
  integer input no tensor carries (a Python int offset) is passed as a 0-d
  tensor; outputs equal eager within 1e-5 of their scale (f32, other
  summation orders over 64 terms);
* several outputs, one of them a size (not a tensor), come back in order;
* the disk cache: after the in-memory cache and Dynamo are reset, the same
  graph is loaded from disk (report.cached) and gives the same output;
* options reach the pipeline (`options={"runtime_checks": False}`);
* what torch-mlir cannot lower (aten.special_bessel_j0) or lowers to a
  dialect rope-mlir does not take (cumprod: TMTensor's scan) runs in PyTorch
  with one warning naming it, the rest of its graph compiled around it
  (test/python/torch_backend_split.py tests the split), and the result is
  PyTorch's.
"""

import warnings
from pathlib import Path
import os

import torch
import transformers

import rope_mlir.torch as rt

RTOL = 1e-5


def close(a, b, what):
    rel = float((a - b).abs().max() / b.abs().max())
    assert rel <= RTOL, f"{what}: {rel:.2e} > {RTOL:.0e}"
    return rel


def fresh():
    torch._dynamo.reset()
    rt.clear_reports()


# A Llama decoder layer at three lengths, with positions offset by a Python int.
config = transformers.LlamaConfig(hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                                  head_dim=16, intermediate_size=128, num_hidden_layers=1,
                                  vocab_size=32, max_position_embeddings=512)
config._attn_implementation = "sdpa"
torch.manual_seed(0)
layer = transformers.models.llama.modeling_llama.LlamaDecoderLayer(config, 0).eval()
rotary = transformers.models.llama.modeling_llama.LlamaRotaryEmbedding(config)


def block(x, offset: int):
    pos = torch.arange(x.shape[1]).unsqueeze(0) + offset
    return layer(x, position_embeddings=rotary(x, pos), position_ids=pos)


fresh()
compiled = torch.compile(block, backend="rope_mlir", dynamic=True)
with torch.no_grad():
    worst = 0.0
    for s, offset in ((9, 3), (17, 5), (30, 0)):
        x = torch.randn(1, s, 64)
        worst = max(worst, close(compiled(x, offset), block(x, offset), f"block S={s}"))
graphs = rt.reports()
assert len(graphs) == 1 and graphs[0].compiled, graphs
print(f"PASS dynamic: one graph for S = 9, 17, 30 (rope.attention {graphs[0].attentions}), "
      f"max err {worst:.1e}")
# CHECK: PASS dynamic: one graph for S = 9, 17, 30 (rope.attention 1)

parameters = sum(1 for _ in layer.parameters())
linalg = (Path(os.environ["ROPE_MLIR_DUMP_DIR"]) / "graph0.linalg.mlir").read_text()
assert "dense_resource" not in linalg, "a weight became a constant of the IR"
assert graphs[0].arguments >= parameters + 1, graphs[0]
print(f"PASS parameters: {graphs[0].arguments} arguments for {parameters} parameters "
      "and the input, no constant blob")
# CHECK: PASS parameters:

# Argument descriptors are kept per position while the same memory comes back
# (the parameters); a parameter given new memory, or new values in place, and
# a non-contiguous input are read as they are now.
with torch.no_grad():
    x = torch.randn(1, 9, 64)
    proj = layer.self_attn.q_proj
    saved = proj.weight.data
    proj.weight.data = torch.randn_like(saved) * 0.1  # new memory, same shape
    close(compiled(x, 3), block(x, 3), "new weight memory")
    proj.weight.data.mul_(-1.0)  # same memory, new values
    close(compiled(x, 3), block(x, 3), "weight changed in place")
    assert len(rt.reports()) == 1, rt.reports()  # both through the one graph
    wide = torch.randn(1, 64, 9).transpose(1, 2)  # not contiguous
    close(compiled(wide, 1), block(wide.contiguous(), 1), "non-contiguous input")
    proj.weight.data = saved
print("PASS descriptors: new weight memory, in-place update, non-contiguous input")
# CHECK: PASS descriptors:


# Several outputs, one of them a size.
def several(x):
    y = x * 2.0
    return y.sum(-1), y.shape[0] + 1, torch.tanh(x)


fresh()
x = torch.randn(5, 6)
got = torch.compile(several, backend="rope_mlir", dynamic=True)(x)
want = several(x)
assert got[1] == want[1] and rt.reports()[0].compiled
close(got[0], want[0], "sum")
close(got[2], want[2], "tanh")
print(f"PASS outputs: {len(got)} in order, the size {got[1]}")
# CHECK: PASS outputs: 3 in order, the size 6

# The disk cache.
fresh()
rt._MEMORY.clear()
with torch.no_grad():
    again = torch.compile(block, backend="rope_mlir", dynamic=True)(x := torch.randn(1, 11, 64), 2)
    close(again, block(x, 2), "cached block")
assert rt.reports()[0].cached, rt.reports()
print("PASS disk cache: the graph loaded from", "ROPE_MLIR_CACHE_DIR" if any(
    Path(os.environ["ROPE_MLIR_CACHE_DIR"]).glob("*.so")) else "?")
# CHECK: PASS disk cache: the graph loaded from ROPE_MLIR_CACHE_DIR

# Options reach the pipeline: another pipeline, another compiled graph.
fresh()
with torch.no_grad():
    y = torch.compile(block, backend="rope_mlir", dynamic=True,
                      options={"runtime_checks": False})(x, 2)
    close(y, block(x, 2), "runtime_checks=False")
assert not rt.reports()[0].cached, "options=... must compile anew"
print("PASS options: runtime_checks=False compiled anew")
# CHECK: PASS options:


# Fallbacks.
def bessel(x):
    return torch.special.bessel_j0(x) + 1


def cumulative(x):
    return torch.cumprod(x, 0) * 2


for fn in (bessel, cumulative):
    fresh()
    x = torch.rand(8, 8)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = torch.compile(fn, backend="rope_mlir")(x)
    messages = [str(w.message) for w in caught if "rope_mlir" in str(w.message)]
    assert len(messages) == 1, messages
    assert torch.equal(y, fn(x))
    print(f"PASS fallback {fn.__name__}: {messages[0]}")
# CHECK: PASS fallback bessel: rope_mlir: aten.special_bessel_j0 runs in PyTorch (torch-mlir cannot lower torch.aten.special_bessel_j0); the rest of graph graph0 is compiled around it
# CHECK: PASS fallback cumulative: rope_mlir: aten.cumprod runs in PyTorch (torch-mlir lowers aten.cumprod to its TMTensor dialect, which rope-mlir does not compile); the rest of graph graph0 is compiled around it
