"""ATen decompositions the ``torch.compile`` backend adds to torch-mlir's
table: ops that block the import of common models (mixture-of-experts
routing counts tokens per expert with ``torch.histc``), written in ops the
importer lowers to linalg. What stays unlowerable is split off per op
(_fx_split).
"""

from __future__ import annotations

import operator

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


def _expand_int_mod(gm: torch.fx.GraphModule, node: torch.fx.Node) -> None:
    """`a % b` of symbolic integers (a chunked model's padding, `(c - n % c)
    % c`), which torch-mlir imports as `aten.fmod.int` and cannot lower, as
    `a - (a // b) * b`: Python's floor modulo, since `//` floors too."""
    a, b = node.args
    with gm.graph.inserting_before(node):
        quotient = gm.graph.call_function(operator.floordiv, (a, b))
        quotient.meta["val"] = _value(a) // _value(b)
        product = gm.graph.call_function(operator.mul, (quotient, b))
        product.meta["val"] = _value(quotient) * _value(b)
        difference = gm.graph.call_function(operator.sub, (a, product))
        difference.meta["val"] = _value(a) - _value(product)
    node.replace_all_uses_with(difference)
    gm.graph.erase_node(node)


def _split_as_slices(gm: torch.fx.GraphModule, node: torch.fx.Node) -> bool:
    """`split_with_sizes(x, sizes, dim)` at sizes that are not all constants
    (a mixture of experts splits its gathered tokens by the count routed to
    each expert), which torch-mlir leaves unlowered, as one `slice` per part
    from the sum of the sizes before it. Whether it rewrote the split: the
    parts must all be picked by index (getitem)."""
    x, sizes = node.args[0], node.args[1]
    dim = node.args[2] if len(node.args) > 2 else node.kwargs.get("dim", 0)
    users = list(node.users)
    if not all(u.target is operator.getitem and isinstance(u.args[1], int) for u in users):
        return False
    rank = x.meta["val"].dim()
    dim = dim % rank
    starts, start = [], 0
    with gm.graph.inserting_before(node):
        for size in sizes:
            starts.append(start)
            if isinstance(start, int) and isinstance(size, int):
                start = start + size
                continue
            total = gm.graph.call_function(operator.add, (start, size))
            total.meta["val"] = _value(start) + _value(size)
            start = total
    for user in users:
        part = user.args[1]
        with gm.graph.inserting_before(user):
            end = starts[part + 1] if part + 1 < len(starts) else start
            piece = gm.graph.call_function(aten.slice.Tensor, (x, dim, starts[part], end))
        piece.meta = dict(user.meta)
        user.replace_all_uses_with(piece)
        gm.graph.erase_node(user)
    gm.graph.erase_node(node)
    return True


def _value(x):
    """The example value of an FX node argument (its meta's), or x itself."""
    return x.meta.get("val") if isinstance(x, torch.fx.Node) else x


def _is_symbolic_int(value) -> bool:
    return isinstance(value, (int, torch.SymInt)) and not isinstance(value, bool)


def retarget(gm: torch.fx.GraphModule) -> int:
    """Rewrites the nodes of `gm` whose op torch-mlir cannot lower into ops
    that compute the same (_SAME_AS, the integer modulo, splits at symbolic
    sizes); how many it changed."""
    changed = 0
    for node in list(gm.graph.nodes):
        if node.op != "call_function":
            continue
        if node.target in _SAME_AS:
            node.target = _SAME_AS[node.target]
            changed += 1
        elif node.target is operator.mod and len(node.args) == 2 and all(
                _is_symbolic_int(_value(a)) for a in node.args) and any(
                isinstance(a, torch.fx.Node) for a in node.args):
            _expand_int_mod(gm, node)
            changed += 1
        elif node.target is aten.split_with_sizes.default and not all(
                isinstance(size, int) for size in node.args[1]):
            changed += _split_as_slices(gm, node)
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
