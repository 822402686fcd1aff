# RUN: %python %s | FileCheck %s
# RUN: %plain_attention %python %s | FileCheck %s
"""Rotated Q and K that meet in a plain product (scores returned as they
are, no attention to fold into): the default pipeline folds the rotations
into the product (--rope-fold-rotation-into-qk: it reads the un-rotated
tensors and rotates pairs in its body), the plain one computes them as
written. Both must agree with the f64 reference: scores = rotate(q) ·
rotate(k)ᵀ.

* half layout, llama3 scaling, shared positions, batch matmul over B·H;
* interleaved layout, decode: one query at position P against keys at
  0..P, different positions tensors, f16 storage;
* yarn (attention factor m on both sides);
* partial rotary: GPT-NeoX's first 8 of 16 dims (half), and 8 dims at
  offset 2 interleaved (pass-through dims on both sides of the range);
* rotations by table operands (rope.rotate_with_tables): HF's per-element
  [1, 1, S, r] tables of a partial half rotation, GPT-J's per-pair [S, r/2]
  tables, and arbitrary tables (not a rotation) of different widths on the
  two sides.

Tolerance: per score, 4 f32 ulps of Σ_d |q_rot_d|·|k_rot_d| (the rotated
pairs are exact to a few ulps of their norms, and the f32 dot product adds
at most D roundings bounded by that sum), plus f16 rounding of the inputs
where they are stored in f16 (the reference sees the same rounded inputs).
"""

import numpy as np

from rope_mlir import compiler, reference as ref
import rope_testing as T


def module(spec_attr, b, h, sq, sk, d, dtype):
    qt = f"tensor<{b}x{h}x{sq}x{d}x{dtype}>"
    kt = f"tensor<{b}x{h}x{sk}x{d}x{dtype}>"
    return f"""
func.func @kernel(%q: {qt}, %k: {kt}, %qp: tensor<{sq}xi64>, %kp: tensor<{sk}xi64>) -> tensor<{b*h}x{sq}x{sk}xf32> {{
  %qr = rope.rotate %q, %qp rotary({spec_attr}) : {qt}, tensor<{sq}xi64>
  %kr = rope.rotate %k, %kp rotary({spec_attr}) : {kt}, tensor<{sk}xi64>
  %e = tensor.empty() : tensor<{b}x{h}x{d}x{sk}x{dtype}>
  %kT = linalg.transpose ins(%kr : {kt}) outs(%e : tensor<{b}x{h}x{d}x{sk}x{dtype}>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %qr [[0, 1], [2], [3]] : {qt} into tensor<{b*h}x{sq}x{d}x{dtype}>
  %k3 = tensor.collapse_shape %kT [[0, 1], [2], [3]] : tensor<{b}x{h}x{d}x{sk}x{dtype}> into tensor<{b*h}x{d}x{sk}x{dtype}>
  %z = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<{b*h}x{sq}x{sk}xf32>
  %f = linalg.fill ins(%z : f32) outs(%o : tensor<{b*h}x{sq}x{sk}xf32>) -> tensor<{b*h}x{sq}x{sk}xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<{b*h}x{sq}x{d}x{dtype}>, tensor<{b*h}x{d}x{sk}x{dtype}>) outs(%f : tensor<{b*h}x{sq}x{sk}xf32>) -> tensor<{b*h}x{sq}x{sk}xf32>
  return %s : tensor<{b*h}x{sq}x{sk}xf32>
}}"""


def table_module(rotation, qtab, ktab, b, h, sq, sk, d):
    """Like `module`, Q and K rotated by tables: `rotation` is the attribute
    part of rope.rotate_with_tables, qtab / ktab the table types."""
    qt = f"tensor<{b}x{h}x{sq}x{d}xf32>"
    kt = f"tensor<{b}x{h}x{sk}x{d}xf32>"
    return f"""
func.func @kernel(%q: {qt}, %k: {kt}, %qc: {qtab}, %qs: {qtab}, %kc: {ktab}, %ks: {ktab}) -> tensor<{b*h}x{sq}x{sk}xf32> {{
  %qr = rope.rotate_with_tables %q, %qc, %qs {rotation} : {qt}, {qtab}
  %kr = rope.rotate_with_tables %k, %kc, %ks {rotation} : {kt}, {ktab}
  %e = tensor.empty() : tensor<{b}x{h}x{d}x{sk}xf32>
  %kT = linalg.transpose ins(%kr : {kt}) outs(%e : tensor<{b}x{h}x{d}x{sk}xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %qr [[0, 1], [2], [3]] : {qt} into tensor<{b*h}x{sq}x{d}xf32>
  %k3 = tensor.collapse_shape %kT [[0, 1], [2], [3]] : tensor<{b}x{h}x{d}x{sk}xf32> into tensor<{b*h}x{d}x{sk}xf32>
  %z = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<{b*h}x{sq}x{sk}xf32>
  %f = linalg.fill ins(%z : f32) outs(%o : tensor<{b*h}x{sq}x{sk}xf32>) -> tensor<{b*h}x{sq}x{sk}xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<{b*h}x{sq}x{d}xf32>, tensor<{b*h}x{d}x{sk}xf32>) outs(%f : tensor<{b*h}x{sq}x{sk}xf32>) -> tensor<{b*h}x{sq}x{sk}xf32>
  return %s : tensor<{b*h}x{sq}x{sk}xf32>
}}"""


def check_folded(name, text):
    """The default pipeline's fold applies: no rotation is left."""
    folded = compiler.lower(text, "--rope-fold-rotation-into-qk")
    assert "rope.rotate" not in folded and "linalg.batch_matmul" not in folded, \
        f"{name}: the rotations were not folded into the product:\n{folded}"


def check_scores(name, out, qr, kr, b, h, sq, sk, dtype="f32"):
    want = np.einsum("bhid,bhjd->bhij", qr, kr).reshape(b * h, sq, sk)
    bound = np.einsum("bhid,bhjd->bhij", np.abs(qr), np.abs(kr)).reshape(b * h, sq, sk)
    atol = 4 * 2.0 ** -23 * bound
    if dtype != "f32":
        # The fold rotates in f32 without storing the rotated values:
        # one f16 rounding of each rotated element apart.
        atol = atol + 2.0 ** -10 * bound
    T.check(out, want, atol, name)


def run_table_case(name, rotation, layout, r, offset, qtab_shape, ktab_shape, b, h, sq, sk, d,
                   tables):
    """`tables(shape, positions)` gives (cos, sin) of that shape."""
    rng = T.rng(len(name))
    q = T.quantize(rng.standard_normal((b, h, sq, d)), "f32")
    k = T.quantize(rng.standard_normal((b, h, sk, d)), "f32")
    qc, qs = (T.quantize(t, "f32") for t in tables(qtab_shape, np.arange(sk - sq, sk)))
    kc, ks = (T.quantize(t, "f32") for t in tables(ktab_shape, np.arange(sk)))
    ty = lambda shape: "tensor<" + "x".join(map(str, shape)) + "xf32>"
    text = table_module(rotation, ty(qtab_shape), ty(ktab_shape), b, h, sq, sk, d)
    with T.guard(name):
        check_folded(name, text)
        lib = T.compile(text)
        out = T.call(lib, "kernel", *(T.to_storage(a, "f32") for a in (q, k, qc, qs, kc, ks)))
        kw = dict(layout=layout, rotary_dims=r, offset=offset, seq_dim=2)
        qr = ref.rotate_with_tables(q, qc, qs, **kw)
        kr = ref.rotate_with_tables(k, kc, ks, **kw)
        check_scores(name, out, qr, kr, b, h, sq, sk)


def run_case(name, spec, b, h, sq, sk, d, qp, kp, dtype="f32"):
    rng = T.rng(len(name))
    q = T.quantize(rng.standard_normal((b, h, sq, d)), dtype)
    k = T.quantize(rng.standard_normal((b, h, sk, d)), dtype)
    text = module(spec.to_attr(), b, h, sq, sk, d, dtype)
    with T.guard(name):
        check_folded(name, text)
        lib = T.compile(text)
        out = T.call(lib, "kernel", T.to_storage(q, dtype), T.to_storage(k, dtype), qp, kp)
        qr = ref.rotate(q, qp, spec, seq_dim=2)
        kr = ref.rotate(k, kp, spec, seq_dim=2)
        if dtype != "f32":
            # As written, the rotated tensors are stored in the data type.
            qr, kr = T.quantize(qr, dtype), T.quantize(kr, dtype)
        check_scores(name, out, qr, kr, b, h, sq, sk, dtype)
    return text


llama3 = ref.RotarySpec(base=500000.0, scaling=ref.Scaling("llama3", factor=8.0, original_max_position_embeddings=64))
pos = np.arange(9, dtype=np.int64) + 100
half = run_case("half llama3 shared positions", llama3, 2, 2, 9, 9, 32, pos, pos)

P = 30
run_case("interleaved decode f16", ref.RotarySpec(layout="interleaved"),
         1, 4, 1, P + 1, 16, np.array([P], np.int64), np.arange(P + 1, dtype=np.int64), dtype="f16")

yarn = ref.RotarySpec(scaling=ref.Scaling("yarn", factor=4.0, original_max_position_embeddings=16))
run_case("yarn attention factor", yarn, 1, 2, 7, 7, 16, pos[:7], pos[:7])

run_case("partial half (GPT-NeoX)", ref.RotarySpec(rotary_dims=8),
         1, 2, 6, 6, 16, pos[:6], pos[:6])
run_case("partial interleaved offset", ref.RotarySpec(rotary_dims=8, offset=2, layout="interleaved"),
         1, 2, 5, 7, 16, pos[2:7], pos[:7])


def hf_tables(shape, positions):
    """HF's cos/sin: cat(freqs, freqs) of the default frequencies, per element."""
    r = shape[-1]
    freqs = np.outer(positions, 10000.0 ** (-np.arange(0, r, 2) / r))
    emb = np.concatenate([freqs, freqs], axis=-1)
    return np.cos(emb).reshape(shape), np.sin(emb).reshape(shape)


def pair_tables(shape, positions):
    """One coefficient per pair, [S, r/2]."""
    h = shape[-1]
    freqs = np.outer(positions, 10000.0 ** (-np.arange(h) / h))
    return np.cos(freqs).reshape(shape), np.sin(freqs).reshape(shape)


def arbitrary_tables(shape, positions):
    rng = T.rng(int(np.prod(shape)))
    return rng.standard_normal(shape), rng.standard_normal(shape)


run_table_case("tables: HF per-element [1,1,S,r], partial half", "dims = 8", "half", 8, 0,
               (1, 1, 4, 8), (1, 1, 6, 8), 1, 2, 4, 6, 16, hf_tables)
run_table_case("tables: GPT-J per-pair [S,r/2], interleaved", "layout<interleaved> dims = 8",
               "interleaved", 8, 0, (3, 4), (7, 4), 2, 2, 3, 7, 16, pair_tables)
run_table_case("tables: arbitrary, offset, per-element Q and per-pair K",
               "dims = 12 offset = 2", "half", 12, 2, (2, 5, 12), (2, 8, 6), 2, 1, 5, 8, 16,
               arbitrary_tables)
T.finish()

# CHECK: PASS half llama3 shared positions
# CHECK: PASS interleaved decode f16
# CHECK: PASS yarn attention factor
# CHECK: PASS partial half (GPT-NeoX)
# CHECK: PASS partial interleaved offset
# CHECK: PASS tables: HF per-element [1,1,S,r], partial half
# CHECK: PASS tables: GPT-J per-pair [S,r/2], interleaved
# CHECK: PASS tables: arbitrary, offset, per-element Q and per-pair K
