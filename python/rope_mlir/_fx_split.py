"""Per-op fallback for the ``torch.compile`` backend: an FX graph split
around the nodes the import cannot take.

A graph with one op torch-mlir cannot lower (``aten.histc`` in a
mixture-of-experts router, say) would otherwise run whole in PyTorch, and
with it the attention this compiler exists for. Instead the graph is cut
into a chain of parts in its own node order: runs of nodes the import takes
alternate with runs of the blocked ones. Each part of the first kind that
computes something is compiled as a graph of its own (and may split again
if the import blocks on a second op); the blocked parts, and parts that
only view or pick values, run in PyTorch. A chain in node order cannot form
a cycle between parts, since every edge of the graph points forward.
"""

from __future__ import annotations

import dataclasses
import operator

import torch
from torch.fx.passes.split_module import split_module

# torch-mlir lowers these ATen ops to its TMTensor dialect (which rope-mlir
# does not take); a failure that names the TMTensor op blocks them.
_TM_TENSOR_SOURCES = {
    "tm_tensor.scatter": ("aten.index_put", "aten._unsafe_index_put", "aten.scatter",
                          "aten.scatter_add", "aten.scatter_reduce", "aten.index_add"),
    "tm_tensor.scan": ("aten.cumsum", "aten.cumprod"),
    "tm_tensor.sort": ("aten.sort", "aten.argsort", "aten.topk", "aten.msort",
                       "aten.kthvalue", "aten.median"),
    "tm_tensor.topk": ("aten.topk",),
    "tm_tensor.attention": ("aten._scaled_dot_product_flash_attention_for_cpu",
                            "aten.scaled_dot_product_attention"),
}

# Nodes that compute nothing worth a compiled call of their own.
_NO_COMPUTE = {"view", "_unsafe_view", "reshape", "expand", "permute", "transpose", "t",
          "unsqueeze", "squeeze", "slice", "select", "alias", "detach", "clone",
          "sym_size", "sym_numel", "sym_stride", "flatten", "unflatten", "_to_copy",
          "empty", "full", "scalar_tensor", "lift_fresh_copy", "arange", "zeros", "ones"}


def op_name(target) -> str:
    """`aten.histc` for torch.ops.aten.histc.default; the function's name
    for other targets."""
    if isinstance(target, torch._ops.OpOverload):
        return f"{target.namespace}.{target._opname}"
    return getattr(target, "__name__", str(target))


def blamed_ops(failure: str) -> tuple[str, ...]:
    """The ATen ops (`aten.histc`) that an op named by an import failure
    (`torch.aten.histc`, `aten.histc.default`, `tm_tensor.scan`) stands
    for; none for anything else."""
    if failure in _TM_TENSOR_SOURCES:
        return _TM_TENSOR_SOURCES[failure]
    parts = failure.removeprefix("torch.").split(".")
    return (".".join(parts[:2]),) if len(parts) >= 2 and parts[0] != "operator" else ()


# What torch-mlir always lowers to TMTensor (scans, sorts, scatters): known
# before its lowering runs. Its SDPA is not among them: that one it
# decomposes into products unless asked for tm_tensor.attention.
_TM_TENSOR_OPS = frozenset(op for source, ops in _TM_TENSOR_SOURCES.items()
                           if source != "tm_tensor.attention" for op in ops)


def tm_tensor_ops(gm: torch.fx.GraphModule) -> tuple[str, ...]:
    """The ATen ops of `gm` that torch-mlir would lower to its TMTensor
    dialect (`aten.scatter`, `aten.topk`, ...), sorted."""
    return tuple(sorted({op_name(n.target) for n in gm.graph.nodes
                         if n.op == "call_function" and op_name(n.target) in _TM_TENSOR_OPS}))


def custom_ops(gm: torch.fx.GraphModule) -> tuple[str, ...]:
    """The ops of `gm` outside ATen and prims (a library's custom op:
    `transformers.grouped_mm_fallback`), sorted: torch-mlir imports them
    as `torch.operator`, which nothing lowers (its failure then names
    whatever it met first, often a constant the op used)."""
    return tuple(sorted({op_name(n.target) for n in gm.graph.nodes
                         if n.op == "call_function"
                         and isinstance(n.target, torch._ops.OpOverload)
                         and n.target.namespace not in ("aten", "prims")}))


def _alone(node: torch.fx.Node) -> torch.fx.GraphModule | None:
    """A graph of `node` alone: its tensor operands as inputs (with their
    example values), its symbolic integer operands at their example values;
    None where an operand has no example value."""
    graph = torch.fx.Graph()
    inputs = {}

    def operand(a):
        if not isinstance(a, torch.fx.Node):
            return a
        value = a.meta.get("val")
        if isinstance(value, torch.Tensor):
            if a not in inputs:
                inputs[a] = graph.placeholder(a.name)
                inputs[a].meta["val"] = value
            return inputs[a]
        if isinstance(value, torch.SymInt) and value.node.hint is not None:
            return int(value.node.hint)
        if isinstance(value, (int, float, bool)):
            return value
        raise LookupError(a.name)

    try:
        args = torch.fx.node.map_aggregate(node.args, operand)
        kwargs = torch.fx.node.map_aggregate(node.kwargs, operand)
    except LookupError:
        return None
    copy = graph.call_function(node.target, args, kwargs)
    copy.meta = dict(node.meta)
    value = node.meta.get("val")
    if isinstance(value, (tuple, list)):
        results = []
        for i, v in enumerate(value):
            if isinstance(v, torch.Tensor):
                item = graph.call_function(operator.getitem, (copy, i))
                item.meta["val"] = v
                results.append(item)
        graph.output(tuple(results))
    elif isinstance(value, torch.Tensor):
        graph.output((copy,))
    else:
        return None
    return torch.fx.GraphModule(torch.nn.Module(), graph)


def unimportable_ops(gm: torch.fx.GraphModule, imports) -> tuple[str, ...]:
    """The ATen ops of `gm` that `imports` (a graph -> bool) refuses each
    alone: what to split around when the import's failure names no op (a
    constant left unlegalized after the op that used it failed)."""
    tried, refused = set(), []
    for node in gm.graph.nodes:
        if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload):
            continue
        if node.target in tried or op_name(node.target).split(".")[-1] in _NO_COMPUTE:
            continue
        tried.add(node.target)
        alone = _alone(node)
        if alone is not None and not imports(alone):
            refused.append(op_name(node.target))
    return tuple(refused)


def _prefix(gm: torch.fx.GraphModule, last: torch.fx.Node) -> torch.fx.GraphModule:
    """A graph of the nodes of `gm` up to `last` (its inputs all kept),
    returning the tensors among them that nothing up to `last` reads."""
    graph, copies = torch.fx.Graph(), {}
    for node in gm.graph.nodes:
        if node.op == "output":
            break
        copies[node] = graph.node_copy(node, lambda n: copies[n])
        if node is last:
            break
    read = {a for n in copies for a in n.all_input_nodes}
    graph.output(tuple(copies[n] for n in copies if n not in read and n.op != "placeholder"
                       and isinstance(n.meta.get("val"), torch.Tensor)))
    return torch.fx.GraphModule(gm, graph)


def first_unimportable_node(gm: torch.fx.GraphModule, imports) -> str | None:
    """The name of the first node of `gm` whose prefix (_prefix) `imports`
    (a graph -> bool) refuses, found by bisection over the prefixes: what
    to split around when the import's failure names no op and no op fails
    alone (torch-mlir's lowering of one node meeting the dims another gave
    it). `gm` is one the import refused (the whole graph is not imported
    again); None when it has no node to blame."""
    nodes = [n for n in gm.graph.nodes if n.op == "call_function"]
    lo, hi = 0, len(nodes)  # the prefix of lo nodes imports, that of hi does not
    if not nodes:
        return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if imports(_prefix(gm, nodes[mid - 1])):
            lo = mid
        else:
            hi = mid
    return nodes[hi - 1].name


def _computes(node: torch.fx.Node) -> bool:
    if node.op != "call_function" or node.target is operator.getitem:
        return False
    name = op_name(node.target)
    return name.split(".")[-1] not in _NO_COMPUTE and isinstance(node.target, torch._ops.OpOverload)


def _returns_tensor(gm: torch.fx.GraphModule) -> bool:
    output = next(n for n in gm.graph.nodes if n.op == "output")
    values = output.args[0] if isinstance(output.args[0], (tuple, list)) else (output.args[0],)
    return any(isinstance(v, torch.fx.Node) and isinstance(v.meta.get("val"), torch.Tensor)
               for v in values)


@dataclasses.dataclass
class Part:
    """One part of a split graph: its name in the split module, the module
    itself, whether it is compiled, and the example values of its inputs."""
    name: str
    module: torch.fx.GraphModule
    compiled: bool
    example_inputs: list


def split_around(gm: torch.fx.GraphModule, ops: tuple[str, ...], nodes: tuple[str, ...] = ()):
    """(the split module, its parts, the ops of `ops` found) with the nodes
    of `ops` and the nodes named in `nodes` (and what picks their results
    apart) in parts that run in PyTorch; None when no such node is in `gm`
    or no part would compute anything compiled."""
    blocked = set()
    for node in gm.graph.nodes:
        if node.op == "call_function" and (
                op_name(node.target) in ops or node.name in nodes or (
                    node.target is operator.getitem and node.args[0] in blocked)):
            blocked.add(node)
    if not blocked:
        return None
    ids, part, state = {}, 0, None
    for node in gm.graph.nodes:
        if node.op in ("placeholder", "output", "get_attr"):
            continue
        inside = node in blocked
        if state is not None and inside != state:
            part += 1
        ids[node], state = part, inside
    # Parts return tuples (what a compiled graph returns); get_attr nodes
    # (none in AOTAutograd's graphs, which lift parameters to inputs) go to
    # the first part.
    blocked_parts = {ids[n] for n in blocked}
    split = split_module(gm, None, lambda n: ids.get(n, 0), keep_original_order=True,
                         tuple_return=True)
    values = {n.name: n.meta.get("val") for n in gm.graph.nodes}
    parts = []
    for node in split.graph.nodes:
        if node.op != "call_module":
            continue
        module = getattr(split, node.target)
        inner = [n for n in module.graph.nodes if n.op == "call_function"]
        # (A part that returns sizes alone, no tensor, has nothing to compile.)
        compiled = (int(node.target.removeprefix("submod_")) not in blocked_parts
                    and any(_computes(n) for n in inner) and _returns_tensor(module))
        # A part's inputs keep the example values of the nodes of `gm` they
        # stand for (and their names), in their meta too (what _alone reads
        # when the part is split again).
        examples = []
        for p in module.graph.nodes:
            if p.op == "placeholder":
                p.meta.setdefault("val", values.get(p.name))
                examples.append(p.meta["val"])
        parts.append(Part(node.target, module, compiled, examples))
    if not any(p.compiled for p in parts):
        return None
    found = sorted({op_name(n.target) for n in blocked if n.target is not operator.getitem})
    return split, parts, found
