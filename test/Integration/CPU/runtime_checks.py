# RUN: %python %s | FileCheck %s
# RUN: %plain_attention %python %s | FileCheck %s
# RUN: %gpu_mapping %python %s | FileCheck %s
"""Runtime checks of dynamic extents (--rope-insert-runtime-checks), called
from Python: each shape relation a rope op's verifier checks on static dims
is broken once on dynamic dims. The call must raise RuntimeCheckError with
the verifier's message and the extents found, leave every argument unchanged
and touch nothing beyond them (arguments are guarded buffers: an access past
one dies with SIGSEGV). The same kernels called with good shapes must pass,
including empty sequences, and extreme positions must stay in bounds.

Run through the CPU pipeline, the plain attention lowering, and the GPU
pipeline's mapping on the CPU (%gpu_mapping: the host side of GPU code checks
the same relations before its launches).
"""

import ctypes

import numpy as np

from rope_mlir import _abi, compiler, reference as ref
import rope_testing as T

g = T.rng(16)
F32 = np.float32


def ty(*dims, e="f32"):
    return "tensor<" + "x".join("?" if d is None else str(d) for d in dims) + f"x{e}>"


def arr(*shape):
    return g.standard_normal(shape).astype(F32)


def pos(n, start=0):
    return np.arange(start, start + n, dtype=np.int64)


def compile_fn(args, body, result):
    params = ", ".join(f"%{n}: {t}" for n, t in args)
    return T.compile(
        f"func.func @kernel({params}) -> {result} {{\n  %r = {body}\n  return %r : {result}\n}}\n")


X, P = ty(None, None, None, 16), ty(None, e="i64")
SPEC = ref.RotarySpec().to_attr()

# --- rope.rotate: the issue's case (16 sequence rows, 10 positions) ------------
rotate = compile_fn([("x", X), ("p", P)], f"rope.rotate %x, %p rotary({SPEC}) : {X}, {P}", X)
with T.guard("rotate good"):
    x = arr(1, 2, 16, 16)
    T.check_rotation(T.call(rotate, "kernel", x, pos(16)), ref.rotate(x.astype(np.float64), pos(16),
                     ref.RotarySpec()), x, ref.RotarySpec(), "f32", 2, "rotate good")
T.expect_runtime_error(rotate, "kernel", [arr(1, 2, 16, 16), pos(10)],
                       "expects positions to have 16 entries along the sequence, got 10",
                       "rotate positions vs sequence")
# CHECK: PASS rotate good
# CHECK: PASS rotate positions vs sequence: 'rope.rotate' op expects positions to have 16 entries along the sequence, got 10

# The error names the source location of the op.
with T.guard("location"):
    try:
        rotate.call("kernel", arr(1, 1, 3, 16), pos(2))
    except compiler.RuntimeCheckError as e:
        assert ":2:8: error: 'rope.rotate' op" in str(e), str(e)
        print("PASS location")
# CHECK: PASS location

# No result is handed out: the result descriptor keeps what the caller put
# there.
with T.guard("result untouched"):
    xs, ps = T.guarded(arr(1, 1, 4, 16)), T.guarded(pos(3))
    result = _abi.descriptor_type(4)()
    ctypes.memset(ctypes.addressof(result), 0x5A, ctypes.sizeof(result))
    before = bytes(result)
    try:
        _abi.call_checked(rotate.function_address("kernel"), "kernel",
                          [result, _abi.array_descriptor(xs), _abi.array_descriptor(ps)])
        raise AssertionError("no error")
    except compiler.RuntimeCheckError:
        pass
    assert bytes(result) == before, "the result descriptor was written"
    print("PASS result untouched")
# CHECK: PASS result untouched

# Per-batch positions [B, S].
P2 = ty(None, None, e="i64")
rotate_b = compile_fn([("x", X), ("p", P2)], f"rope.rotate %x, %p rotary({SPEC}) seq_dim = 2 : {X}, {P2}", X)
T.expect_runtime_error(rotate_b, "kernel", [arr(2, 1, 4, 16), np.zeros((3, 4), np.int64)],
                       "expects positions to have batch extent 2, got 3", "rotate positions vs batch")
# CHECK: PASS rotate positions vs batch: {{.*}}batch extent 2, got 3

# --- rope.rotate_with_tables --------------------------------------------------
TB = ty(None, 16)
tables = compile_fn([("x", X), ("c", TB), ("s", TB)],
                    f"rope.rotate_with_tables %x, %c, %s : {X}, {TB}", X)
with T.guard("tables good"):
    T.call(tables, "kernel", arr(1, 2, 7, 16), arr(7, 16), arr(7, 16))
    print("PASS tables good")
# Only a static 1 broadcasts (the lowering reads such a dim at index 0): a
# dynamic dim that is 1 at run time is an error, not a broadcast.
T.expect_runtime_error(tables, "kernel", [arr(1, 2, 7, 16), arr(1, 16), arr(1, 16)],
                       "(7), got 1 (only a static 1 broadcasts; this dim is dynamic)",
                       "tables dynamic 1")
T.expect_runtime_error(tables, "kernel", [arr(1, 2, 7, 16), arr(5, 16), arr(5, 16)],
                       "expects table dim 0 to be 1 or the extent of input dim 2 (7), got 5",
                       "tables rows vs sequence")
T.expect_runtime_error(tables, "kernel", [arr(1, 2, 7, 16), arr(7, 16), arr(1, 16)],
                       "expects cos and sin of one shape, dim 0 is 7 and 1", "cos vs sin")
# CHECK: PASS tables good
# CHECK: PASS tables dynamic 1
# CHECK: PASS tables rows vs sequence
# CHECK: PASS cos vs sin

# --- rope.attention -----------------------------------------------------------
Q, KV = ty(None, 4, None, 16), ty(None, 2, None, 16)
attention = compile_fn([("q", Q), ("k", KV), ("v", KV)],
                       f"rope.attention %q, %k, %v causal : {Q}, {KV}, {KV}", Q)
T.expect_runtime_error(attention, "kernel", [arr(1, 4, 32, 16), arr(1, 2, 32, 16), arr(1, 2, 5, 16)],
                       "expects key and value to have the same sequence length, got 32 and 5",
                       "attention keys vs values")
T.expect_runtime_error(attention, "kernel", [arr(2, 4, 3, 16), arr(1, 2, 3, 16), arr(1, 2, 3, 16)],
                       "share the batch extent, got 2 (query) and 1 (key)", "attention batch")
# CHECK: PASS attention keys vs values: 'rope.attention' op expects key and value to have the same sequence length, got 32 and 5
# CHECK: PASS attention batch

# Empty sequences are valid: no queries give an empty result, no keys give
# zeros (a row with no visible key).
with T.guard("empty sequences"):
    out = T.call(attention, "kernel", arr(1, 4, 0, 16), arr(1, 2, 3, 16), arr(1, 2, 3, 16))
    assert out.shape == (1, 4, 0, 16), out.shape
    out = T.call(attention, "kernel", arr(1, 4, 2, 16), arr(1, 2, 0, 16), arr(1, 2, 0, 16))
    assert out.shape == (1, 4, 2, 16) and not out.any(), out
    out = T.call(rotate, "kernel", arr(1, 2, 0, 16), pos(0))
    assert out.shape == (1, 2, 0, 16), out.shape
    print("PASS empty sequences")
# CHECK: PASS empty sequences

# Mask, positions, sinks, ALiBi slopes.
M, S1 = ty(None, None), ty(None)
extras = compile_fn(
    [("q", Q), ("k", KV), ("v", KV), ("m", M), ("qp", P), ("kp", P), ("sk", S1), ("al", S1)],
    f"rope.attention %q, %k, %v mask(%m : {M}) positions(%qp, %kp : {P}, {P}) causal "
    f"sinks(%sk : {S1}) alibi(%al : {S1}) : {Q}, {KV}, {KV}", Q)


def extras_args(sq=3, sk=5, mask=None, qp=None, kp=None, sinks=4, alibi=4):
    return [arr(1, 4, sq, 16), arr(1, 2, sk, 16), arr(1, 2, sk, 16),
            np.zeros(mask or (sq, sk), F32), pos(qp or sq, 2), pos(kp or sk),
            arr(sinks), np.abs(arr(alibi))]


with T.guard("extras good"):
    T.call(extras, "kernel", *extras_args())
    print("PASS extras good")
for kw, message, case in [
        (dict(mask=(3, 4)), "expects mask dim 1 to be 1 or 5, got 4", "mask keys"),
        (dict(mask=(2, 5)), "expects mask dim 0 to be 1 or 3, got 2", "mask queries"),
        (dict(qp=2), "expects query positions to have 3 entries along the sequence, got 2", "query positions"),
        (dict(kp=6), "expects key positions to have 5 entries along the sequence, got 6", "key positions"),
        (dict(sinks=3), "expects sinks of shape [4] (one logit per query head), got [3]", "sinks"),
        (dict(alibi=2), "expects ALiBi slopes of shape [Hq] with dim 0 = 4, got 2", "alibi")]:
    T.expect_runtime_error(extras, "kernel", extras_args(**kw), message, f"attention {case}")
# CHECK: PASS extras good
# CHECK: PASS attention mask keys
# CHECK: PASS attention mask queries
# CHECK: PASS attention query positions
# CHECK: PASS attention key positions
# CHECK: PASS attention sinks
# CHECK: PASS attention alibi

# Rotary tables (one row per token) and a T5 relative bias table.
TQ = ty(None, 8)
rot_tables = compile_fn(
    [("q", Q), ("k", KV), ("v", KV), ("qc", TQ), ("qs", TQ), ("kc", TQ), ("ks", TQ)],
    f"rope.attention %q, %k, %v rotary_tables(%qc, %qs, %kc, %ks : {TQ}, {TQ}, {TQ}, {TQ}) "
    f": {Q}, {KV}, {KV}", Q)
T.expect_runtime_error(rot_tables, "kernel",
                       [arr(1, 4, 3, 16), arr(1, 2, 5, 16), arr(1, 2, 5, 16),
                        arr(1, 8), arr(1, 8), arr(5, 8), arr(5, 8)],
                       "expects query table dim 0 to be 1 or the extent of input dim 2 (3), got 1", "attention table rows")
T.expect_runtime_error(rot_tables, "kernel",
                       [arr(1, 4, 3, 16), arr(1, 2, 5, 16), arr(1, 2, 5, 16),
                        arr(3, 8), arr(3, 8), arr(5, 8), arr(4, 8)],
                       "expects key cos and sin of one shape, dim 0 is 5 and 4", "attention key cos vs sin")
# CHECK: PASS attention table rows
# CHECK: PASS attention key cos vs sin

RB = ty(32, None)
bias = compile_fn(
    [("q", Q), ("k", KV), ("v", KV), ("qp", P), ("kp", P), ("b", RB)],
    f"rope.attention %q, %k, %v positions(%qp, %kp : {P}, {P}) relative_bias(%b : {RB}) "
    f"buckets(#rope.buckets<num_buckets = 32, max_distance = 128, bidirectional = true>) : {Q}, {KV}, {KV}", Q)
T.expect_runtime_error(bias, "kernel",
                       [arr(1, 4, 3, 16), arr(1, 2, 5, 16), arr(1, 2, 5, 16), pos(3), pos(5), arr(32, 2)],
                       "expects a relative bias table of shape [32, Hq] with dim 1 = 4, got 2",
                       "attention relative bias heads")
# CHECK: PASS attention relative bias heads

# Positions as far apart as i64 allows: distances wrap, but the bucket (an
# index into the bias table) stays inside the table, and the output is a
# convex combination of the values.
with T.guard("extreme positions"):
    imax, imin = np.iinfo(np.int64).max, np.iinfo(np.int64).min
    v = T.guarded(arr(1, 2, 3, 16))
    args = [T.guarded(a) for a in (arr(1, 4, 2, 16), arr(1, 2, 3, 16))] + [v] + [
        T.guarded(a) for a in (np.array([imax, imin], np.int64), np.array([imin, 0, imax], np.int64),
                               arr(32, 4))]
    out = T.call(bias, "kernel", *args)
    assert np.isfinite(out).all() and np.abs(out).max() <= np.abs(v).max() * (1 + 1e-6)
    x = arr(1, 1, 5, 16)
    p = np.array([imin, -1, 0, 2**53, imax], np.int64)
    rotated = T.call(rotate, "kernel", T.guarded(x), T.guarded(p))
    norms = T.pair_norms(x.astype(np.float64), ref.RotarySpec())
    assert np.isfinite(rotated).all()
    assert np.allclose(T.pair_norms(rotated.astype(np.float64), ref.RotarySpec()), norms,
                       rtol=1e-5, atol=1e-6), "rotation did not preserve pair norms"
    print("PASS extreme positions")
# CHECK: PASS extreme positions

# --- rope.linear_attention ----------------------------------------------------
LQ = ty(None, 2, None, 16)
linear = compile_fn([("q", LQ), ("k", LQ), ("v", LQ), ("p", P)],
                    f"rope.linear_attention %q, %k, %v positions(%p : {P}) rotary({SPEC}) causal "
                    f": {LQ}, {LQ}, {LQ}", LQ)
T.expect_runtime_error(linear, "kernel", [arr(1, 2, 6, 16), arr(1, 2, 5, 16), arr(1, 2, 6, 16), pos(6)],
                       "expects query and key of the same shape, dim 2 is 6 and 5", "linear query vs key")
T.expect_runtime_error(linear, "kernel", [arr(1, 2, 6, 16), arr(1, 2, 6, 16), arr(2, 2, 6, 16), pos(6)],
                       "expects value to share [B, H, S] with query, dim 0 is 2 instead of 1",
                       "linear value vs query")
T.expect_runtime_error(linear, "kernel", [arr(1, 2, 6, 16), arr(1, 2, 6, 16), arr(1, 2, 6, 16), pos(4)],
                       "expects positions to have 6 entries along the sequence, got 4", "linear positions")
# CHECK: PASS linear query vs key
# CHECK: PASS linear value vs query
# CHECK: PASS linear positions

# --- rope.online_attention (the state carried by the caller) -----------------
OQ, OK, OS = ty(1, 1, 1, None, 8), ty(1, 1, None, 8), ty(1, 1, 1, None)
online = T.compile(
    f"func.func @kernel(%q: {OQ}, %k: {OK}, %v: {OK}, %acc: {OQ}, %m: {OS}, %l: {OS}) -> {OQ} {{\n"
    f"  %r:3 = rope.online_attention %q, %k, %v scale = 0.5 outs(%acc, %m, %l : {OQ}, {OS}, {OS}) "
    f": {OQ}, {OK}, {OK} -> {OQ}, {OS}, {OS}\n"
    f"  return %r#0 : {OQ}\n}}\n")


def online_args(sq=3, sk=5, sv=5, sacc=3):
    return [arr(1, 1, 1, sq, 8), arr(1, 1, sk, 8), arr(1, 1, sv, 8), np.zeros((1, 1, 1, sacc, 8), F32),
            np.full((1, 1, 1, sq), -np.inf, F32), np.zeros((1, 1, 1, sq), F32)]


with T.guard("online good"):
    T.call(online, "kernel", *online_args())
    print("PASS online good")
T.expect_runtime_error(online, "kernel", online_args(sv=4),
                       "expects value of shape [B, Hkv, Sk, Dv] with dim 2 = 5, got 4", "online value vs key")
T.expect_runtime_error(online, "kernel", online_args(sacc=2),
                       "expects an accumulator of shape [B, Hkv, G, Sq, Dv] with dim 3 = 3, got 2",
                       "online accumulator vs query")
# CHECK: PASS online good
# CHECK: PASS online value vs key
# CHECK: PASS online accumulator vs query

# --- rope.table: a result whose byte count does not fit in 63 bits ------------
# The positions claim 2^60 entries (the buffer holds 4): the check fails before
# anything reads them.
TT = ty(None, 8)
table = T.compile(
    f"func.func @kernel(%p: {P}) -> {TT} {{\n"
    f"  %c, %s = rope.table %p rotary({SPEC}) head_dim = 16 : {P}\n"
    f"  return %c : {TT}\n}}\n")
with T.guard("table byte count"):
    p = T.guarded(pos(4))
    desc = _abi.array_descriptor(p)
    desc.sizes[0] = 2**60
    result = _abi.descriptor_type(2)()
    try:
        _abi.call_checked(table.function_address("kernel"), "kernel", [result, desc])
        raise AssertionError("no error")
    except compiler.RuntimeCheckError as e:
        assert "expects result #0 to take at most 2^63 - 1 bytes, got [1152921504606846976, 8] " \
            "elements of 32 bits" in str(e), str(e)
    print("PASS table byte count")
# CHECK: PASS table byte count

T.finish()
