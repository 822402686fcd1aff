# RUN: %python %s | FileCheck %s
"""--rope-raise preserves the meaning of attention: each function of
test/Raising/raise-attention.mlir (frontend spellings of
attention: HF eager with GQA and an iota causal mask, SDPA's scale on the
operands, a divided scale with a mask argument, Gemma 2's soft-cap with a
sliding window, batch 2, linalg.softmax, boolean masks by select (hiding
where false or where true), kv heads tiled rather than grouped, torch-mlir's
tosa spelling, one unbatched head with 2-D matmuls and a `triu` constant,
GQA at batch 2, DiffLlama's V halves repeated back to the kv heads, a
bias over the kv heads repeated to the query heads (Doge), and three near
misses) and of
test/Raising/raise-attention-masks.mlir (masks at S = 512 read
symbolically: compare, `triu`, sliding window, `where(tril)`, a computed
bias, causal and-ed with a padding argument either way, sums of a causal
mask and a padding bias or a bias argument, two near misses) and of
test/Raising/raise-attention-sinks.mlir (gpt-oss's sinks, static and in a
decode step over a cache of dynamic length, here 11 keys; two near
misses) is
compiled as written and after --rope-raise, run on the same
random inputs, and compared with the f64 reference of what it spells
(`reference.attention`). The raised ones must have become rope.attention,
the near misses must not.

Tolerance: rope_testing.attention_atol (f32 logits and accumulation) for both.
The near misses compute something else, so only raised-vs-written is
compared for them (atol likewise).
"""

import re
from pathlib import Path

import numpy as np

from rope_mlir import compiler, reference as ref
import rope_testing as T

RAISING = Path(__file__).resolve().parents[2] / "Raising"
chunks = [c for f in ("raise-attention.mlir", "raise-attention-masks.mlir",
                    "raise-attention-sinks.mlir")
          for c in (RAISING / f).read_text().split("// -----") if "func.func" in c]

# What each function spells, for the reference (GQA is in the shapes).
def expected(name, q, k, v, extra):
    kw = dict(scale=0.25)
    if name in ("eager_gqa_causal", "scale_on_operands", "linalg_softmax",
                "boolean_causal_masked_fill", "unbatched_triu_constant",
                "eager_gqa_causal_batch2", "causal_by_compare", "triu_of_filled",
                "where_tril"):
        kw["causal"] = True
    elif name == "sliding_window":
        kw.update(causal=True, window=128)
    elif name == "computed_bias_operand":
        kw["mask"] = 2.0 * extra[0]
    elif name == "causal_and_padding":
        kw.update(causal=True, mask=extra[0])
    elif name == "causal_and_padding_hiding_where_true":
        kw.update(causal=True, mask=~extra[0])
    elif name in ("causal_plus_padding_bias", "causal_plus_bias_operand"):
        kw.update(causal=True, mask=extra[0])
    elif name == "differential_value_half":
        # V's first kv head for every query head (no mask).
        v = np.repeat(v[:, :1], 2, axis=1)
    elif name == "kv_head_mask_gathered":
        kw["mask"] = np.repeat(extra[0], 2, axis=1)  # the kv heads' bias, repeated
    elif name == "tiled_kv_heads_not_grouped":
        # Query head h reads kv head h mod Hkv: K and V tiled over the heads.
        kw["causal"] = True
        k, v = np.tile(k, (1, 2, 1, 1)), np.tile(v, (1, 2, 1, 1))
    elif name == "tosa_causal":
        kw.update(causal=True, scale=0.125)
    elif name == "softcap_window":
        kw.update(causal=True, window=3, softcap=50.0)
    elif name in ("divided_scale_mask_operand", "boolean_mask_operand"):
        kw["mask"] = extra[0]
    elif name == "boolean_mask_hiding_where_true":
        kw["mask"] = ~extra[0]
    elif name.startswith("sinks_"):
        kw["sinks"] = extra[0].reshape(-1)  # one logit per query head
    if q.ndim == 2:  # one head, unbatched: [S, D]
        return ref.attention(q[None, None], k[None, None], v[None, None], **kw)[0, 0]
    return ref.attention(q, k, v, **kw)


rng = T.rng(5)
for chunk in chunks:
    name = re.search(r"func\.func @(\w+)\(", chunk).group(1)
    sig = re.search(r"func\.func @\w+\((.*?)\) ->", chunk).group(1)
    types = re.findall(r"tensor<([0-9x?]+)x(f32|i1)>", sig)
    args = []
    for dims, elt in types:
        shape = tuple(11 if d == "?" else int(d) for d in dims.split("x"))
        if elt == "i1":
            a = rng.random(shape) < 0.7
            a[..., 0] = True  # every row sees a key
            args.append(~a if "hiding_where_true" in name else a)
        else:
            args.append(T.quantize(rng.standard_normal(shape), "f32"))
    text = chunk.replace("func.func @" + name, "func.func @kernel")
    module = text  # each chunk carries its own affine map aliases
    raised = compiler.lower(module, "--rope-raise")
    with T.guard(name):
        near_miss = name.startswith("no_raise")
        assert ("rope.attention" in raised) != near_miss, f"{name}: raised={not near_miss} expected"
        stored = [a if a.dtype == bool else T.to_storage(a, "f32") for a in args]
        written = T.call(T.compile(module), "kernel", *stored)
        out = T.call(T.compile(raised), "kernel", *stored)
        q, k, v = args[:3]
        if q.ndim == 2:  # one head, unbatched
            atol = T.attention_atol(q[None, None], k[None, None], v[None, None],
                                    scale=0.25)[0, 0]
        else:
            atol = T.attention_atol(q, k, v, scale=0.25)
        if near_miss:
            T.check(out, written, atol, name)
        else:
            want = expected(name, q, k, v, args[3:])
            T.check(written, want, atol, name + " (as written)")
            T.check(out, want, atol, name)
T.finish()

# CHECK: PASS eager_gqa_causal
# CHECK: PASS scale_on_operands
# CHECK: PASS divided_scale_mask_operand
# CHECK: PASS softcap_window
# CHECK: PASS batched_unmasked
# CHECK: PASS linalg_softmax
# CHECK: PASS boolean_mask_operand
# CHECK: PASS boolean_causal_masked_fill
# CHECK: PASS tiled_kv_heads_not_grouped
# CHECK: PASS no_raise_unnormalised
# CHECK: PASS no_raise_softmax_over_queries
# CHECK: PASS tosa_causal
# CHECK: PASS no_raise_tosa_sum_over_queries
# CHECK: PASS unbatched_triu_constant
# CHECK: PASS boolean_mask_hiding_where_true
# CHECK: PASS eager_gqa_causal_batch2
# CHECK: PASS differential_value_half
# CHECK: PASS kv_head_mask_gathered
# CHECK: PASS causal_by_compare
# CHECK: PASS triu_of_filled
# CHECK: PASS sliding_window
# CHECK: PASS where_tril
# CHECK: PASS computed_bias_operand
# CHECK: PASS causal_and_padding
# CHECK: PASS causal_and_padding_hiding_where_true
# CHECK: PASS no_raise_transposed_mask
# CHECK: PASS causal_plus_padding_bias
# CHECK: PASS causal_plus_bias_operand
# CHECK: PASS no_raise_two_mask_operands
# CHECK: PASS sinks_static
# CHECK: PASS sinks_decode_dynamic
# CHECK: PASS no_raise_sinks_per_row
# CHECK: PASS no_raise_sink_column_kept
