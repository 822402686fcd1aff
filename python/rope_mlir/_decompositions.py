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
# n, so only over short dims (a router's experts, not a sequence).
_MAX_TRIANGLE = 1024


def _histc(x: torch.Tensor, bins: int = 100, min: float = 0, max: float = 0) -> torch.Tensor:
    """torch.histc: counts of x in `bins` equal bins over [min, max] (the
    data's range when min == max), elements outside ignored, max itself in
    the last bin; the bin of e is floor((e - min) * bins / (max - min)), as
    PyTorch's CPU kernel computes it."""
    flat = x.reshape(-1)
    if min == max:
        lo, hi = flat.min(), flat.max()
        same = lo == hi
        lo, hi = torch.where(same, lo - 1, lo), torch.where(same, hi + 1, hi)
    else:
        lo, hi = float(min), float(max)
    position = torch.floor((flat - lo) * bins / (hi - lo)).to(torch.int64)
    position = torch.clamp(position, 0, bins - 1)
    inside = (flat >= lo) & (flat <= hi)
    hits = (position.unsqueeze(1) == torch.arange(bins).unsqueeze(0)) & inside.unsqueeze(1)
    return hits.sum(0).to(x.dtype)


def _cumsum(x: torch.Tensor, dim: int, dtype=None):
    """torch.cumsum over a short static dim, as a sum under a triangle."""
    dim = dim % max(x.dim(), 1)
    n = x.shape[dim] if x.dim() else 1
    if not isinstance(n, int) or n > _MAX_TRIANGLE:
        return NotImplemented
    out_dtype = dtype or (torch.int64 if not x.dtype.is_floating_point else x.dtype)
    moved = x.to(out_dtype).movedim(dim, -1) if x.dim() else x.to(out_dtype).reshape(1)
    index = torch.arange(n)
    below = (index.unsqueeze(0) <= index.unsqueeze(1)).to(out_dtype)  # [i, j]: j <= i
    summed = (moved.unsqueeze(-2) * below).sum(-1).to(out_dtype)
    return summed.movedim(-1, dim) if x.dim() else summed.reshape(())


def _true_divide(a, b):
    return aten.div.Tensor(a, b)


def _true_divide_scalar(a, b):
    return aten.div.Scalar(a, b)


def table() -> dict:
    """Our decompositions, keyed by ATen overload."""
    return {
        aten.histc.default: _histc,
        aten.cumsum.default: _cumsum,
        aten.true_divide.Tensor: _true_divide,
        aten.true_divide.Scalar: _true_divide_scalar,
    }
