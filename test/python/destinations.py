# RUN: %python %s | FileCheck %s
"""Results written into the caller's arrays: ``m.f(*args, out=y)``.

Each public function @f of a CPU module has a destination form @f__into
(--rope-destination-entry-points) that computes its results in the memory
`out` names, with no buffer of its own for them (the IR tests show that);
the call returns `out` itself. Checked here:

* rotation (f32 and bf16 storage, dynamic sequence) and GQA causal attention
  with RoPE: the destination holds exactly the allocating call's result
  (bit for bit: one body serves both) and the f64 reference's within the
  usual tolerances; arguments are unchanged; a destination is a guarded
  buffer, so a write past its end kills the test; a destination reused by a
  second call holds the second result;
* a function with two results takes a tuple;
* bad destinations are refused before anything is written, naming `out`:
  wrong dtype, rank or static extent, not C-contiguous, read-only, sharing
  memory with an input or with another destination, the wrong count, not an
  array (ArgumentError); a wrong dynamic extent is the compiled check's
  RuntimeCheckError, and the destination is left as it was;
* a module without destination forms (destination_entry_points=False, or a
  source that names a function @f__into itself) says so.
"""

import numpy as np

from rope_mlir import reference as ref
from rope_mlir.errors import ArgumentError, RuntimeCheckError
import rope_testing as T

rng = T.rng(7)


def same(a, b, name):
    if a.dtype != b.dtype or a.shape != b.shape or a.tobytes() != b.tobytes():
        raise AssertionError(f"{name}: out= differs from the allocating call")


# Rotation, f32 and bf16 storage.
spec = ref.RotarySpec(base=10000.0)
for dtype in ("f32", "bf16"):
    with T.guard(f"rotate {dtype}"):
        x_type = f"tensor<2x4x?x32x{dtype}>"
        m = T.compile(T.rotate_module(spec.to_attr(), x_type, "tensor<?xi64>"))
        x64 = rng.standard_normal((2, 4, 9, 32))
        x = T.to_storage(x64, dtype)
        p = rng.integers(0, 4096, 9)
        expected = T.call(m, "kernel", x, p)
        out = T.guarded(np.zeros_like(x))
        saved = [x.copy(), p.copy()]
        returned = m.kernel(x, p, out=out)
        assert returned is out, "out= returns the destination"
        assert all(a.tobytes() == b.tobytes() for a, b in zip((x, p), saved)), "inputs changed"
        same(out, expected, f"rotate {dtype}")
        want = ref.rotate(T.from_storage(x, dtype), p, spec)
        T.check_rotation_stored(out, want, T.from_storage(x, dtype), spec,
                                dtype, 2, f"rotate {dtype}")
        # The same destination again, for other positions.
        p2 = p[::-1].copy()
        m.kernel(x, p2, out=out)
        same(out, m.kernel(x, p2), f"rotate {dtype} reused")
        print(f"PASS rotate {dtype}")
# CHECK: PASS rotate f32
# CHECK: PASS rotate bf16

# GQA 8/2 causal attention with RoPE folded in, dynamic sequence.
with T.guard("attention"):
    source = """
func.func @attention(%q: tensor<1x8x?x32xf32>, %k: tensor<1x2x?x32xf32>,
                     %v: tensor<1x2x?x32xf32>, %p: tensor<?xi64>) -> tensor<1x8x?x32xf32> {
  %o = rope.attention %q, %k, %v positions(%p, %p : tensor<?xi64>, tensor<?xi64>)
      rotary(#rope.spec<base = 10000.0>) causal
      : tensor<1x8x?x32xf32>, tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32>
  return %o : tensor<1x8x?x32xf32>
}"""
    m = T.compile(source)
    S = 75
    q = rng.standard_normal((1, 8, S, 32)).astype(np.float32)
    k = rng.standard_normal((1, 2, S, 32)).astype(np.float32)
    v = rng.standard_normal((1, 2, S, 32)).astype(np.float32)
    p = np.arange(S, dtype=np.int64)
    expected = T.call(m, "attention", q, k, v, p)
    out = T.guarded(np.full((1, 8, S, 32), np.nan, np.float32))
    m.attention(q, k, v, p, out=out)
    same(out, expected, "attention")
    rot = ref.RotarySpec(base=10000.0)
    want = ref.attention(q, k, v, causal=True, rotary=rot, q_positions=p, k_positions=p)
    T.check(out, want, T.attention_atol(q, k, v, rotary=rot), "attention")
    print("PASS attention")
# CHECK: PASS attention

# Two results: a tuple of destinations.
two = T.compile("""
func.func @two(%a: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x2x4xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %neg = linalg.negf ins(%a : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
  %e2 = tensor.empty(%n) : tensor<?x8xf32>
  %exp = linalg.exp ins(%a : tensor<?x8xf32>) outs(%e2 : tensor<?x8xf32>) -> tensor<?x8xf32>
  %v = tensor.expand_shape %exp [[0], [1, 2]] output_shape [%n, 2, 4] : tensor<?x8xf32> into tensor<?x2x4xf32>
  return %neg, %v : tensor<?x8xf32>, tensor<?x2x4xf32>
}""")
with T.guard("two results"):
    a = rng.standard_normal((5, 8)).astype(np.float32)
    outs = (T.guarded(np.zeros((5, 8), np.float32)), T.guarded(np.zeros((5, 2, 4), np.float32)))
    returned = two.two(a, out=outs)
    assert returned is outs
    for got, want, name in zip(outs, two.two(a), ("neg", "exp")):
        same(got, want, f"two results: {name}")
    T.check(outs[0], -a.astype(np.float64), 0.0, "neg")
    T.check(outs[1], np.exp(a.astype(np.float64)).reshape(5, 2, 4),
            4 * T.ulp(np.exp(a.astype(np.float64)), "f32").reshape(5, 2, 4), "exp")
    print("PASS two results")
# CHECK: PASS two results

# Bad destinations.
rot = T.compile(T.rotate_module(spec.to_attr(), "tensor<2x?x16xf32>", "tensor<?xi64>"))
storage = rng.standard_normal(2 * 6 * 16 + 16).astype(np.float32)
x = storage[:192].reshape(2, 6, 16)
p = np.arange(6)
buffer = np.zeros((2, 6, 32), np.float32)
read_only = np.zeros((2, 6, 16), np.float32)
read_only.flags.writeable = False
bad = {
    "dtype": np.zeros((2, 6, 16), np.float64),
    "rank": np.zeros((12, 16), np.float32),
    "static extent": np.zeros((3, 6, 16), np.float32),
    "non-contiguous": buffer[:, :, ::2],
    "read-only": read_only,
    "aliasing": x,
    "overlapping": storage[16:].reshape(2, 6, 16),
    "not an array": [[0.0] * 16] * 12,
}
for case, out in bad.items():
    try:
        rot.kernel(x, p, out=out)
        print(f"ACCEPTED {case}")
    except ArgumentError as e:
        print(f"{case}: {e}")
# CHECK: dtype: @kernel out: expected tensor<2x?x16xf32> (stored as float32), got float64 of shape (2, 6, 16)
# CHECK: rank: @kernel out: expected tensor<2x?x16xf32>, got float32 of shape (12, 16)
# CHECK: static extent: @kernel out: expected tensor<2x?x16xf32>, got float32 of shape (3, 6, 16)
# CHECK: non-contiguous: @kernel out: must be C-contiguous (strides (768, 128, 8)), the result is written in place
# CHECK: read-only: @kernel out: is read-only
# CHECK: aliasing: @kernel out: shares memory with argument #0, which the function reads while it writes the result
# CHECK: overlapping: @kernel out: shares memory with argument #0, which the function reads while it writes the result
# CHECK: not an array: out: expected a numpy array or a DLPack tensor to write the result into, got list
# CHECK-NOT: ACCEPTED

with T.guard("count"):
    try:
        two.two(a, out=(np.zeros((5, 8), np.float32),))
        print("ACCEPTED count")
    except ArgumentError as e:
        print(f"count: {e}")
    try:
        two.two(a, out=(outs[0], outs[0].reshape(5, 2, 4)))
        print("ACCEPTED shared")
    except ArgumentError as e:
        print(f"shared: {e}")
# CHECK: count: @two returns 2 results (tensor<?x8xf32>, tensor<?x2x4xf32>); out= got 1 arrays
# CHECK: shared: @two out #1: shares memory with out #0

# A dynamic extent that is not the result's: the compiled check, before any
# write.
with T.guard("dynamic extent"):
    out = T.guarded(np.full((2, 7, 16), 3.0, np.float32))
    try:
        rot.kernel(x, p, out=out)
        print("ACCEPTED dynamic extent")
    except RuntimeCheckError as e:
        print(f"dynamic extent: {str(e).split(': error: ', 1)[-1]}")
    assert (out == 3.0).all(), "the destination was written before the check failed"
# CHECK: dynamic extent: destination #0 of @kernel has 7 entries along dim 1, but its result has 6

# Modules without destination forms.
with T.guard("no destination form"):
    plain = T.compile(T.rotate_module(spec.to_attr(), "tensor<2x?x16xf32>", "tensor<?xi64>"),
                      destination_entry_points=False)
    named = T.compile(T.rotate_module(spec.to_attr(), "tensor<2x?x16xf32>", "tensor<?xi64>")
                      + T.rotate_module(spec.to_attr(), "tensor<2x?x16xf32>", "tensor<?xi64>",
                                        name="kernel__into"))
    for module in (plain, named):
        same(module.kernel(x, p), rot.kernel(x, p), "no destination form: allocating call")
        try:
            module.kernel(x, p, out=np.zeros_like(x))
            print("ACCEPTED no destination form")
        except ArgumentError as e:
            print(f"no destination form: {e}")
# CHECK: no destination form: @kernel cannot write into out=: the module has no @kernel__into (compiled with destination_entry_points off, or the results' extents are not known from the arguments' before the function runs)
# CHECK: no destination form: @kernel cannot write into out=: the source defines @kernel__into itself, so the compiler gave @kernel no destination form

T.finish()
print("DONE")
# CHECK: DONE
