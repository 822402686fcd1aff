# RUN: %python %s | FileCheck %s
"""Random differential test: seeded random cases compiled for the CPU and
compared with the f64 reference (python/rope_mlir/reference.py).

Each case is one function. There are five pipelines: the default CPU one
(rotation folded into attention, online-softmax tiles), the plain one
(fold-rotation=false decompose-attention=false), tiny tiles (query-tile=3
key-tile=5), split-K (split-keys=3 key-tile=2), and the GPU pipeline's
mapping run on the CPU (--rope-test-gpu-mapping-on-cpu); each compiles one
module of the cases selected for it.

A pool of 300 cases is drawn (below); each case records its classes (its
op, and e.g. "mask additive f32", "GQA", "decode", "window", "rotate kind
yarn", "bad call positions"). `select` then gives every pipeline a subset
of the pool that covers every class the pool has (about 25 cases, 11 of
them attention), and the output shows that each pipeline covered them all.
Compilation is where the time goes (a few seconds per attention case, a
tenth of that for the others), and covering each class once per pipeline
is what the pool's other cases repeated: the whole pool, each case through
one pipeline as this test once ran it, left 7 to 22 classes of the pool
out of each pipeline, at twice the compile time (`--every-case` runs it
so).

What is drawn, per case:
* rotate: every scaling kind (default, linear, dynamic, yarn, llama3,
  longrope, freq_factors) with random parameters, both layouts, partial
  rotary (dims, offset), explicit attention factor, inverse; f32/f16/bf16
  storage; rank 2-4 with any sequence dim; positions [S] or [B, S] as
  i16/i32/i64 up to 2^20; any dim but the head dim dynamic (?), and then
  called at two different sizes;
* attention: B, Hq = g·Hkv (MHA, GQA, MQA), prefill (Sq = Sk) or decode
  (Sq < Sk, queries after the cache), causal or not, default or explicit
  [S]/[B, S] positions, rotary inside or not, i1 or additive (f32 or
  storage type) masks of rank 2-4 with broadcast dims, explicit scale,
  Dv != D, dynamic B/Sq/Sk; f32/f16/bf16; a sliding window (causal),
  soft-capping, sinks, ALiBi slopes and a T5 relative bias table with
  random buckets;
* rotated attention written as rope.rotate ops feeding rope.attention
  (f32; the default pipeline folds them into the attention);
* linear attention (causal or not, rotary or not, positions) and the
  sinusoidal encoding;
* edge cases, from a generator of their own (one per 15 pool cases):
  composed rotations (rope.rotate of rope.rotate) with i16/i32/i64
  positions near their type's limits, whose composed sum must not wrap,
  and static sequences of 0 or 1 rows; attention with one static dim of 0
  (batch, heads, either sequence, either head dim).

Tolerances are those of rope_testing.py (see there for the derivations):
rotation_atol (2 f32 ulps at the pair norm, 3 when m != 1, plus a storage
ulp), attention_atol (+ ulp_f32(max|v|)·max|mask| for additive masks),
linear_attention_atol, and 2^-22 (+ a storage ulp) for the sinusoidal
encoding. A failure prints the case's spec, shapes and inputs' summary;
`--cases N --seed S` reproduces a run or draws another pool (its classes
covered the same way), `--every-case` runs every case of the pool,
`--emit-seeds DIR` writes each case's function to DIR as a rope-fuzz seed.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rope_mlir import reference as ref
import rope_testing as T

PIPELINES = [
    ("default", "--rope-lower-to-cpu"),
    ("plain", "--rope-lower-to-cpu=fold-rotation=false decompose-attention=false"),
    ("tiny-tiles", "--rope-lower-to-cpu=query-tile=3 key-tile=5"),
    # Split-K: keys in 3 partial states merged exactly, key tiles of 2.
    ("split-keys", "--rope-lower-to-cpu=split-keys=3 key-tile=2"),
    # The GPU pipeline's mapping (device buffers, loops to kernels), with the
    # kernels run as host loops (docs/gpu.md).
    ("gpu-mapping", "--rope-test-gpu-mapping-on-cpu"),
]
KINDS = ("default", "linear", "dynamic", "yarn", "llama3", "longrope", "freq_factors")
DTYPES = ("f32", "f16", "bf16")

# ---------------------------------------------------------------------------
# Text helpers
# ---------------------------------------------------------------------------


def flt(x: float) -> str:
    """A float literal MLIR parses back to the same double."""
    s = repr(float(x))
    if "e" in s and "." not in s.split("e")[0]:
        m, e = s.split("e")
        s = f"{m}.0e{e}"
    elif "." not in s and "e" not in s:
        s += ".0"
    return s


def flist(xs) -> str:
    return "[" + ", ".join(flt(x) for x in xs) + "]"


def ttype(shape, elt, dynamic=()) -> str:
    dims = ["?" if i in dynamic else str(d) for i, d in enumerate(shape)]
    return "tensor<" + "x".join(dims + [elt]) + ">"


# ---------------------------------------------------------------------------
# Random specs
# ---------------------------------------------------------------------------


def nice(g, lo, hi, digits=3):
    """A random float in [lo, hi) with few digits (readable in the IR)."""
    return float(round(g.uniform(lo, hi), digits))


def random_spec(g, head_dim: int, max_pos_hint: int):
    """(spec attribute text, reference.RotarySpec, short description)."""
    kind = KINDS[g.integers(len(KINDS))]
    # Rotary dims r (even) and offset: full, partial, or partial with offset.
    min_r = 4 if kind == "dynamic" else 2
    if head_dim < min_r:
        kind = "default"
        min_r = 2
    r, offset, dims_attr = head_dim, 0, None
    roll = g.random()
    if roll < 0.35:
        r = 2 * int(g.integers(min_r // 2, head_dim // 2 + 1))
        dims_attr = r
        if g.random() < 0.5 and head_dim > r:
            offset = int(g.integers(0, head_dim - r + 1))
    elif roll < 0.45:
        dims_attr = head_dim  # explicit full
    h = r // 2
    layout = "interleaved" if g.random() < 0.5 else "half"
    base = float(g.choice([10000.0, 500000.0, 1000000.0, 100.0, nice(g, 2.0, 50000.0, 1)]))
    l_orig = int(g.choice([16, 64, 256, 4096, 8192]))
    if kind in ("dynamic", "longrope"):
        # Put the largest position below or above L_orig.
        l_orig = int(g.choice([16, 32, 64, 128]))
    parts, scal_attr = [], None
    if kind == "linear":
        f = nice(g, 0.5, 16.0)
        sc = ref.Scaling("linear", factor=f)
        scal_attr = f"#rope.linear<factor = {flt(f)}>"
    elif kind == "dynamic":
        f = nice(g, 1.0, 8.0)
        sc = ref.Scaling("dynamic", factor=f, original_max_position_embeddings=l_orig)
        scal_attr = f"#rope.dynamic<factor = {flt(f)}, original_max_position_embeddings = {l_orig}>"
    elif kind == "yarn":
        f = nice(g, 1.0, 40.0)
        bf = float(g.choice([32.0, nice(g, 8.0, 64.0)]))
        bs = float(g.choice([1.0, nice(g, 0.25, 4.0)]))
        mscale = mscale_all = None
        if g.random() < 0.3:
            mscale, mscale_all = nice(g, 0.5, 2.0), nice(g, 0.5, 2.0)
        trunc = bool(g.random() < 0.7)
        sc = ref.Scaling("yarn", factor=f, original_max_position_embeddings=l_orig, beta_fast=bf,
                         beta_slow=bs, mscale=mscale, mscale_all_dim=mscale_all, truncate=trunc)
        extra = ""
        if mscale is not None:
            extra = f", mscale = {flt(mscale)}, mscale_all_dim = {flt(mscale_all)}"
        scal_attr = (f"#rope.yarn<factor = {flt(f)}, original_max_position_embeddings = {l_orig}, "
                     f"beta_fast = {flt(bf)}, beta_slow = {flt(bs)}{extra}, "
                     f"truncate = {'true' if trunc else 'false'}>")
    elif kind == "llama3":
        f = nice(g, 1.0, 16.0)
        lo = nice(g, 0.5, 2.0)
        hi = lo + nice(g, 0.5, 6.0)
        sc = ref.Scaling("llama3", factor=f, low_freq_factor=lo, high_freq_factor=hi,
                         original_max_position_embeddings=l_orig)
        scal_attr = (f"#rope.llama3<factor = {flt(f)}, low_freq_factor = {flt(lo)}, "
                     f"high_freq_factor = {flt(hi)}, original_max_position_embeddings = {l_orig}>")
    elif kind == "longrope":
        short = tuple(nice(g, 0.5, 4.0) for _ in range(h))
        long_ = tuple(nice(g, 1.0, 64.0) for _ in range(h))
        f = float(g.choice([1.0, nice(g, 1.0, 32.0)]))
        sc = ref.Scaling("longrope", short_factor=short, long_factor=long_, factor=f,
                         original_max_position_embeddings=l_orig)
        scal_attr = (f"#rope.longrope<short_factor = {flist(short)}, long_factor = {flist(long_)}, "
                     f"factor = {flt(f)}, original_max_position_embeddings = {l_orig}>")
    elif kind == "freq_factors":
        ff = tuple(nice(g, 0.25, 32.0) for _ in range(h))
        sc = ref.Scaling("freq_factors", freq_factors=ff)
        scal_attr = f"#rope.freq_factors<factors = {flist(ff)}>"
    else:
        sc = ref.Scaling()
    m = None
    if g.random() < 0.2:
        m = nice(g, 0.5, 2.0)
    inverse = bool(g.random() < 0.2)

    if base != 10000.0 or g.random() < 0.2:
        parts.append(f"base = {flt(base)}")
    if dims_attr is not None:
        parts.append(f"dims = {dims_attr}")
    if offset:
        parts.append(f"offset = {offset}")
    if layout == "interleaved":
        parts.append("layout = interleaved")
    elif g.random() < 0.2:
        parts.append("layout = half")
    if scal_attr:
        parts.append(f"scaling = {scal_attr}")
    if m is not None:
        parts.append(f"attention_factor = {flt(m)}")
    if inverse:
        parts.append("inverse = true")
    attr = "#rope.spec<" + ", ".join(parts) + ">"
    spec = ref.RotarySpec(base=base, rotary_dims=dims_attr, offset=offset, layout=layout,
                          scaling=sc, attention_factor=m, inverse=inverse)
    # Written out here rather than by spec.to_attr(): the drawn spellings
    # include defaults the printer omits (base = 10000.0, layout = half, a
    # full `dims`, truncate = true), so rope-opt's parser sees them. They must
    # still read back as the spec.
    assert ref.RotarySpec.from_attr(attr) == spec, (attr, spec)
    return attr, spec, kind


def random_positions(g, shape, kind, l_orig, dtype="i64", monotone=False, start=0):
    """Integer positions of `shape`; for the length-dependent kinds the
    largest one lands below or above L_orig."""
    limit = {"i16": (1 << 15) - 1, "i32": 1 << 20, "i64": 1 << 20}[dtype]
    n = int(np.prod(shape)) if len(shape) else 1
    if kind in ("dynamic", "longrope"):
        hi = int(g.choice([l_orig - 1, l_orig, 2 * l_orig, 50 * l_orig]))
        hi = max(1, min(hi, limit))
        p = g.integers(0, hi, size=shape)
        if n and g.random() < 0.7:
            p.flat[g.integers(n)] = hi  # make the maximum what was aimed at
    elif monotone:
        p = start + np.arange(shape[-1]) + np.zeros(shape, np.int64)
    else:
        scale = int(g.choice([16, 1000, 1 << 17, limit]))
        p = g.integers(0, scale + 1, size=shape)
    return p.astype({"i16": np.int16, "i32": np.int32, "i64": np.int64}[dtype])


# ---------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------


@dataclass
class Case:
    name: str
    desc: str
    func: str                # MLIR text of the function
    runs: list = field(default_factory=list)  # [(args, expected, atol, dtype)]
    kind: str = ""
    # Calls that break a shape relation on dynamic dims:
    # [(args, the runtime check's expected message, what was changed)].
    bad: list = field(default_factory=list)
    # The classes of case this one belongs to ("attention mask i1", "rotate
    # kind yarn", ...): what the selection of cases must cover (`select`).
    classes: set = field(default_factory=set)

    def tag(self, *names):
        self.classes.update(f"{self.kind} {n}" for n in names)


def spec_classes(spec, kind: str, head_dim: int, kinds: bool = True) -> list:
    """The classes of a drawn rotary spec (random_spec's choices). Without
    `kinds`, the scaling kinds are told apart only by whether the frequencies
    depend on the largest position (dynamic, longrope): how the tables are
    made is rope.rotate's, whose cases cover every kind; what an op that
    rotates inside (attention) adds is where the positions come from."""
    if kinds:
        out = [f"kind {kind}"]
    else:
        out = ["length-dependent kind" if kind in ("dynamic", "longrope") else "fixed kind"]
    out.append(f"layout {spec.layout}")
    if spec.rotary_dims is not None and spec.rotary_dims < head_dim:
        out.append("partial")
    if spec.offset:
        out.append("offset")
    if spec.attention_factor is not None:
        out.append("attention factor")
    if spec.inverse:
        out.append("inverse")
    return out


def bad_rng(idx: int):
    """The generator of a case's bad calls, apart from the case's own draws
    (adding bad calls leaves every good case of a seed as it was)."""
    return np.random.default_rng(0xBAD + idx)


def resized(a, dim: int, n: int):
    """`a` with extent `n` along `dim` (its slices repeated or cut)."""
    return np.ascontiguousarray(np.take(a, np.arange(n) % a.shape[dim], axis=dim))


def other_extent(g, n: int) -> int:
    return int(g.choice([m for m in (n - 1, n + 1, n + 2, 2 * n + 1) if m >= 1 and m != n]))


def add_bad_call(case, args, index, dim, g, message, label=None):
    """A bad call of `case`: argument `index` resized along `dim` to an extent
    `m` drawn by `g`; `message(m)` is what the check must say. Its class:
    `label`, else the argument and dim."""
    a = args[index]
    if a.shape[dim] == 0:
        return
    m = other_extent(g, a.shape[dim])
    bad = list(args)
    bad[index] = resized(a, dim, m)
    case.bad.append((bad, message(m), f"argument {index} dim {dim}: {a.shape[dim]} -> {m}"))
    case.tag(f"bad call {label or f'argument {index} dim {dim}'}")


def data(g, shape, dtype, scale=1.0):
    return T.quantize(scale * g.standard_normal(shape), dtype)


def rotate_case(g, idx):
    dtype = DTYPES[g.integers(3)]
    rank = int(g.integers(2, 5))
    D = int(g.choice([2, 4, 6, 8, 12, 16, 32]))
    attr, spec, kind = random_spec(g, D, 0)
    l_orig = spec.scaling.original_max_position_embeddings or 64
    seq_dim = int(g.integers(0, rank - 1))  # any dim but the head dim
    per_batch = rank >= 3 and seq_dim != 0 and g.random() < 0.4
    pdt = str(g.choice(["i64", "i64", "i32", "i16"]))
    dynamic = {i for i in range(rank - 1) if g.random() < 0.35}
    # seq_dim as written: omitted when -2, else positive or negative.
    sd_attr = ""
    if seq_dim != rank - 2 or g.random() < 0.2:
        sd_attr = f" seq_dim = {seq_dim if g.random() < 0.5 else seq_dim - rank}"

    def shape():
        s = [int(g.integers(1, 4)) for _ in range(rank - 1)] + [D]
        s[seq_dim] = int(g.integers(1, 9))
        return s

    s0 = shape()
    pshape0 = [s0[0], s0[seq_dim]] if per_batch else [s0[seq_dim]]
    pdyn = set()
    if seq_dim in dynamic:
        pdyn.add(len(pshape0) - 1)
    if per_batch and 0 in dynamic:
        pdyn.add(0)
    xt = ttype(s0, dtype, dynamic)
    pt = ttype(pshape0, pdt, pdyn)
    fname = f"rotate_{idx}"
    func = (f"func.func @{fname}(%x: {xt}, %p: {pt}) -> {xt} {{\n"
            f"  %r = rope.rotate %x, %p rotary({attr}){sd_attr} : {xt}, {pt}\n"
            f"  return %r : {xt}\n}}\n")
    desc = (f"rope.rotate {attr}{sd_attr} x:{xt} positions:{pt} ({kind}, {spec.layout}, "
            f"r={spec.rotary_dims or D}, offset={spec.offset}, m={ref.attention_factor(spec):.4g}, "
            f"inverse={spec.inverse})")
    case = Case(fname, desc, func, kind="rotate")
    shapes = [s0]
    if dynamic:
        s1 = shape()
        for i in range(rank):
            if i not in dynamic:
                s1[i] = s0[i]
            elif kind not in ("dynamic", "longrope") and g.random() < 0.1:
                s1[i] = 0  # empty at run time
        shapes.append(s1)
    ulps = 2 if ref.attention_factor(spec) == 1.0 else 3
    for s in shapes:
        x = data(g, s, dtype, scale=float(g.choice([1.0, 100.0, 1e-3])))
        ps = [s[0], s[seq_dim]] if per_batch else [s[seq_dim]]
        p = random_positions(g, ps, kind, l_orig, pdt)
        expected = ref.rotate(x, p, spec, seq_dim=seq_dim)
        atol = T.rotation_atol(x, spec, dtype, ulps)
        case.runs.append(([T.to_storage(x, dtype), p], expected, atol, dtype,
                          f"x{tuple(s)} positions{tuple(ps)} max={int(p.max()) if p.size else None}"))
    case.tag(dtype, f"rank {rank}", f"positions {pdt}", *spec_classes(spec, kind, D))
    if seq_dim != rank - 2:
        case.tag("seq_dim not -2")
    if per_batch:
        case.tag("positions [B, S]")
    if dynamic:
        case.tag("dynamic dims")
    if any(0 in s for s in shapes):
        case.tag("empty at run time")
    gb, good = bad_rng(idx), case.runs[0][0]
    seq, nb = s0[seq_dim], s0[0]
    if seq_dim in dynamic:
        add_bad_call(case, good, 1, len(pshape0) - 1, gb, lambda m: (
            f"'rope.rotate' op expects positions to have {seq} entries along the sequence, got {m}"),
            label="positions sequence")
        add_bad_call(case, good, 0, seq_dim, gb, lambda m: (
            f"'rope.rotate' op expects positions to have {m} entries along the sequence, got {seq}"))
    if per_batch and 0 in dynamic:
        add_bad_call(case, good, 1, 0, gb, lambda m: (
            f"'rope.rotate' op expects positions to have batch extent {nb}, got {m}"))
    return case


def mask_args(g, B, Hq, Sq, Sk, dtype):
    """(mask array as given to the kernel, mask for the reference, mlir type,
    extra tolerance factor max|mask|)."""
    rank = int(g.integers(2, 5))
    full = [B, Hq, Sq, Sk][4 - rank:]
    shape = [1 if g.random() < 0.3 else d for d in full]
    if g.random() < 0.5:
        m = g.random(shape) < 0.8
        return m, m, ttype(shape, "i1"), 0.0
    elt = dtype if g.random() < 0.5 else "f32"
    vals = 2.0 * g.standard_normal(shape)
    if g.random() < 0.3:
        vals = np.where(g.random(shape) < 0.15, -np.inf, vals)
    vals = T.quantize(vals, elt)
    finite = vals[np.isfinite(vals)]
    return T.to_storage(vals, elt), vals, ttype(shape, elt), float(np.abs(finite).max()) if finite.size else 0.0


def attention_case(g, idx, unfused=False):
    dtype = "f32" if unfused else DTYPES[g.integers(3)]
    B = int(g.integers(1, 3))
    Hkv = int(g.choice([1, 2]))
    grp = int(g.choice([1, 2, 3]))
    Hq = Hkv * grp
    D = int(g.choice([4, 8, 16, 32]))
    Dv = D if g.random() < 0.7 else int(g.choice([4, 8, 12]))
    Sk = int(g.integers(1, 13))
    Sq = Sk if g.random() < 0.5 else int(g.integers(1, Sk + 1))
    causal = bool(g.random() < 0.5)
    rotary = unfused or g.random() < 0.6
    attr = spec = None
    kind = "none"
    if rotary:
        attr, spec, kind = random_spec(g, D, Sk)
    l_orig = spec.scaling.original_max_position_embeddings if spec else None
    explicit = unfused or g.random() < 0.5
    per_batch = explicit and g.random() < 0.4
    shared = unfused and Sq == Sk and not per_batch and g.random() < 0.5
    use_mask = (not unfused) and g.random() < 0.35
    scale = nice(g, 0.05, 0.6) if g.random() < 0.3 else None
    dyn = {i for i in (0, 2) if g.random() < 0.3}  # B and S dims
    qt = ttype([B, Hq, Sq, D], dtype, dyn)
    kt = ttype([B, Hkv, Sk, D], dtype, dyn)
    vt = ttype([B, Hkv, Sk, Dv], dtype, dyn)
    rt = ttype([B, Hq, Sq, Dv], dtype, dyn)

    q = data(g, (B, Hq, Sq, D), dtype)
    k = data(g, (B, Hkv, Sk, D), dtype)
    v = data(g, (B, Hkv, Sk, Dv), dtype, scale=float(g.choice([1.0, 3.0])))
    params = [f"%q: {qt}", f"%k: {kt}", f"%v: {vt}"]
    args = [T.to_storage(a, dtype) for a in (q, k, v)]
    opnds = ""
    mask_ref, mask_mag = None, 0.0
    if use_mask:
        marr, mask_ref, mt, mask_mag = mask_args(g, B, Hq, Sq, Sk, dtype)
        params.append(f"%m: {mt}")
        args.append(marr)
        opnds += f" mask(%m : {mt})"
    qp = kp = None
    pdesc = "default positions"
    if explicit:
        pdt = "i64" if g.random() < 0.7 else "i32"
        npdt = np.int64 if pdt == "i64" else np.int32
        if kind in ("dynamic", "longrope"):
            shp_q = (B, Sq) if per_batch else (Sq,)
            shp_k = (B, Sk) if per_batch else (Sk,)
            kp = random_positions(g, shp_k, kind, l_orig, pdt)
            qp = kp if shared else random_positions(g, shp_q, kind, l_orig, pdt)
        else:
            # Keys at a cache offset, queries after the first Sk - Sq keys
            # (decode), with a random per-row start; or random positions.
            starts = g.integers(0, int(g.choice([1, 100, 1 << 16])), size=B if per_batch else 1)
            if g.random() < 0.7:
                kp = np.stack([s + np.arange(Sk) for s in starts]).astype(npdt)
                qp = kp[:, Sk - Sq:].copy()
            else:
                kp = g.integers(0, 1 << 12, size=(len(starts), Sk)).astype(npdt)
                qp = g.integers(0, 1 << 12, size=(len(starts), Sq)).astype(npdt)
            if not per_batch:
                kp, qp = kp[0], qp[0]
            if shared:
                qp = kp
        pdyn_q = {qp.ndim - 1} if 2 in dyn else set()
        if per_batch and 0 in dyn:
            pdyn_q.add(0)
        qpt = ttype(qp.shape, pdt, pdyn_q)
        kpt = ttype(kp.shape, pdt, pdyn_q)
        if shared:
            params.append(f"%qp: {qpt}")
            args.append(qp)
            kname = "%qp"
        else:
            params += [f"%qp: {qpt}", f"%kp: {kpt}"]
            args += [qp, kp]
            kname = "%kp"
        pdesc = f"positions q{qp.shape} k{kp.shape} {pdt}{' shared' if shared else ''}"
    attrs = ""
    body = ""
    qv, kv = "%q", "%k"
    if unfused:
        body += f"  %qr = rope.rotate %q, %qp rotary({attr}) : {qt}, {qpt}\n"
        body += f"  %kr = rope.rotate %k, {kname} rotary({attr}) : {kt}, {kpt if not shared else qpt}\n"
        qv, kv = "%qr", "%kr"
        if causal:
            opnds += f" positions(%qp, {kname} : {qpt}, {kpt if not shared else qpt})"
    else:
        if explicit:
            opnds += f" positions(%qp, {kname} : {qpt}, {kpt if not shared else qpt})"
        if rotary:
            attrs += f" rotary({attr})"
    if causal:
        attrs += " causal"
    # Window, soft-cap, sinks, ALiBi and T5 bias (not with the unfused
    # spelling: the fold leaves attention with default positions alone).
    extras = {}
    extra_bound = 0.0
    if not unfused:
        if causal and g.random() < 0.25:
            extras["window"] = int(g.integers(1, Sk + 2))
            attrs += f" window = {extras['window']}"
        if g.random() < 0.2:
            extras["softcap"] = nice(g, 0.5, 10.0)
            attrs += f" softcap = {flt(extras['softcap'])}"
            extra_bound += extras["softcap"]
    if scale is not None:
        attrs += f" scale = {flt(scale)}"
    if not unfused:
        pq = qp if qp is not None else np.arange(Sk - Sq, Sk)
        pk = kp if kp is not None else np.arange(Sk)
        if g.random() < 0.2:
            sinks = T.quantize(2.0 * g.standard_normal(Hq), "f32")
            params.append(f"%s: {ttype([Hq], 'f32')}")
            args.append(sinks.astype(np.float32))
            attrs += f" sinks(%s : {ttype([Hq], 'f32')})"
            extras["sinks"] = sinks
            extra_bound += float(np.max(np.abs(sinks)))
        if g.random() < 0.2:
            slopes = ref.alibi_slopes(Hq) * float(g.choice([1.0, 0.01]))
            slopes = T.quantize(slopes, "f32")
            params.append(f"%a: {ttype([Hq], 'f32')}")
            args.append(slopes.astype(np.float32))
            attrs += f" alibi(%a : {ttype([Hq], 'f32')})"
            extras["alibi_slopes"] = slopes
            dist = np.abs(np.asarray(pq, dtype=np.float64).max() - np.asarray(pk, dtype=np.float64).min())
            dist = max(dist, np.abs(np.asarray(pk, dtype=np.float64).max() - np.asarray(pq, dtype=np.float64).min()))
            extra_bound += float(np.max(np.abs(slopes))) * float(dist)
        if g.random() < 0.15:
            bidir = bool(g.random() < 0.5)
            nb = int(g.choice([4, 8, 32])) if bidir else int(g.choice([2, 8, 32]))
            max_exact = (nb // 2 if bidir else nb) // 2
            md = int(max_exact + g.integers(1, 200))
            table = T.quantize(g.standard_normal((nb, Hq)), "f32")
            params.append(f"%t: {ttype([nb, Hq], 'f32')}")
            args.append(table.astype(np.float32))
            attrs += (f" relative_bias(%t : {ttype([nb, Hq], 'f32')}) buckets(#rope.buckets<"
                      f"num_buckets = {nb}, max_distance = {md}, bidirectional = {'true' if bidir else 'false'}>)")
            extras["relative_bias"] = table
            extras["relative_buckets"] = (nb, md, bidir)
            extra_bound += float(np.max(np.abs(table)))
    fname = f"{'unfused' if unfused else 'attention'}_{idx}"
    func = (f"func.func @{fname}({', '.join(params)}) -> {rt} {{\n{body}"
            f"  %r = rope.attention {qv}, {kv}, %v{opnds}{attrs} : {qt}, {kt}, {vt}\n"
            f"  return %r : {rt}\n}}\n")
    desc = (f"rope.attention{' (as rotate ops)' if unfused else ''} {dtype} B={B} Hq={Hq} Hkv={Hkv} "
            f"Sq={Sq} Sk={Sk} D={D} Dv={Dv} causal={causal} scale={scale} {pdesc} "
            f"mask={'none' if mask_ref is None else (str(mask_ref.dtype) + str(mask_ref.shape))} "
            f"rotary={attr} ({kind}) types q:{qt} k:{kt} v:{vt}"
            f"{' extras=' + ','.join(sorted(extras)) if extras else ''}")
    case = Case(fname, desc, func, kind="unfused" if unfused else "attention")
    if unfused:
        qr = ref.rotate(q, qp, spec, seq_dim=2)
        kr = ref.rotate(k, kp, spec, seq_dim=2)
        expected = ref.attention(qr, kr, v, scale=scale, causal=causal,
                                 q_positions=qp if causal else None,
                                 k_positions=kp if causal else None)
        atol = T.attention_atol(qr, kr, v, scale=scale)
    else:
        expected = ref.attention(q, k, v, scale=scale, causal=causal, mask=mask_ref, rotary=spec,
                                 q_positions=qp, k_positions=kp, **extras)
        atol = T.attention_atol(q, k, v, scale=scale, rotary=spec, dtype=dtype)
        vmax = float(np.max(np.abs(v)))
        atol = atol + T.ulp(vmax, "f32") * (mask_mag + extra_bound)
    case.runs.append((args, expected, atol, dtype, ""))
    case.tag(dtype, "MHA" if grp == 1 else ("MQA" if Hkv == 1 else "GQA"),
             "prefill" if Sq == Sk else "decode", "causal" if causal else "not causal",
             "rotary" if rotary else "no rotary",
             *(spec_classes(spec, kind, D, kinds=False) if rotary else []))
    if explicit:
        case.tag(f"positions {'[B, S]' if per_batch else '[S]'}", f"positions {pdt}")
        if shared:
            case.tag("positions shared")
    else:
        case.tag("default positions")
    if mask_ref is not None:
        mtype = "i1" if mask_ref.dtype == bool else (
            "additive f32" if mt.endswith("xf32>") else "additive storage type")
        case.tag(f"mask {mtype}", f"mask rank {mask_ref.ndim}")
        full = [B, Hq, Sq, Sk][4 - mask_ref.ndim:]
        if any(m == 1 and d > 1 for m, d in zip(mask_ref.shape, full)):
            case.tag("mask broadcast")
        if mask_ref.dtype != bool and np.isinf(mask_ref).any():
            case.tag("mask -inf")
    if scale is not None:
        case.tag("explicit scale")
    if Dv != D:
        case.tag("Dv != D")
    if B > 1:
        case.tag("batch 2")
    if Sq == 1:
        case.tag("one query")
    case.tag(*(f"dynamic {n}" for i, n in ((0, "B"), (2, "S")) if i in dyn),
             *sorted(set(extras) - {"relative_buckets"}))
    # Several tiles of the tiled configurations (query tiles of 3, key
    # tiles of 5 and 3, split-K key tiles of 2).
    if Sq > 3:
        case.tag("several query tiles")
    if Sk > 5:
        case.tag("several key tiles")
    if not unfused:
        gb = bad_rng(idx)
        if 2 in dyn:
            add_bad_call(case, args, 2, 2, gb, lambda m: (
                f"'rope.attention' op expects key and value to have the same sequence length, "
                f"got {Sk} and {m}"))
        if 0 in dyn:
            add_bad_call(case, args, 1, 0, gb, lambda m: (
                f"'rope.attention' op expects query, key and value to share the batch extent, "
                f"got {B} (query) and {m} (key)"))
        if 2 in dyn and explicit:
            qp_index = 4 if use_mask else 3
            add_bad_call(case, args, qp_index, args[qp_index].ndim - 1, gb, lambda m: (
                f"'rope.attention' op expects query positions to have {Sq} entries along the "
                f"sequence, got {m}"), label="query positions")
    return case


def linear_attention_case(g, idx):
    dtype = "f32" if g.random() < 0.6 else "f16"
    B, H = int(g.integers(1, 3)), int(g.integers(1, 3))
    S = int(g.integers(1, 10))
    D = int(g.choice([4, 8, 16]))
    Dv = int(g.choice([4, 8]))
    causal = bool(g.random() < 0.5)
    rotary = g.random() < 0.7
    attr = spec = None
    kind = "none"
    if rotary:
        attr, spec, kind = random_spec(g, D, S)
    dyn = {i for i in (0, 2) if g.random() < 0.3}
    qt = ttype([B, H, S, D], dtype, dyn)
    vt = ttype([B, H, S, Dv], dtype, dyn)
    q, k = data(g, (B, H, S, D), dtype), data(g, (B, H, S, D), dtype)
    v = data(g, (B, H, S, Dv), dtype)
    params = [f"%q: {qt}", f"%k: {qt}", f"%v: {vt}"]
    args = [T.to_storage(a, dtype) for a in (q, k, v)]
    pos = None
    opnds = ""
    if g.random() < 0.5:
        l_orig = spec.scaling.original_max_position_embeddings if spec else 64
        shp = (B, S) if g.random() < 0.4 else (S,)
        pos = random_positions(g, shp, kind, l_orig or 64, "i64")
        pt = ttype(shp, "i64", {len(shp) - 1} if 2 in dyn else set())
        params.append(f"%p: {pt}")
        args.append(pos)
        opnds = f" positions(%p : {pt})"
    attrs = (f" rotary({attr})" if rotary else "") + (" causal" if causal else "")
    fname = f"linear_{idx}"
    func = (f"func.func @{fname}({', '.join(params)}) -> {vt} {{\n"
            f"  %r = rope.linear_attention %q, %k, %v{opnds}{attrs} : {qt}, {qt}, {vt}\n"
            f"  return %r : {vt}\n}}\n")
    desc = (f"rope.linear_attention {dtype} B={B} H={H} S={S} D={D} Dv={Dv} causal={causal} "
            f"positions={None if pos is None else pos.shape} rotary={attr} ({kind}) q:{qt} v:{vt}")
    case = Case(fname, desc, func, kind="linear_attention")
    expected = ref.linear_attention(q, k, v, rotary=spec, positions=pos, causal=causal)
    atol = T.linear_attention_atol(q, k, v, rotary=spec, positions=pos, causal=causal, dtype=dtype)
    case.runs.append((args, expected, atol, dtype, ""))
    case.tag(dtype, "causal" if causal else "not causal",
             *(spec_classes(spec, kind, D, kinds=False) if rotary else ["no rotary"]),
             "default positions" if pos is None
             else f"positions {'[B, S]' if pos.ndim == 2 else '[S]'}",
             *(f"dynamic {n}" for i, n in ((0, "B"), (2, "S")) if i in dyn))
    gb = bad_rng(idx)
    if 2 in dyn:
        add_bad_call(case, args, 1, 2, gb, lambda m: (
            f"'rope.linear_attention' op expects query and key of the same shape, dim 2 is {S} and {m}"))
        if pos is not None:
            add_bad_call(case, args, 3, pos.ndim - 1, gb, lambda m: (
                f"'rope.linear_attention' op expects positions to have {S} entries along the "
                f"sequence, got {m}"), label="positions")
    if 0 in dyn:
        add_bad_call(case, args, 2, 0, gb, lambda m: (
            f"'rope.linear_attention' op expects value to share [B, H, S] with query, dim 0 is {m} "
            f"instead of {B}"))
    return case


def sinusoidal_case(g, idx):
    dtype = "f32" if g.random() < 0.6 else "f16"
    D = 2 * int(g.integers(1, 17))
    shp = (int(g.integers(1, 4)), int(g.integers(1, 9))) if g.random() < 0.4 else (int(g.integers(1, 17)),)
    dyn = {i for i in range(len(shp)) if g.random() < 0.5}
    pdt = "i64" if g.random() < 0.7 else "i32"
    p = random_positions(g, shp, "default", None, pdt)
    base = None if g.random() < 0.6 else nice(g, 10.0, 100000.0, 1)
    pt = ttype(shp, pdt, dyn)
    rt = ttype(list(shp) + [D], dtype, dyn)
    battr = "" if base is None else f" base = {flt(base)}"
    fname = f"sinusoidal_{idx}"
    func = (f"func.func @{fname}(%p: {pt}) -> {rt} {{\n"
            f"  %r = rope.sinusoidal %p{battr} : {pt} -> {rt}\n"
            f"  return %r : {rt}\n}}\n")
    desc = f"rope.sinusoidal{battr} positions:{pt} -> {rt} max={int(p.max())}"
    case = Case(fname, desc, func, kind="sinusoidal")
    expected = ref.sinusoidal(p, D, 10000.0 if base is None else base)
    atol = 2.0 ** -22 + (T.ulp(expected, dtype) if dtype != "f32" else 0.0)
    case.runs.append(([p], expected, atol, dtype, ""))
    case.tag(dtype, f"rank {len(shp)}", f"positions {pdt}",
             "default base" if base is None else "base",
             *(["dynamic dims"] if dyn else []))
    return case


GENERATORS = [  # (weight, generator)
    (40, rotate_case),
    (35, lambda g, i: attention_case(g, i)),
    (10, lambda g, i: attention_case(g, i, unfused=True)),
    (8, linear_attention_case),
    (7, sinusoidal_case),
]


def composed_rotate_case(g, idx):
    """rope.rotate of rope.rotate with the same spec (or its inverse second),
    which canonicalisation composes into one rotation at p ± q: positions
    i16, i32 or i64 (function arguments), near their type's limits in most
    cases, so that p ± q leaves the type (the sum must be formed in i64,
    never wrapped; two i64 arguments are not composed); static sequences of
    0 to 5 rows. f32: the separate rotations round once more in between."""
    pdt = str(g.choice(["i16", "i32", "i64"]))
    npdt = {"i16": np.int16, "i32": np.int32, "i64": np.int64}[pdt]
    D = int(g.choice([4, 8, 16]))
    S = int(g.choice([0, 1, 2, 5]))
    spec = ref.RotarySpec(base=float(g.choice([10000.0, 500000.0])),
                          layout=str(g.choice(["half", "interleaved"])))
    inverse = bool(g.random() < 0.4)
    second = ref.RotarySpec(base=spec.base, layout=spec.layout, inverse=inverse)
    info = np.iinfo(npdt)
    near = pdt != "i64" and g.random() < 0.7
    if near and not inverse:
        p = info.max - g.integers(0, 4, size=S)
    elif near:
        p = info.min + g.integers(0, 4, size=S)
    else:
        p = g.integers(0, 1 << 12, size=S)
    q = g.integers(1, 5, size=S)
    p, q = p.astype(npdt), q.astype(npdt)
    xt, pt = ttype([2, S, D], "f32"), ttype([S], pdt)
    fname = f"composed_{idx}"
    func = (f"func.func @{fname}(%x: {xt}, %p: {pt}, %q: {pt}) -> {xt} {{\n"
            f"  %a = rope.rotate %x, %p rotary({spec.to_attr()}) : {xt}, {pt}\n"
            f"  %b = rope.rotate %a, %q rotary({second.to_attr()}) : {xt}, {pt}\n"
            f"  return %b : {xt}\n}}\n")
    case = Case(fname, f"composed rotation {pdt} near limit={near} inverse={inverse} S={S}",
                func, kind="rotate")
    x = data(g, (2, S, D), "f32")
    # int64 positions in the reference: its rotations never wrap.
    expected = ref.rotate(ref.rotate(x, p.astype(np.int64), spec), q.astype(np.int64), second)
    # Two rotations (2 f32 ulps each at the pair norm), plus the f64 rounding
    # of each phase p·f (relative 2^-53, f <= 1), which at |p| ~ 2^31 is
    # 2^-22 rad and shows in f32.
    phase = float(np.max(np.abs(p.astype(np.float64)), initial=0.0)) + 8.0
    atol = 2 * T.rotation_atol(x, spec) + T.pair_norms(x, spec) * 4 * phase * 2.0 ** -53
    case.runs.append(([T.to_storage(x, "f32"), p, q], expected, atol, "f32",
                      f"x(2, {S}, {D}) p={p.tolist()} q={q.tolist()}"))
    case.tag(f"composed positions {pdt}")
    if near:
        case.tag("composed sum leaves the positions' type")
    if inverse:
        case.tag("composed with the inverse")
    if S == 0:
        case.tag("static empty dim")
    return case


def empty_attention_case(g, idx):
    """rope.attention with one static dim of 0 (batch, heads, either
    sequence, either head dim): an empty result, zeros for queries that see
    no key, each query's mean of the values it sees for D = 0."""
    dim = str(g.choice(["B", "H", "Sq", "Sk", "D", "Dv"]))
    ext = {"B": 1, "Hkv": 2, "G": int(g.choice([1, 2])), "Sq": int(g.integers(1, 17)),
           "Sk": int(g.integers(1, 9)), "D": 8, "Dv": 8}
    ext["H" if dim == "H" else dim] = 0
    if dim == "H":
        ext["Hkv"] = 0
    B, Hkv, Sq, Sk, D, Dv = ext["B"], ext["Hkv"], ext["Sq"], ext["Sk"], ext["D"], ext["Dv"]
    Hq = Hkv * ext["G"]
    causal = bool(g.random() < 0.5) and D > 0
    shapes = ([B, Hq, Sq, D], [B, Hkv, Sk, D], [B, Hkv, Sk, Dv])
    qt, kt, vt = (ttype(sh, "f32") for sh in shapes)
    rt = ttype([B, Hq, Sq, Dv], "f32")
    fname = f"empty_attention_{idx}"
    func = (f"func.func @{fname}(%q: {qt}, %k: {kt}, %v: {vt}) -> {rt} {{\n"
            f"  %r = rope.attention %q, %k, %v{' causal' if causal else ''} : {qt}, {kt}, {vt}\n"
            f"  return %r : {rt}\n}}\n")
    case = Case(fname, f"attention with {dim} = 0 causal={causal}", func, kind="attention")
    q, k, v = (data(g, sh, "f32") for sh in shapes)
    expected = ref.attention(q, k, v, causal=causal)
    case.runs.append(([T.to_storage(a, "f32") for a in (q, k, v)], expected,
                      T.attention_atol(q, k, v), "f32", f"q{shapes[0]} k{shapes[1]} v{shapes[2]}"))
    case.tag("static empty dim")
    return case


# Edge cases drawn from a generator of their own, after the pool (so a
# seed's pool is what it was before they existed): one per EDGE_EVERY cases.
EDGE_GENERATORS = [composed_rotate_case, empty_attention_case]
EDGE_EVERY = 15


def make_cases(seed: int, n: int):
    g = np.random.default_rng(seed)
    weights = np.array([w for w, _ in GENERATORS], dtype=float)
    cases = []
    for i in range(n):
        gen = GENERATORS[int(g.choice(len(GENERATORS), p=weights / weights.sum()))][1]
        cases.append(gen(g, i))
    ge = np.random.default_rng(seed ^ 0xED6E)
    for j in range(max(1, n // EDGE_EVERY)):
        cases.append(EDGE_GENERATORS[j % len(EDGE_GENERATORS)](ge, n + j))
    return cases


def select(cases, batch: int):
    """[(pipeline name, pipeline, cases)]: for every pipeline, cases of the
    pool that together cover every class any case of the pool has.

    Greedy set cover: each step takes the case with the most classes not yet
    covered in this pipeline; among equals, one of the pipeline's own share
    of the pool (the cases `--every-case` gives it: batches of `batch`,
    dealt round the pipelines), then the first drawn; then cases the others
    make redundant are dropped. So the pipelines run different cases where
    they can, every class of case runs through every pipeline, and a seed's
    selection is fixed. Attention cases cost a few
    seconds of compilation each and the others a tenth of that, which is
    why the pool is not run whole (`--every-case` does)."""
    need = set().union(*(c.classes for c in cases))
    plan = []
    for p, (pname, pipeline) in enumerate(PIPELINES):
        left, chosen = set(need), []
        while left:
            i = max(range(len(cases)), key=lambda i: (len(cases[i].classes & left),
                                                      (i // batch) % len(PIPELINES) == p, -i))
            chosen.append(cases[i])
            left -= cases[i].classes
        # Then drop the cases whose classes the others cover (the dearer
        # attention cases first).
        for c in sorted(chosen, key=lambda c: c.kind not in ("attention", "unfused")):
            rest = [d for d in chosen if d is not c]
            if c.classes <= set().union(*(d.classes for d in rest)):
                chosen = rest
        chosen.sort(key=lambda c: cases.index(c))
        plan.append((pname, pipeline, chosen))
    return plan


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------


def error_ratio(actual, expected, atol):
    err = np.abs(np.asarray(actual, np.float64) - expected)
    atol = np.broadcast_to(np.asarray(atol, np.float64), err.shape)
    both_inf = np.isinf(expected) & (np.asarray(actual, np.float64) == expected)
    err = np.where(both_inf, 0.0, err)
    if not err.size:
        return 0.0, True
    ok = bool(np.all(err <= atol))  # NaN fails
    ratio = float(np.max(np.where(atol > 0, err / np.where(atol > 0, atol, 1),
                                  np.where(err > 0, np.inf, 0.0))))
    return ratio, ok


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=int(os.environ.get("ROPE_DIFF_CASES", 300)))
    ap.add_argument("--seed", type=int, default=int(os.environ.get("ROPE_DIFF_SEED", 20250601)))
    ap.add_argument("--batch", type=int, default=40,
                    help="with --every-case: functions per compiled module")
    ap.add_argument("--every-case", action="store_true",
                    help="run every case of the pool, each through one pipeline (modules of "
                         "--batch cases, dealt round the pipelines), instead of the selection "
                         "covering every class through every pipeline")
    ap.add_argument("--emit-seeds", metavar="DIR", help="write each case's function to DIR and stop")
    args = ap.parse_args(argv)

    t0 = time.time()
    cases = make_cases(args.seed, args.cases)
    if args.emit_seeds:
        out = Path(args.emit_seeds)
        out.mkdir(parents=True, exist_ok=True)
        for c in cases:
            (out / f"diff-{args.seed}-{c.name}.mlir").write_text(c.func)
        print(f"wrote {len(cases)} seeds to {out}")
        return 0

    stats = {}  # kind -> [cases, case-pipeline runs, checks, max ratio]
    bad_stats = [0]  # bad calls made
    failed = []
    if args.every_case:
        plan = [(*PIPELINES[b % len(PIPELINES)], cases[i:i + args.batch])
                for b, i in enumerate(range(0, len(cases), args.batch))]
    else:
        plan = select(cases, args.batch)
    classes = set().union(*(c.classes for c in cases))
    covered = {pname: set() for pname, _ in PIPELINES}
    for b, (pname, pipeline, batch) in enumerate(plan):
        covered[pname].update(*(c.classes for c in batch))
        module = "\n".join(c.func for c in batch)
        try:
            lib = T.compile(module, pipeline=pipeline)
        except Exception as e:  # noqa: BLE001 - reported with every case of the batch
            print(f"FAIL batch {b} ({pname}): does not compile: {str(e)[:4000]}")
            for c in batch:
                print(f"  in batch: {c.name}: {c.desc}")
            failed += [c.name for c in batch]
            continue
        for c in batch:
            st = stats.setdefault(c.kind, [set(), 0, 0, 0.0])
            st[0].add(c.name)
            st[1] += 1
            for run_args, expected, atol, dtype, rdesc in c.runs:
                print(f"running {c.name} [{pname}] {rdesc}", file=sys.stderr, flush=True)
                try:
                    out = T.call(lib, c.name, *run_args)
                    ratio, ok = error_ratio(T.from_storage(out, dtype), expected, atol)
                except Exception as e:  # noqa: BLE001
                    ratio, ok = float("inf"), False
                    rdesc += f" raised {type(e).__name__}: {e}"
                st[2] += 1
                if ok:
                    st[3] = max(st[3], ratio)
                    continue
                failed.append(c.name)
                print(f"FAIL {c.name} [{pipeline}]: max err/tol = {ratio:.3g}\n  {c.desc}\n  {rdesc}\n"
                      f"  reproduce: {Path(__file__).name} --seed {args.seed} --cases {args.cases}\n"
                      f"{c.func}")
                try:
                    a = T.from_storage(out, dtype)
                    err = np.abs(a - expected)
                    idx = np.unravel_index(int(np.nanargmax(np.where(np.isnan(err), np.inf, err))),
                                           err.shape)
                    at = np.broadcast_to(atol, err.shape)
                    print(f"  worst at {idx}: actual={a[idx]!r} expected={expected[idx]!r} "
                          f"tol={at[idx]:.3e}")
                except Exception:  # noqa: BLE001
                    pass
            for bad_args, message, what in c.bad:
                print(f"running {c.name} [{pname}] bad call: {what}", file=sys.stderr, flush=True)
                bad_stats[0] += 1
                try:
                    T.call_with_bad_shapes(lib, c.name, bad_args, message)
                except Exception as e:  # noqa: BLE001
                    failed.append(c.name)
                    print(f"FAIL {c.name} [{pipeline}] bad call ({what}): {type(e).__name__}: {e}\n"
                          f"  {c.desc}\n  reproduce: {Path(__file__).name} --seed {args.seed} "
                          f"--cases {args.cases}\n{c.func}")

    total = len(set().union(*(s[0] for s in stats.values())))
    summary = []
    for kind in ("rotate", "attention", "unfused", "linear_attention", "sinusoidal"):
        names, runs, checks, ratio = stats.get(kind, [set(), 0, 0, 0.0])
        summary.append(f"differential {kind}: {len(names)} cases, {runs} pipeline runs, "
                       f"{checks} checks, max err/tol {ratio:.3f}")
    summary.append(f"differential bad calls: {bad_stats[0]} calls, each must raise its check's error "
                   f"and leave its (guarded) arguments untouched")
    for pname, _ in PIPELINES:
        missing = sorted(classes - covered[pname])
        summary.append(f"differential classes through {pname}: {len(classes) - len(missing)} of "
                       f"{len(classes)}" + (f" (missing: {', '.join(missing)})" if missing else ""))
    summary.append(f"time {time.time() - t0:.1f} s, {len(plan)} modules, {len(cases)} cases drawn, "
                   f"seed {args.seed}")
    print("\n".join(summary))
    print("\n".join(summary), file=sys.stderr)  # shown by `lit -a`
    if failed:
        print(f"FAIL differential: {len(set(failed))} of {len(cases)} cases failed: "
              f"{', '.join(sorted(set(failed)))}")
        return 1
    print(f"PASS differential: {total} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())

# CHECK: differential rotate: {{[1-9][0-9]*}} cases
# CHECK: differential attention: {{[1-9][0-9]*}} cases
# CHECK: differential unfused: {{[1-9][0-9]*}} cases
# CHECK: differential linear_attention: {{[1-9][0-9]*}} cases
# CHECK: differential sinusoidal: {{[1-9][0-9]*}} cases
# CHECK: differential bad calls: {{[1-9][0-9]*}} calls
# CHECK: differential classes through default: [[N:[0-9]+]] of [[N]]{{$}}
# CHECK: differential classes through plain: [[N]] of [[N]]{{$}}
# CHECK: differential classes through tiny-tiles: [[N]] of [[N]]{{$}}
# CHECK: differential classes through split-keys: [[N]] of [[N]]{{$}}
# CHECK: differential classes through gpu-mapping: [[N]] of [[N]]{{$}}
# CHECK: PASS differential: {{[0-9]+}} cases
