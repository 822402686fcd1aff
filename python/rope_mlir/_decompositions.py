"""ATen decompositions the ``torch.compile`` backend adds to torch-mlir's
table: ops that block the import of common models (mixture-of-experts
routing counts tokens per expert with ``torch.histc``), written in ops the
importer lowers to linalg. What stays unlowerable is split off per op
(_fx_split).
"""

from __future__ import annotations

import torch

aten = torch.ops.aten

# A cumulative sum becomes a masked sum over a triangle: n² work instead of
# n, so only over short static dims (a router's experts; a padding mask's
# positions, next to the attention over the same length).
_MAX_TRIANGLE = 1024


def _histc(x: torch.Tensor, bins: int = 100, min: float = 0, max: float = 0) -> torch.Tensor:
    """torch.histc: counts of x in `bins` equal bins over [min, max] (the
    data's range when min == max), elements outside ignored, max itself in
    the last bin; the bin of e is floor((e - min) * bins / (max - min)) in
    x's dtype, the order PyTorch's CPU kernel computes it in. A static
    empty input or min > max is left to PyTorch (its zeros, its error)."""
    flat = x.reshape(-1)
    # (A symbolic length is not compared with 0: that would guard on it.)
    if min > max or (isinstance(flat.shape[0], int) and flat.shape[0] == 0):
        return NotImplemented
    if min == max:
        lo, hi = flat.min(), flat.max()
        same = lo == hi
        lo, hi = torch.where(same, lo - 1, lo), torch.where(same, hi + 1, hi)
    else:
        lo = torch.full((), float(min), dtype=x.dtype, device=x.device)
        hi = torch.full((), float(max), dtype=x.dtype, device=x.device)
    position = torch.floor((flat - lo) * bins / (hi - lo)).to(torch.int64)
    position = torch.clamp(position, 0, bins - 1)
    inside = (flat >= lo) & (flat <= hi)
    bin_ids = torch.arange(bins, device=x.device)
    hits = (position.unsqueeze(1) == bin_ids.unsqueeze(0)) & inside.unsqueeze(1)
    return hits.sum(0).to(x.dtype)


def _cumsum(x: torch.Tensor, dim: int, dtype=None):
    """torch.cumsum over a short static dim, as a sum under a triangle (a
    select, not a product with a 0/1 mask: inf · 0 would be NaN)."""
    if x.dtype.is_complex:
        return NotImplemented
    dim = dim % max(x.dim(), 1)
    n = x.shape[dim] if x.dim() else 1
    if not isinstance(n, int) or n > _MAX_TRIANGLE:
        return NotImplemented
    out_dtype = dtype or (torch.int64 if not x.dtype.is_floating_point else x.dtype)
    moved = x.to(out_dtype).movedim(dim, -1) if x.dim() else x.to(out_dtype).reshape(1)
    index = torch.arange(n, device=x.device)
    below = index.unsqueeze(0) <= index.unsqueeze(1)  # [i, j]: j <= i
    summed = torch.where(below, moved.unsqueeze(-2), 0).sum(-1).to(out_dtype)
    return summed.movedim(-1, dim) if x.dim() else summed.reshape(())


def _true_divide(a, b):
    return aten.div.Tensor(a, b)


def _true_divide_scalar(a, b):
    return aten.div.Scalar(a, b)


def _mul_complex_by_real(a, b):
    """A complex tensor times a real Python number (DeepSeek's
    `freqs_cis * attention_scaling`), which torch-mlir cannot lower: the
    real and imaginary parts scaled alike."""
    if not (isinstance(a, torch.Tensor) and a.dtype.is_complex
            and isinstance(b, (int, float)) and not isinstance(b, bool)):
        return NotImplemented
    return aten.view_as_complex(aten.mul.Tensor(aten.view_as_real(a), b))


# Ops that reach the backend's graphs after the decompositions have run
# (torch's tensorify pass turns Dynamo's float arithmetic into tensor ops:
# phi's GELU constant is `true_divide(scalar_tensor(2.0), pi)`), each the
# same computation as an op torch-mlir lowers.
_SAME_AS = {
    aten.true_divide.Tensor: aten.div.Tensor,
    aten.true_divide.Scalar: aten.div.Scalar,
}


def retarget(gm: torch.fx.GraphModule) -> int:
    """Points the nodes of `gm` whose op torch-mlir cannot lower at the op
    that computes the same (_SAME_AS); how many it changed."""
    changed = 0
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target in _SAME_AS:
            node.target = _SAME_AS[node.target]
            changed += 1
    if changed:
        gm.recompile()
    return changed


def table() -> dict:
    """Our decompositions, keyed by ATen overload."""
    return {
        aten.histc.default: _histc,
        aten.cumsum.default: _cumsum,
        aten.true_divide.Tensor: _true_divide,
        aten.true_divide.Scalar: _true_divide_scalar,
        aten.mul.Tensor: _mul_complex_by_real,
    }
