"""``torch.compile(model, backend="rope_mlir")``: PyTorch models through rope-mlir.

    import rope_mlir.torch                       # registers the backend
    model.compile(backend="rope_mlir", dynamic=True)
    model.generate(input_ids, max_new_tokens=16) # prefill and decode run compiled

Each graph Dynamo captures goes the way a user's exported model goes:

1. AOTAutograd lowers it to ATen with torch-mlir's decompositions; the
   parameters and buffers are inputs of that graph (Dynamo lifts them), so
   they are arguments of the compiled function, used in place, never
   constants in the IR.
2. Symbolic sizes (``dynamic=True``) that Dynamo passes as integers are
   re-read from the tensors that carry them (``sym_size``), so that the
   compiled function takes tensors only and the raising sees one size, not
   an unrelated integer.
3. torch-mlir's FX importer gives linalg-on-tensors; ``--rope-raise``, the
   fold into Q·Kᵀ and the CPU pipeline compile it in this process.
4. The callable passes tensors to the compiled code without a copy (memref
   descriptors made from the tensors' metadata, kept per parameter) and
   returns the callee's results as torch tensors, again without a copy.

A graph is compiled once per shape signature (Dynamo's guards) and kept in
memory; the compiled library is also kept on disk, keyed by the imported IR,
the options and the compiler's build, so that a new process skips the
compile. A graph the pipeline cannot compile runs in PyTorch, with one
warning naming what failed. ``reports()`` says, per graph, what was raised.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import hashlib
import json
import operator
import os
import re
import time
import warnings
from pathlib import Path

import numpy as np
import torch

from . import _abi, _decompositions, _fx_split, _native, arrays, compiler
from .errors import ArgumentError, RuntimeCheckError
from .module import SharedLibraryModule

__all__ = ["BACKEND_NAME", "GraphReport", "backend", "cache_dir", "clear_reports", "reports"]

BACKEND_NAME = "rope_mlir"
# The raise reports its near misses (remarks), kept in each graph's report.
RAISE = ["--rope-raise=report=true", "--rope-fold-rotation-into-qk", "--canonicalize"]


@dataclasses.dataclass
class GraphReport:
    """What the backend did with one graph."""
    name: str
    compiled: bool                 # False: it ran in PyTorch (see `fallback`; none
    #                                when it returns no tensor: nothing to compile)
    attentions: int = 0            # rope.attention ops raised
    folded: int = 0                # of them, with the rotation folded inside
    rotations: int = 0             # rope.rotate / rope.rotate_with_tables left outside
    arguments: int = 0
    results: int = 0
    cached: bool = False           # loaded from the disk cache
    seconds: float = 0.0           # import, raise and compile
    fallback: str = ""             # why it ran in PyTorch
    near_misses: list = dataclasses.field(default_factory=list)
    # why an attention the raise began to match was not raised (its
    # remarks: "rope-raise: attention not raised: K and V are not read ...")
    split_around: list = dataclasses.field(default_factory=list)
    # ATen ops (`aten.histc`) it was split around: they ran in PyTorch, the
    # parts between them are graphs of their own (reported after it)
    attention_candidates: int = 0
    # attentions in the FX graph (attention_candidates): a softmax of a
    # batched product, or a fused SDPA node; more than `attentions` means
    # the raise missed some (its near_misses say why, where it began one)


# Where a softmax's input is looked for: through these (elementwise ops,
# views, the softmax's own max and sum) back to the batched product of
# Q and K. A router's softmax reads a plain `mm` (tokens x experts) and is
# not an attention.
_SCORE_PATH = {"add", "sub", "mul", "div", "neg", "where", "tanh", "amax", "max", "sum",
               "masked_fill", "_to_copy", "clone", "view", "_unsafe_view", "reshape", "expand",
               "permute", "transpose", "unsqueeze", "squeeze", "slice", "contiguous", "alias",
               "exp", "sigmoid", "minimum", "maximum", "clamp", "fill", "cat"}
_SOFTMAXES = {"_softmax", "_safe_softmax", "softmax", "exp"}  # exp: see below
_FUSED_ATTENTION = {"_scaled_dot_product_flash_attention_for_cpu", "scaled_dot_product_attention",
                    "_scaled_dot_product_attention_math", "_scaled_dot_product_efficient_attention",
                    "_scaled_dot_product_flash_attention"}


def attention_candidates(gm: torch.fx.GraphModule) -> int:
    """How many attentions the FX graph computes: fused SDPA nodes, and
    softmaxes (or the `exp` of a decomposed one) whose input comes, through
    elementwise ops and views alone, from a `bmm` (the Q·Kᵀ of every
    attention after AOTAutograd's decompositions). Each product counts
    once, however many of its softmax's steps reach it."""
    def opname(node):
        if node.op != "call_function":
            return None
        if node.target is operator.getitem:  # max.dim's values
            return opname(node.args[0]) if isinstance(node.args[0], torch.fx.Node) else None
        return getattr(node.target, "_opname", None)

    fused, products = 0, set()
    for node in gm.graph.nodes:
        name = opname(node)
        if name in _FUSED_ATTENTION:
            fused += 1
        if name not in _SOFTMAXES:
            continue
        if name == "exp":
            # A decomposed softmax exponentiates x - max(x); any other exp (a
            # sigmoid's, in an expert's SiLU) is not one.
            shifted = node.args[0] if node.args else None
            if not (isinstance(shifted, torch.fx.Node) and opname(shifted) == "sub"
                    and isinstance(shifted.args[1], torch.fx.Node)
                    and opname(shifted.args[1]) in ("amax", "max")):
                continue
        stack, seen = [a for a in node.all_input_nodes], set()
        while stack:
            n = stack.pop()
            if n in seen:
                continue
            seen.add(n)
            inner = opname(n)
            if inner == "bmm":
                products.add(n)
            elif inner in _SCORE_PATH:
                stack.extend(n.all_input_nodes)
    return fused + len(products)


_REPORTS: list[GraphReport] = []
_MEMORY: dict[str, object] = {}    # key -> compiled module
_WARNED: set[str] = set()


def reports() -> list[GraphReport]:
    """The graphs compiled (or not) in this process, in order."""
    return list(_REPORTS)


def clear_reports() -> None:
    _REPORTS.clear()


def cache_dir() -> Path:
    """Where compiled graphs are kept: $ROPE_MLIR_CACHE_DIR, else
    ~/.cache/rope-mlir/torch-compile."""
    return Path(os.environ.get("ROPE_MLIR_CACHE_DIR")
                or Path.home() / ".cache" / "rope-mlir" / "torch-compile")


class Unsupported(Exception):
    """A graph this backend does not compile; it runs in PyTorch, or split
    around `ops` (the ATen ops, as `aten.histc`, that blocked it)."""

    def __init__(self, why: str, ops: tuple[str, ...] = (), importing: bool = False):
        super().__init__(why)
        self.ops = ops
        self.importing = importing  # torch-mlir's import failed (not our pipeline)


# ---------------------------------------------------------------------------
# The FX graph: sizes as tensor dims
# ---------------------------------------------------------------------------


def _copy_returning(gm: torch.fx.GraphModule, values) -> torch.fx.GraphModule:
    """A copy of `gm` that returns `values` (nodes of `gm`, or constants)
    and computes nothing else: a side graph run in Python on the same
    inputs."""
    copied = torch.fx.GraphModule(gm, copy.deepcopy(gm.graph))
    by_name = {n.name: n for n in copied.graph.nodes}
    output = next(n for n in copied.graph.nodes if n.op == "output")
    output.args = (tuple(by_name[v.name] if isinstance(v, torch.fx.Node) else v
                         for v in values),)
    copied.graph.eliminate_dead_code()
    copied.recompile()
    return copied


def _size_source(value, tensors):
    """The (placeholder, dim) of a tensor input whose dim is the symbolic
    size `value`, or None."""
    expr = value.node.expr
    for node, example in tensors:
        for d, size in enumerate(example.shape):
            if isinstance(size, torch.SymInt) and size.node.expr == expr:
                return node, d
    return None


# Integer arithmetic torch-mlir's importer reads (Python's operators on
# symbolic sizes, by name); other integer ops (torch.sym_max, ...) are
# computed in Python and passed in.
_IMPORTED_INT_OPS = {"add", "sub", "mul", "truediv", "floordiv", "mod", "neg",
                     "lt", "le", "gt", "ge", "eq", "ne"}


@dataclasses.dataclass
class ArgumentPlan:
    """How the compiled function's arguments come from the graph's inputs,
    each a source: ("tensor", i) input i itself; ("int", i) integer input i
    as a 0-d int64 tensor; ("computed", k) value k of `computed` (a graph of
    the integer ops the importer does not read, run in Python on the
    inputs) as a 0-d int64 tensor."""
    sources: list
    computed: torch.fx.GraphModule | None = None

    def arguments(self, args) -> list:
        values = self.computed(*args) if self.computed is not None else ()
        out = []
        for kind, i in self.sources:
            if kind == "tensor":
                # Parameters require grad, which DLPack refuses; this graph is inference.
                out.append(args[i].detach())
            else:
                out.append(torch.tensor(int(args[i] if kind == "int" else values[i]),
                                        dtype=torch.int64))
        return out


def _scalar_input(graph, name, example, fake_mode):
    """A new 0-d int64 tensor input (the last input) and its value read with
    item(), standing for the integer `example`."""
    from torch.fx.passes.shape_prop import _extract_tensor_metadata
    first_op = next(n for n in graph.nodes if n.op != "placeholder")
    with graph.inserting_before(first_op):
        tensor = graph.placeholder(name)
    with fake_mode:
        tensor.meta["val"] = torch.empty((), dtype=torch.int64)
    tensor.meta["tensor_meta"] = _extract_tensor_metadata(tensor.meta["val"])
    with graph.inserting_before(first_op):
        value = graph.call_function(torch.ops.aten._local_scalar_dense.default, (tensor,))
    value.meta["val"] = example
    return value


def _computed_in_python(gm: torch.fx.GraphModule) -> list:
    """The integer nodes of `gm` the importer cannot read (torch.sym_max,
    ...): each is computed in Python, from the graph's inputs."""
    nodes = []
    for n in gm.graph.nodes:
        if n.op != "call_function" or not isinstance(n.meta.get("val"), torch.SymInt):
            continue
        if isinstance(n.target, torch._ops.OpOverload):
            continue
        if getattr(n.target, "__name__", None) in _IMPORTED_INT_OPS:
            continue
        nodes.append(n)
    return nodes


def tensor_arguments(gm: torch.fx.GraphModule, example_inputs) -> ArgumentPlan:
    """Rewrites `gm` (an ATen graph) to take tensors only and returns how its
    new inputs come from the old. An integer input that is a dim of a tensor
    input becomes `sym_size` of that dim (the raising then sees one size);
    another symbolic integer (a cache's length plus one) becomes a 0-d
    tensor input, and so does an integer op the importer does not read; a
    constant or unused integer is dropped."""
    graph = gm.graph
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    tensors = [(n, e) for n, e in zip(placeholders, example_inputs)
               if isinstance(e, torch.Tensor)]
    fake_mode = next((getattr(e, "fake_mode", None) for _, e in tensors), None)
    plan = ArgumentPlan([])
    integers = []

    hoisted = _computed_in_python(gm)
    if hoisted:
        if fake_mode is None:
            raise Unsupported(f"{hoisted[0].target} of symbolic sizes")
        plan.computed = _copy_returning(gm, hoisted)

    for i, (node, example) in enumerate(zip(placeholders, example_inputs)):
        if isinstance(example, torch.Tensor) and node.users:
            plan.sources.append(("tensor", i))
            continue
        if node.users:
            if isinstance(example, torch.SymInt):
                source = _size_source(example, tensors)
                if source is not None:
                    first_op = next(n for n in graph.nodes if n.op != "placeholder")
                    with graph.inserting_before(first_op):  # inputs stay first
                        size = graph.call_function(torch.ops.aten.sym_size.int, source)
                    size.meta["val"] = example
                    node.replace_all_uses_with(size)
                elif fake_mode is not None:
                    integers.append((i, node, example))
                    continue
                else:
                    raise Unsupported(f"the integer input {node.name} ({example}) is no "
                                      "tensor's size")
            elif isinstance(example, (int, float, bool)):
                node.replace_all_uses_with(example)  # a value Dynamo specialised on
            else:
                raise Unsupported(f"input {node.name} is a {type(example).__name__}")
        graph.erase_node(node)
    # The new inputs after the tensors: integer inputs, then computed values.
    for i, node, example in integers:
        node.replace_all_uses_with(_scalar_input(graph, node.name + "_value", example, fake_mode))
        graph.erase_node(node)
        plan.sources.append(("int", i))
    for k, node in enumerate(hoisted):
        node.replace_all_uses_with(_scalar_input(graph, f"{node.name}_value",
                                                 node.meta["val"], fake_mode))
        graph.erase_node(node)
        plan.sources.append(("computed", k))
    graph.eliminate_dead_code()
    graph.lint()
    gm.recompile()
    return plan


@functools.lru_cache(maxsize=4096)
def _simplified(expr):
    """`expr` (a size of Dynamo's, in its sympy functions) simplified over
    positive integer symbols: Dynamo gives one symbol to sizes that were
    equal when it traced (a batch of 2 prompts of 2 tokens: B = S = s0), and
    then writes the heads of a view [B, S, 16] -> [B, S, -1, 8] as
    (2·s0·((s0²)//s0))//(s0²), which is 2. Its FloorDiv and Mod do not
    simplify on their own; as floor and Mod of positive integers they do.
    Memoised: every dim of every node of a graph asks, and sympy's simplify
    takes milliseconds."""
    import sympy
    from torch.utils._sympy.functions import FloorDiv, Mod
    if not expr.free_symbols:
        return expr
    positive = {x: sympy.Symbol(x.name, integer=True, positive=True) for x in expr.free_symbols}
    back = {v: k for k, v in positive.items()}
    e = expr.xreplace(positive)
    e = e.replace(lambda x: isinstance(x, FloorDiv), lambda x: sympy.floor(x.args[0] / x.args[1]))
    e = e.replace(lambda x: isinstance(x, Mod), lambda x: sympy.Mod(*x.args))
    return sympy.expand(sympy.simplify(e)).xreplace(back)


def _size_expr(size):
    """A dim as a sympy expression (an int as an Integer), simplified."""
    import sympy
    if isinstance(size, torch.SymInt):
        return _simplified(size.node.expr)
    return sympy.Integer(size)


def _static_or_symbolic(size):
    """`size` as an int where its expression is a constant, else itself."""
    if isinstance(size, torch.SymInt):
        expr = _size_expr(size)
        if expr.is_Integer:
            return int(expr)
    return size


def _statically_typed(val):
    """A fake tensor like `val` (or a tuple of them) with its constant
    sizes static; None when nothing changes."""
    if isinstance(val, (tuple, list)):
        typed = [_statically_typed(v) for v in val]
        if all(t is None for t in typed):
            return None
        return type(val)(v if t is None else t for v, t in zip(val, typed))
    if not isinstance(val, torch.Tensor) or not hasattr(val, "fake_mode"):
        return None
    shape = [_static_or_symbolic(d) for d in val.shape]
    if not any(isinstance(d, int) and isinstance(v, torch.SymInt)
               for d, v in zip(shape, val.shape)):
        return None
    with val.fake_mode:
        return torch.empty(shape, dtype=val.dtype, device=val.device)


def static_extents(gm: torch.fx.GraphModule) -> int:
    """Gives the sizes that Dynamo left symbolic but that are constants
    (_simplified) their values: integer nodes are replaced by the constant,
    tensors are typed with it (torch-mlir types a symbolic dim `?`, and the
    raising wants static heads). Returns how many nodes changed."""
    count = 0
    for node in list(gm.graph.nodes):
        val = node.meta.get("val")
        if isinstance(val, torch.SymInt) and node.op == "call_function":
            static = _static_or_symbolic(val)
            if isinstance(static, int):
                node.replace_all_uses_with(static)
                gm.graph.erase_node(node)
                count += 1
        elif isinstance(val, (torch.Tensor, tuple, list)):
            typed = _statically_typed(val)
            if typed is not None:
                node.meta["val"] = typed
                if isinstance(typed, torch.Tensor) and "tensor_meta" in node.meta:
                    # The importer types a value by its tensor_meta first.
                    from torch.fx.passes.shape_prop import _extract_tensor_metadata
                    node.meta["tensor_meta"] = _extract_tensor_metadata(typed)
                count += 1
    if count:
        gm.graph.lint()
        gm.recompile()
    return count


def _view_groups(before, after):
    """For a view from shape `before` to `after`, the shortest runs that
    correspond: [((i, i2), (j, j2))] with the product of before[i:i2] equal
    to that of after[j:j2] (compared as expressions: no guard), covering
    both shapes in order; static unit dims join the run before them (or,
    leading, the first run). None when the shapes do not split so (a view
    that moves elements across such runs)."""
    import sympy
    b = [_size_expr(s) for s in before]
    a = [_size_expr(s) for s in after]

    def product(sizes):
        return sympy.expand(sympy.Mul(*sizes)) if sizes else sympy.Integer(1)

    groups, i, j = [], 0, 0
    while i < len(b) or j < len(a):
        found = None
        for total in range(2, len(b) - i + len(a) - j + 1):
            for n in range(1, total):
                m = total - n
                if i + n <= len(b) and j + m <= len(a) and \
                        sympy.expand(product(b[i:i + n]) - product(a[j:j + m])) == 0:
                    found = (n, m)
                    break
            if found:
                break
        if found is None:
            # Only unit dims left on one side: they join the last run.
            if groups and all(s == 1 for s in b[i:]) and all(s == 1 for s in a[j:]):
                (gi, _), (gj, _) = groups[-1]
                groups[-1] = ((gi, len(b)), (gj, len(a)))
                return groups
            return None
        n, m = found
        groups.append(((i, i + n), (j, j + m)))
        i, j = i + n, j + m
    return groups


_VIEWS = (torch.ops.aten.view.default, torch.ops.aten._unsafe_view.default,
          torch.ops.aten.reshape.default)


def _same_shape(x, y):
    return len(x) == len(y) and all(_size_expr(p) == _size_expr(q) for p, q in zip(x, y))


def _split_sizes(node, after, j, j2):
    """The sizes of after[j:j2] for aten.unflatten: the static ones, -1 for
    the one symbolic size of a run that has one (torch-mlir then lowers the
    split to an expand_shape; given the size as a value, to a
    tensor.reshape of computed sizes), else the view's own size operands.
    None when the view does not name them."""
    static = [_static_or_symbolic(after[k]) for k in range(j, j2)]
    symbolic = [k for k, d in enumerate(static) if not isinstance(d, int)]
    if len(symbolic) <= 1:
        return [-1 if k in symbolic else d for k, d in enumerate(static)]
    shape = node.args[1] if len(node.args) > 1 else None
    if not isinstance(shape, (list, tuple)) or len(shape) != len(after):
        return None
    # A -1 among them (the view's own inferred size) is unflatten's too.
    return [d if isinstance(d, int) else shape[j + k] for k, d in enumerate(static)]


def _as_flatten_unflatten(gm, node, source, before, after) -> bool:
    """Replaces the view `node` by the aten.flatten and aten.unflatten of
    its runs (_view_groups); False when the view is not so."""
    groups = _view_groups(tuple(before.shape), tuple(after.shape))
    if groups is None:
        return False
    splits = {g: _split_sizes(node, after.shape, *g[1]) for g in groups if g[1][1] - g[1][0] > 1}
    if any(sizes is None for sizes in splits.values()):
        return False
    value, val = source, before
    with gm.graph.inserting_before(node):
        # From the last run back, so that the earlier runs keep their dims.
        for group in reversed(groups):
            (i, i2), (j, j2) = group
            if i2 - i > 1:
                value = gm.graph.call_function(torch.ops.aten.flatten.using_ints,
                                               (value, i, i2 - 1))
                with before.fake_mode:
                    val = torch.ops.aten.flatten.using_ints(val, i, i2 - 1)
                value.meta["val"] = val
            if j2 - j > 1:
                value = gm.graph.call_function(torch.ops.aten.unflatten.int,
                                               (value, i, splits[group]))
                with before.fake_mode:
                    val = torch.ops.aten.unflatten.int(
                        val, i, [_static_or_symbolic(d) for d in after.shape[j:j2]])
                value.meta["val"] = val
    node.replace_all_uses_with(value)
    gm.graph.erase_node(node)
    return True


def simplify_views(gm: torch.fx.GraphModule) -> int:
    """Rewrites the views and expands of symbolic sizes into the ops whose
    lowering keeps the dims apart; returns how many it rewrote.

    torch-mlir (20251130) lowers `aten.view` with symbolic sizes by matching
    the sizes it is given to the input's dims, and when they are not the
    input's own it either merges the wrong dims (it once collapsed
    [B, S, 64] to [B·S, 64] as [[0], [1, 2]], as if S were 1, and typed the
    producers [B, 1, 64], which then wrote S rows into one: the heap
    corruption of batched `generate`) or falls back to `tensor.reshape` of
    computed sizes, which nothing downstream can read as a map of dims (so
    the attention behind it is not raised). A view that merges and splits
    runs of consecutive dims is exactly an aten.flatten of each merged run
    and an aten.unflatten of each split one, which torch-mlir lowers to
    collapse_shape and expand_shape of the dims they name. An expand to the
    input's own shape (SDPA's decomposition expands Q, K, V and the
    probabilities to the shapes they have) is the input: torch-mlir cannot
    tell that it broadcasts nothing and gathers each element by a select on
    every dim's size."""
    count = 0
    for node in list(gm.graph.nodes):
        if node.op != "call_function":
            continue
        source, result = node.args[0] if node.args else None, node.meta.get("val")
        before = getattr(source, "meta", {}).get("val")
        if not isinstance(before, torch.Tensor) or not isinstance(result, torch.Tensor):
            continue
        if not any(isinstance(d, torch.SymInt) for d in (*before.shape, *result.shape)):
            continue
        if node.target is torch.ops.aten.expand.default and \
                _same_shape(before.shape, result.shape):
            node.replace_all_uses_with(source)
            gm.graph.erase_node(node)
            count += 1
        elif node.target in _VIEWS and _as_flatten_unflatten(gm, node, source, before, result):
            count += 1
    # The new nodes' constant sizes static as the others' (static_extents).
    count += static_extents(gm)
    if count:
        gm.graph.lint()
        gm.recompile()
    return count


# ---------------------------------------------------------------------------
# Compilation
# ---------------------------------------------------------------------------


def _import(gm: torch.fx.GraphModule) -> str:
    """The graph as linalg-on-tensors (torch-mlir's FX importer)."""
    try:
        from torch_mlir import fx
    except ImportError as e:  # pragma: no cover - the extra is missing
        raise Unsupported("torch-mlir is not installed (pip install rope-mlir[torch])") from e
    from torch_mlir import ir
    from torch_mlir.dialects import torch as torch_d
    from torch_mlir.extras.fx_importer import FxImporter

    # torch-mlir's lowering reports what it cannot lower as diagnostics
    # (printed, not in its exception): collect them to name the op.
    context = ir.Context()
    torch_d.register_dialect(context)
    diagnostics = []

    def collect(diagnostic):
        diagnostics.append(f"{diagnostic.message} " +
                           " ".join(str(n.message) for n in diagnostic.notes))
        return True

    # What torch-mlir lowers to TMTensor never compiles here: split off
    # before its lowering runs, which may not come back (its conversion of
    # aten.scatter.src crashes on DeepSeek-V3.2's indexer, and the process
    # with it).
    blocked = _fx_split.tm_tensor_ops(gm)
    if blocked:
        raise Unsupported(f"torch-mlir lowers {', '.join(blocked)} to its TMTensor dialect, "
                          "which rope-mlir does not compile", blocked, importing=True)
    custom = _fx_split.custom_ops(gm)
    if custom:
        raise Unsupported(f"torch-mlir imports {', '.join(custom)} as torch.operator, which it "
                          "does not lower", custom, importing=True)
    context.attach_diagnostic_handler(collect)
    try:
        # aten.flatten and aten.unflatten legal: lowered as they are (a
        # collapse or an expansion of the dims they name), not decomposed
        # into views (simplify_views says why).
        text = str(fx.stateless_fx_import(gm, output_type="linalg-on-tensors",
                                          fx_importer=FxImporter(context=context),
                                          backend_legal_ops=["aten.flatten.using_ints",
                                                             "aten.unflatten.int"]))
    except Exception as e:  # noqa: BLE001 - whatever the importer says, PyTorch runs it
        op = _import_failure("\n".join(diagnostics) + "\n" + str(e))
        if op:
            raise Unsupported(f"torch-mlir cannot lower {op}", _fx_split.blamed_ops(op),
                              importing=True) from e
        raise Unsupported(f"torch-mlir's import failed ({type(e).__name__}: "
                          f"{(diagnostics or [str(e)])[0][:200]})", importing=True) from e
    # torch-mlir lowers a few ops (scans, sorts, scatters) to its own
    # TMTensor dialect, which this compiler does not take.
    tm = re.search(r"\b(tm_tensor\.\w+)", text)
    if tm:
        raise Unsupported(f"torch-mlir lowers it to {tm.group(1)} (its TMTensor dialect), "
                          "which rope-mlir does not compile", _fx_split.blamed_ops(tm.group(1)),
                          importing=True)
    return text


def _imports(gm: torch.fx.GraphModule) -> bool:
    """Whether torch-mlir imports `gm` into ops rope-mlir takes."""
    try:
        _import(gm)
    except Unsupported:
        return False
    return True


def _import_failure(text: str) -> str | None:
    """The op a torch-mlir failure names (`torch.aten.histc`), or None."""
    for pattern in (r'name = "(torch\.[\w.]+)"',         # a torch.operator it cannot lower
                    r"operation '(torch\.(?!operator')[\w.]+)'",
                    r"target=<?(?:function |built-in function )?([\w.]+)"):
        m = re.search(pattern, text)
        if m:
            return m.group(1)
    return None


def _count(raised: str) -> tuple[int, int, int]:
    attentions = [ln for ln in raised.splitlines() if re.search(r"=\s*rope\.attention\b", ln)]
    folded = sum(1 for ln in attentions if "rotary(" in ln or "rotary_tables(" in ln)
    rotations = len(re.findall(r"=\s*rope\.rotate(?:_with_tables)?\b", raised))
    return len(attentions), folded, rotations


@functools.cache
def _package_sources() -> str:
    """A digest of this package's Python sources: the cached signatures are
    what its ABI code wrote (an element type it did not know then is
    recorded as opaque), so another version must not read them."""
    h = hashlib.sha256()
    for source in sorted(Path(__file__).parent.glob("*.py")):
        h.update(source.read_bytes())
    return h.hexdigest()


def _key(linalg: str, options: compiler.CompileOptions) -> str:
    """The disk cache's key: the imported graph, the pipeline, the build of
    the compiler (its C API library) and of this package."""
    capi = _native.native_dir() / "libRopeCAPI.so"
    stat = capi.stat() if capi.exists() else None
    build = f"{capi.resolve()}:{stat.st_size}:{stat.st_mtime_ns}" if stat else "?"
    h = hashlib.sha256()
    for part in (linalg, RAISE, options.pass_pipeline(), options.opt_level, build,
                 _package_sources(), torch.__version__):
        h.update(repr(part).encode())
    return h.hexdigest()[:32]


def _load_cached(path: Path):
    signatures = path.with_suffix(".json")
    if not (path.exists() and signatures.exists()):
        return None
    try:
        data = json.loads(signatures.read_text())
        return SharedLibraryModule(path, _abi.parse_signatures(json.dumps(data["functions"]))), data
    except (OSError, ValueError, KeyError):
        return None


def _dump(report: GraphReport, stage: str, text: str) -> None:
    """With $ROPE_MLIR_DUMP_DIR set, writes each graph's IR there
    (<graph>.linalg.mlir as imported, <graph>.raised.mlir after the raise
    and the fold), to see what the raising found."""
    folder = os.environ.get("ROPE_MLIR_DUMP_DIR")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        (Path(folder) / f"{report.name}.{stage}.mlir").write_text(text)


def compile_graph(gm: torch.fx.GraphModule, options: compiler.CompileOptions,
                  report: GraphReport):
    """The compiled module of an ATen graph that takes tensors only."""
    linalg = _import(gm)
    _dump(report, "linalg", linalg)
    key = _key(linalg, options)
    if key in _MEMORY:
        module, counts, near_misses = _MEMORY[key]
        report.near_misses = list(near_misses)
        report.attentions, report.folded, report.rotations = counts
        report.cached = True
        return module
    folder = cache_dir()
    library = folder / f"{key}.so"
    cached = _load_cached(library)
    if cached is not None:
        module, data = cached
        counts = tuple(data["counts"])
        report.near_misses = list(data.get("near_misses", []))
        report.cached = True
    else:
        try:
            remarks = []
            raised = compiler.lower(linalg, RAISE[0], RAISE[1:], remarks)
            report.near_misses = [r.message for r in remarks if r.severity == "remark"]
            _dump(report, "raised", raised)
            counts = _count(raised)
            folder.mkdir(parents=True, exist_ok=True)
            partial = folder / f"{key}.{os.getpid()}.so"
            functions = compiler.build_shared_library(raised, options, partial)
        except compiler.CompileError as e:
            first = e.diagnostics[0] if getattr(e, "diagnostics", None) else str(e).splitlines()[0]
            raise Unsupported(f"rope-mlir cannot compile it: {str(first)[:300]}") from e
        # Publish the library and its signatures atomically (another process
        # may compile the same graph), then load it once, from there.
        os.replace(partial, library)
        meta = library.with_suffix(f".{os.getpid()}.json")
        meta.write_text(json.dumps({"functions": json.loads(_abi.signatures_json(functions)),
                                    "counts": list(counts),
                                    "near_misses": report.near_misses}))
        os.replace(meta, library.with_suffix(".json"))
        module = SharedLibraryModule(library, functions)
    report.attentions, report.folded, report.rotations = counts
    _MEMORY[key] = (module, counts, list(report.near_misses))
    return module


def _to_torch(array: np.ndarray, dtype: torch.dtype) -> torch.Tensor:
    if dtype == torch.bfloat16:
        return torch.from_numpy(array).view(torch.bfloat16)
    return torch.from_numpy(array)


# How memrefs store each torch dtype: arrays.STORAGE_DTYPES of its element type.
_STORAGE = {dtype: np.dtype(arrays.STORAGE_DTYPES[element]) for dtype, element in (
    (torch.float32, "f32"), (torch.float64, "f64"), (torch.float16, "f16"),
    (torch.bfloat16, "bf16"), (torch.bool, "i1"), (torch.int8, "i8"),
    (torch.int16, "i16"), (torch.int32, "i32"), (torch.int64, "i64"),
    (torch.complex64, "complex<f32>"), (torch.complex128, "complex<f64>"))}


class _ArgumentDescriptors:
    """The memref descriptors of a compiled graph's arguments, made from the
    tensors' own metadata (no DLPack capsule, no numpy view), and kept per
    argument position while the same memory comes back: a model's
    parameters, on every call. A descriptor is a function of the address,
    shape and dtype of a contiguous tensor alone, so a kept one is exact."""

    def __init__(self, name: str, args_sig):
        self.name, self.args_sig = name, args_sig
        self.kept = [None] * len(args_sig)

    def __call__(self, values):
        """(descriptors, (address, bytes) spans, copies to keep alive during
        the call) of `values`, or None where one is not a CPU tensor of a
        storage dtype (arrays.import_arguments then names the problem)."""
        if len(values) != len(self.args_sig):
            return None
        descriptors, spans, keep = [], [], []
        for i, value in enumerate(values):
            if (not isinstance(value, torch.Tensor) or value.device.type != "cpu"
                    or value.dtype not in _STORAGE):
                return None
            if not value.is_contiguous():
                value = value.contiguous()
                keep.append(value)
            key = (value.data_ptr(), value.shape, value.dtype)
            kept = self.kept[i]
            if kept is None or kept[0] != key:
                shape = tuple(value.shape)
                _abi.check_argument(self.name, i, _STORAGE[value.dtype], shape, self.args_sig[i])
                kept = self.kept[i] = (key, _abi.descriptor(value.data_ptr(), shape),
                                       (value.data_ptr(), value.numel() * value.element_size()))
            descriptors.append(kept[1])
            spans.append(kept[2])
        return descriptors, spans, keep


def compiled_callable(module, plan: ArgumentPlan, outputs):
    """The function AOTAutograd calls: the graph's inputs in, its outputs out
    (`plan`: tensor_arguments's, `outputs`: split_outputs's split)."""
    tensors, others, dtypes, sizes = outputs
    args_sig, results_sig = module.functions["main"].callable_signature()
    describe = _ArgumentDescriptors("main", args_sig)

    def run(*args):
        values = plan.arguments(args)
        try:
            described = describe(values)
            if described is not None:
                # described[2] (contiguous copies) lives until the call returns.
                outs = module.run_descriptors("main", *described[:2], results_sig)
            else:
                host, _ = arrays.import_arguments(values)
                _abi.check_arguments("main", host, args_sig)
                outs = module.run_host("main", host, results_sig)
        except ArgumentError as e:
            # A static extent taken from the example inputs that this call's
            # tensors do not have: the graph's check of it, like the checks
            # of its dynamic extents in the compiled code.
            raise RuntimeCheckError(f"a compiled graph's argument: {e}") from e
        result = [None] * (len(tensors) + len(others))
        for i, o, d in zip(tensors, outs, dtypes):
            result[i] = _to_torch(o, d)
        if sizes is not None:
            for i, v in zip(others, sizes(*args)):
                result[i] = v
        return tuple(result)

    return run


def split_outputs(gm: torch.fx.GraphModule):
    """Splits the outputs of `gm` into tensors, which it keeps (their
    positions and dtypes are returned), and the rest (symbolic sizes a
    cache hands back, e.g. a sliding window's length), returned as a graph
    of their own that computes them from the same inputs in Python, cheaply:
    the compiled function returns tensors only."""
    output = next(n for n in gm.graph.nodes if n.op == "output")
    values = output.args[0]
    values = list(values) if isinstance(values, (list, tuple)) else [values]
    tensors, others = [], []
    for i, v in enumerate(values):
        val = v.meta.get("val") if isinstance(v, torch.fx.Node) else None
        (tensors if isinstance(val, torch.Tensor) else others).append(i)
    sizes = _copy_returning(gm, [values[i] for i in others]) if others else None
    output.args = (tuple(values[i] for i in tensors),)
    gm.graph.eliminate_dead_code()
    gm.recompile()
    dtypes = [values[i].meta["val"].dtype for i in tensors]
    return tensors, others, dtypes, sizes


def _warn_fallback(report: GraphReport, why: str) -> None:
    report.compiled, report.fallback = False, why
    if why not in _WARNED:
        _WARNED.add(why)
        warnings.warn(f"rope_mlir: graph {report.name} runs in PyTorch: {why}", stacklevel=3)


def _is_lifted_float(example) -> bool:
    """Whether a graph input is a Python float Dynamo passes as a 0-d f64
    tensor (a module's scale, soft-cap or epsilon under dynamic=True)."""
    return (isinstance(example, torch.Tensor) and example.dim() == 0
            and example.dtype == torch.float64)


def _with_constants(gm: torch.fx.GraphModule, example_inputs, values: dict):
    """A copy of `gm` in which input i is the constant values[i] (0-d f64),
    its ops that torch-mlir cannot lower retargeted where another computes
    the same (_decompositions.retarget)."""
    gm = torch.fx.GraphModule(gm, copy.deepcopy(gm.graph))
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for i, value in values.items():
        node = placeholders[i]
        first_op = next(n for n in gm.graph.nodes if n.op != "placeholder")
        with gm.graph.inserting_before(first_op):
            constant = gm.graph.call_function(torch.ops.aten.scalar_tensor.default, (value,),
                                              {"dtype": torch.float64})
        constant.meta = dict(node.meta)
        node.replace_all_uses_with(constant)
    gm.recompile()
    _decompositions.retarget(gm)
    return gm


class GraphFunction:
    """One graph AOTAutograd hands over: compiled at its first call, once per
    set of values of its float inputs (Python floats Dynamo lifts to
    inputs: a scale or a soft-cap must be a constant for the raising to see
    the attention), up to MAX_SPECIALIZATIONS sets, then once with them as
    arguments. What cannot be compiled runs in PyTorch."""

    MAX_SPECIALIZATIONS = 4

    def __init__(self, gm: torch.fx.GraphModule, example_inputs, options):
        self.gm, self.example_inputs, self.options = gm, list(example_inputs), options
        self.floats = [i for i, e in enumerate(self.example_inputs) if _is_lifted_float(e)]
        self.variants: dict[tuple, object] = {}
        self.generic = None
        self.refused = False  # a call was refused by the compiled checks (warned once)

    def __call__(self, *args):
        key = tuple(float(args[i]) for i in self.floats)
        run = self.variants.get(key) or self.generic
        if run is None:
            if len(self.variants) < self.MAX_SPECIALIZATIONS:
                run = self.variants[key] = self._compile(dict(zip(self.floats, key)))
            else:
                run = self.generic = self._compile({})
        try:
            return run(*args)
        except RuntimeCheckError as e:
            # The compiled code checked the extents it relies on before
            # touching memory and found the call outside them (a dim it took
            # as static, a relation the frontend assumed): this call runs in
            # PyTorch instead, with one warning per graph.
            if not self.refused:
                self.refused = True
                warnings.warn(f"rope_mlir: a compiled graph refused its inputs, which run in "
                              f"PyTorch instead: {e}", stacklevel=2)
            return self.gm.forward(*args)

    def _compile(self, constants: dict):
        report = GraphReport(name=f"graph{len(_REPORTS)}", compiled=True,
                             attention_candidates=attention_candidates(self.gm))
        _REPORTS.append(report)
        start = time.perf_counter()
        gm = _with_constants(self.gm, self.example_inputs, constants)
        try:
            outputs = split_outputs(gm)
            if not outputs[0]:
                # Sizes alone (what a cache computes of its length): Python
                # computes them as cheaply as a call would.
                report.compiled = False
                return self.gm.forward
            plan = tensor_arguments(gm, self.example_inputs)
            static_extents(gm)
            simplify_views(gm)
            module = compile_graph(gm, self.options, report)
        except Unsupported as e:
            report.seconds = time.perf_counter() - start
            split = self._split(e, constants, report, gm)
            if split is not None:
                return split
            _warn_fallback(report, str(e))
            return self.gm.forward
        finally:
            report.seconds = time.perf_counter() - start
        report.arguments = len(plan.sources)
        report.results = len(outputs[0])
        return compiled_callable(module, plan, outputs)


    def _split(self, failure: Unsupported, constants: dict, report: GraphReport,
               imported: torch.fx.GraphModule):
        """The graph split around the ops that blocked its import (per-op
        fallback, _fx_split), each part a GraphFunction of its own or run in
        PyTorch; None when nothing compiled would remain. `imported`: the
        graph as the import got it (its inputs tensors only)."""
        gm = _with_constants(self.gm, self.example_inputs, constants)
        found = _fx_split.split_around(gm, failure.ops) if failure.ops else None
        if found is None and failure.importing:
            # The failure names no op of this graph: find them, one by one,
            # else the first node whose lowering fails where it stands.
            refused = _fx_split.unimportable_ops(gm, _imports)
            node = None if refused else _fx_split.first_unimportable_node(imported, _imports)
            found = _fx_split.split_around(gm, refused, (node,) if node else ())
        if found is None:
            return None
        split, parts, ops = found
        report.compiled, report.fallback = False, str(failure)
        report.split_around = ops
        for op in ops:
            if op not in _WARNED:
                _WARNED.add(op)
                warnings.warn(f"rope_mlir: {op} runs in PyTorch ({failure}); the rest of "
                              f"graph {report.name} is compiled around it", stacklevel=3)
        for part in parts:
            if part.compiled:
                delattr(split, part.name)
                setattr(split, part.name,
                        GraphFunction(part.module, part.example_inputs, self.options))
        return split.forward


def backend(gm: torch.fx.GraphModule, example_inputs, options: dict | None = None, **_):
    """The `torch.compile` backend: ``torch.compile(model, backend="rope_mlir",
    options={"query_tile": 32})``; options are rope_mlir.compile's keywords
    (CompileOptions fields and the CPU pipeline's options)."""
    from torch._dynamo.backends.common import aot_autograd
    from torch_mlir.extras.fx_decomp_util import get_decomposition_table

    compile_options = compiler._make_options(None, "cpu", dict(options or {}))

    def forward(graph: torch.fx.GraphModule, inputs):
        return GraphFunction(graph, inputs, compile_options)

    decompositions = {**get_decomposition_table(), **_decompositions.table()}
    return aot_autograd(fw_compiler=forward, decompositions=decompositions)(gm, example_inputs)


def _register() -> None:
    from torch._dynamo.backends.registry import _BACKENDS, register_backend
    if BACKEND_NAME not in _BACKENDS:
        register_backend(name=BACKEND_NAME)(backend)


_register()
