# RUN: %python %s | FileCheck %s
"""--rope-raise preserves meaning: frontend-style RoPE modules (tensor/arith,
also in two inverse spellings; torch-mlir-style linalg with Llama 3
frequencies; constant cos/sin caches with an attention factor gathered by
position; GPT-J interleaved with linear scaling; TOSA partial rotary) are
compiled as they are and after raising (same pipeline), run on the same
inputs, and compared with each other and with the f64 reference.

The frontend modules compute as Hugging Face does in f32: inv_freq constants
f~ computed in f32 (`1 / base ** (arange(0, r, 2) / r)`, then the scaling),
the phase f32(p)·f~ rounded to f32, cosf/sinf, x·cos + rot(x)·sin. The raised
modules are rope.rotate with the spec the pass recovered (f^ its frequencies),
phase in f64.

Tolerances, elementwise, with n the norm of the element's rotation pair (a
pass-through element: its own magnitude), u = 2^-24, phi~ = p·f~:
* original vs reference with frequencies f~ (and attention factor m, the
  cached case):
  sqrt(2)·m·n·(ulp_f32(phi~)/2 + 2u + [m != 1]·u) + 2·ulp_f32(m·n): the phase
  rounding of f32(p)·f~ (p < 2^24 is exact in f32), cosf/sinf within 1 ulp
  (<= 2u) and the rounding of m·cos, each moving a·cos − b·sin by at most
  (|a| + |b|) <= sqrt(2)·n times their error, and three roundings of the
  products and the sum (<= 1.5 ulp_f32(m·n));
* raised vs reference with the recovered spec: 2 ulps of f32 at m·n, 3 with
  an attention factor m != 1 (rope_testing.rotation_atol, the accuracy rope.rotate
  has everywhere);
* raised vs original: the sum of the two plus sqrt(2)·m·n·p·|f^ − f~|, the
  phase difference of the frequencies the pass recovered from the constants
  (printed: at most a few f32 ulps of f~, relative).
Positions go up to 4096, so that the f32 phase rounding of the original is
visible and the check is not vacuous.
"""

import re

import numpy as np

from rope_mlir import compiler, reference as ref
import rope_testing as T

U = 2.0 ** -24
ELEMENTWISE = "--pass-pipeline=builtin.module(func.func(convert-elementwise-to-linalg),rope-lower-to-cpu)"
TOSA = ("--pass-pipeline=builtin.module(tosa-to-linalg-pipeline,"
        "func.func(tosa-to-tensor,tosa-to-arith),rope-lower-to-cpu)")


def f32_inv_freq(base, r):
    """inv_freq as Hugging Face computes it, in f32."""
    e = np.arange(0, r, 2).astype(np.float32) / np.float32(r)
    return (np.float32(1.0) / (np.float32(base) ** e)).astype(np.float32)


def f32_llama3(base, r, factor, low, high, orig):
    """Hugging Face's llama3 frequencies, in f32."""
    f = f32_inv_freq(base, r)
    wavelen = np.float32(2 * np.pi) / f
    out = np.where(wavelen > np.float32(orig / low), f / np.float32(factor), f)
    smooth = (np.float32(orig) / wavelen - np.float32(low)) / np.float32(high - low)
    smoothed = (1 - smooth) * out / np.float32(factor) + smooth * out
    medium = ~(wavelen < np.float32(orig / high)) & ~(wavelen > np.float32(orig / low))
    return np.where(medium, smoothed, out).astype(np.float32)


def dense(values):
    return "[" + ", ".join(f"{float(v):.9e}" for v in np.asarray(values).ravel()) + "]"


def t(shape, elt="f32"):
    return "tensor<" + "x".join(map(str, shape)) + f"x{elt}>"


# ---------------------------------------------------------------------------
# Frontend-style modules
# ---------------------------------------------------------------------------


def half_tensor_arith(B, H, S, D, inv, combine="x·cos + rh·sin"):
    """Llama rotate_half with tensor slices/concat and arith/math on tensors;
    positions [S] (i64), [B, H, S, D]. `combine` is how x, rh =
    rotate_half(x) and the tables are put together."""
    h = D // 2
    a, b, op = {"x·cos + rh·sin": ("%x, %cb", "%sb, %rh", "arith.addf %b, %a"),
                "x·cos − rh·sin": ("%x, %cb", "%sb, %rh", "arith.subf %a, %b"),
                "x·sin + rh·cos": ("%x, %sb", "%cb, %rh", "arith.addf %b, %a")}[combine]
    x, xh = t((B, H, S, D)), t((B, H, S, h))
    return f"""
func.func @kernel(%x: {x}, %pos: tensor<{S}xi64>) -> {x} {{
  %inv = arith.constant dense<{dense(inv)}> : tensor<{h}xf32>
  %pf = arith.sitofp %pos : tensor<{S}xi64> to tensor<{S}xf32>
  %e0 = tensor.empty() : {t((S, h))}
  %pb = linalg.broadcast ins(%pf : tensor<{S}xf32>) outs(%e0 : {t((S, h))}) dimensions = [1]
  %ib = linalg.broadcast ins(%inv : tensor<{h}xf32>) outs(%e0 : {t((S, h))}) dimensions = [0]
  %freqs = arith.mulf %pb, %ib : {t((S, h))}
  %emb = tensor.concat dim(1) %freqs, %freqs : ({t((S, h))}, {t((S, h))}) -> {t((S, D))}
  %cos = math.cos %emb : {t((S, D))}
  %sin = math.sin %emb : {t((S, D))}
  %e1 = tensor.empty() : {x}
  %cb = linalg.broadcast ins(%cos : {t((S, D))}) outs(%e1 : {x}) dimensions = [0, 1]
  %sb = linalg.broadcast ins(%sin : {t((S, D))}) outs(%e1 : {x}) dimensions = [0, 1]
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [{B}, {H}, {S}, {h}] [1, 1, 1, 1] : {x} to {xh}
  %x2 = tensor.extract_slice %x[0, 0, 0, {h}] [{B}, {H}, {S}, {h}] [1, 1, 1, 1] : {x} to {xh}
  %n2 = arith.negf %x2 : {xh}
  %rh = tensor.concat dim(3) %n2, %x1 : ({xh}, {xh}) -> {x}
  %a = arith.mulf {a} : {x}
  %b = arith.mulf {b} : {x}
  %r = {op} : {x}
  return %r : {x}
}}
"""


def rotate_half(x):
    h = x.shape[-1] // 2
    return np.concatenate([-x[..., h:], x[..., :h]], axis=-1)


def hf_llama_linalg(H, S, D, inv):
    """torch-mlir's form of Hugging Face Llama: inv_freq @ position_ids as a
    batch_matmul, linalg.generic for every elementwise op with (d0, 0, d2, d3)
    broadcasts; q [1, H, S, D], position_ids [1, S] (i64)."""
    h = D // 2
    q, qh = t((1, H, S, D)), t((1, H, S, h))
    id3 = "affine_map<(d0, d1, d2) -> (d0, d1, d2)>"
    id4 = "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>"
    bc = "affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>"
    par3 = '["parallel", "parallel", "parallel"]'
    par4 = '["parallel", "parallel", "parallel", "parallel"]'

    def unary(name, src, ty, op, maps, par, in_elt="f32"):
        return f"""  %{name} = linalg.generic {{indexing_maps = [{maps}, {maps}], iterator_types = {par}}} ins(%{src} : {ty.replace('xf32>', 'x' + in_elt + '>')}) outs(%e_{name} : {ty}) {{
  ^bb0(%in: {in_elt}, %out: f32):
    %v = {op} %in : {in_elt}{' to f32' if op == 'arith.sitofp' else ''}
    linalg.yield %v : f32
  }} -> {ty}
"""

    def binary(name, a, at, b, bt, op, bmap):
        return f"""  %{name} = linalg.generic {{indexing_maps = [{id4}, {bmap}, {id4}], iterator_types = {par4}}} ins(%{a}, %{b} : {at}, {bt}) outs(%e_{name} : {q}) {{
  ^bb0(%u: f32, %w: f32, %out: f32):
    %v = {op} %u, %w : f32
    linalg.yield %v : f32
  }} -> {q}
"""
    return f"""
func.func @kernel(%q: {q}, %position_ids: tensor<1x{S}xi64>) -> {q} {{
  %zero = arith.constant 0.0 : f32
  %inv = arith.constant dense<{dense(inv)}> : tensor<{h}xf32>
  %inv3 = tensor.expand_shape %inv [[0, 1, 2]] output_shape [1, {h}, 1] : tensor<{h}xf32> into tensor<1x{h}x1xf32>
  %p3 = tensor.expand_shape %position_ids [[0, 1], [2]] output_shape [1, 1, {S}] : tensor<1x{S}xi64> into tensor<1x1x{S}xi64>
  %e_pf = tensor.empty() : tensor<1x1x{S}xf32>
{unary("pf", "p3", f"tensor<1x1x{S}xf32>", "arith.sitofp", id3, par3, "i64")}  %e_mm = tensor.empty() : tensor<1x{h}x{S}xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e_mm : tensor<1x{h}x{S}xf32>) -> tensor<1x{h}x{S}xf32>
  %mm = linalg.batch_matmul ins(%inv3, %pf : tensor<1x{h}x1xf32>, tensor<1x1x{S}xf32>) outs(%z : tensor<1x{h}x{S}xf32>) -> tensor<1x{h}x{S}xf32>
  %e_t = tensor.empty() : tensor<1x{S}x{h}xf32>
  %freqs = linalg.transpose ins(%mm : tensor<1x{h}x{S}xf32>) outs(%e_t : tensor<1x{S}x{h}xf32>) permutation = [0, 2, 1]
  %emb = tensor.concat dim(2) %freqs, %freqs : (tensor<1x{S}x{h}xf32>, tensor<1x{S}x{h}xf32>) -> tensor<1x{S}x{D}xf32>
  %e_cos = tensor.empty() : tensor<1x{S}x{D}xf32>
  %e_sin = tensor.empty() : tensor<1x{S}x{D}xf32>
{unary("cos", "emb", f"tensor<1x{S}x{D}xf32>", "math.cos", id3, par3)}{unary("sin", "emb", f"tensor<1x{S}x{D}xf32>", "math.sin", id3, par3)}  %cos4 = tensor.expand_shape %cos [[0, 1], [2], [3]] output_shape [1, 1, {S}, {D}] : tensor<1x{S}x{D}xf32> into tensor<1x1x{S}x{D}xf32>
  %sin4 = tensor.expand_shape %sin [[0, 1], [2], [3]] output_shape [1, 1, {S}, {D}] : tensor<1x{S}x{D}xf32> into tensor<1x1x{S}x{D}xf32>
  %e_qc = tensor.empty() : {q}
{binary("qc", "q", q, "cos4", f"tensor<1x1x{S}x{D}xf32>", "arith.mulf", bc)}  %x1 = tensor.extract_slice %q[0, 0, 0, 0] [1, {H}, {S}, {h}] [1, 1, 1, 1] : {q} to {qh}
  %x2 = tensor.extract_slice %q[0, 0, 0, {h}] [1, {H}, {S}, {h}] [1, 1, 1, 1] : {q} to {qh}
  %e_n2 = tensor.empty() : {qh}
{unary("n2", "x2", qh, "arith.negf", id4, par4)}  %rh = tensor.concat dim(3) %n2, %x1 : ({qh}, {qh}) -> {q}
  %e_rs = tensor.empty() : {q}
{binary("rs", "rh", q, "sin4", f"tensor<1x1x{S}x{D}xf32>", "arith.mulf", bc)}  %e_out = tensor.empty() : {q}
{binary("out", "qc", q, "rs", q, "arith.addf", id4)}  return %out : {q}
}}
"""


def hf_cached_gather(H, S, D, cos_cached, sin_cached):
    """Hugging Face before 4.38: constant cos/sin caches [L, D] indexed by
    position_ids as torch-mlir lowers `cos[position_ids]` (tensor.extract in
    a generic); q [1, H, S, D], position_ids [1, S] (i64)."""
    h, L = D // 2, cos_cached.shape[0]
    q, qh, tab = t((1, H, S, D)), t((1, H, S, h)), t((1, S, D))

    def gather(name, cache):
        return f"""  %{name}_cached = arith.constant dense<[{", ".join(dense(row) for row in cache)}]> : {t((L, D))}
  %{name} = linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}} ins(%position_ids : tensor<1x{S}xi64>) outs(%e : {tab}) {{
  ^bb0(%p: i64, %out: f32):
    %i = arith.index_cast %p : i64 to index
    %j = linalg.index 2 : index
    %v = tensor.extract %{name}_cached[%i, %j] : {t((L, D))}
    linalg.yield %v : f32
  }} -> {tab}
"""
    return f"""
func.func @kernel(%q: {q}, %position_ids: tensor<1x{S}xi64>) -> {q} {{
  %e = tensor.empty() : {tab}
{gather("cos", cos_cached)}{gather("sin", sin_cached)}  %e1 = tensor.empty() : {q}
  %cb = linalg.broadcast ins(%cos : {tab}) outs(%e1 : {q}) dimensions = [1]
  %sb = linalg.broadcast ins(%sin : {tab}) outs(%e1 : {q}) dimensions = [1]
  %x1 = tensor.extract_slice %q[0, 0, 0, 0] [1, {H}, {S}, {h}] [1, 1, 1, 1] : {q} to {qh}
  %x2 = tensor.extract_slice %q[0, 0, 0, {h}] [1, {H}, {S}, {h}] [1, 1, 1, 1] : {q} to {qh}
  %n2 = arith.negf %x2 : {qh}
  %rh = tensor.concat dim(3) %n2, %x1 : ({qh}, {qh}) -> {q}
  %a = arith.mulf %q, %cb : {q}
  %b = arith.mulf %rh, %sb : {q}
  %r = arith.addf %a, %b : {q}
  return %r : {q}
}}
"""


def gptj_interleaved(B, S, H, D, inv):
    """GPT-J rotate_every_two with stride-2 slices, tables repeated after
    cos/sin; [B, S, H, D] with per-sequence positions [B, S] (i32)."""
    h = D // 2
    x, xh, x5 = t((B, S, H, D)), t((B, S, H, h)), t((B, S, H, h, 1))
    th, t2 = t((B, S, h)), t((B, S, h, 1))
    return f"""
func.func @kernel(%x: {x}, %pos: tensor<{B}x{S}xi32>) -> {x} {{
  %inv = arith.constant dense<{dense(inv)}> : tensor<{h}xf32>
  %pf = arith.sitofp %pos : tensor<{B}x{S}xi32> to tensor<{B}x{S}xf32>
  %e0 = tensor.empty() : {th}
  %pb = linalg.broadcast ins(%pf : tensor<{B}x{S}xf32>) outs(%e0 : {th}) dimensions = [2]
  %ib = linalg.broadcast ins(%inv : tensor<{h}xf32>) outs(%e0 : {th}) dimensions = [0, 1]
  %freqs = arith.mulf %ib, %pb : {th}
  %c = math.cos %freqs : {th}
  %s = math.sin %freqs : {th}
  %c3 = tensor.expand_shape %c [[0], [1], [2, 3]] output_shape [{B}, {S}, {h}, 1] : {th} into {t2}
  %s3 = tensor.expand_shape %s [[0], [1], [2, 3]] output_shape [{B}, {S}, {h}, 1] : {th} into {t2}
  %c2 = tensor.concat dim(3) %c3, %c3 : ({t2}, {t2}) -> {t((B, S, h, 2))}
  %s2 = tensor.concat dim(3) %s3, %s3 : ({t2}, {t2}) -> {t((B, S, h, 2))}
  %cd = tensor.collapse_shape %c2 [[0], [1], [2, 3]] : {t((B, S, h, 2))} into {t((B, S, D))}
  %sd = tensor.collapse_shape %s2 [[0], [1], [2, 3]] : {t((B, S, h, 2))} into {t((B, S, D))}
  %e1 = tensor.empty() : {x}
  %cb = linalg.broadcast ins(%cd : {t((B, S, D))}) outs(%e1 : {x}) dimensions = [2]
  %sb = linalg.broadcast ins(%sd : {t((B, S, D))}) outs(%e1 : {x}) dimensions = [2]
  %xe = tensor.extract_slice %x[0, 0, 0, 0] [{B}, {S}, {H}, {h}] [1, 1, 1, 2] : {x} to {xh}
  %xo = tensor.extract_slice %x[0, 0, 0, 1] [{B}, {S}, {H}, {h}] [1, 1, 1, 2] : {x} to {xh}
  %no = arith.negf %xo : {xh}
  %no1 = tensor.expand_shape %no [[0], [1], [2], [3, 4]] output_shape [{B}, {S}, {H}, {h}, 1] : {xh} into {x5}
  %xe1 = tensor.expand_shape %xe [[0], [1], [2], [3, 4]] output_shape [{B}, {S}, {H}, {h}, 1] : {xh} into {x5}
  %st = tensor.concat dim(4) %no1, %xe1 : ({x5}, {x5}) -> {t((B, S, H, h, 2))}
  %rot = tensor.collapse_shape %st [[0], [1], [2], [3, 4]] : {t((B, S, H, h, 2))} into {x}
  %a = arith.mulf %x, %cb : {x}
  %b = arith.mulf %rot, %sb : {x}
  %r = arith.addf %a, %b : {x}
  return %r : {x}
}}
"""


def tosa_partial(B, H, S, D, r, inv):
    """TOSA, half layout on the first r of D dims (GPT-NeoX rotary_pct),
    positions [S] (i32), [B, H, S, D]."""
    h = r // 2
    x, xr, xh, xp = t((B, H, S, D)), t((B, H, S, r)), t((B, H, S, h)), t((B, H, S, D - r))

    def shape(name, values):
        return (f"  %{name} = tosa.const_shape {{values = dense<[{', '.join(map(str, values))}]> : "
                f"tensor<{len(values)}xindex>}} : () -> !tosa.shape<{len(values)}>\n")
    return f"""
func.func @kernel(%x: {x}, %pos: tensor<{S}xi32>) -> {x} {{
  %shift = "tosa.const"() {{values = dense<0> : tensor<1xi8>}} : () -> tensor<1xi8>
  %zp = "tosa.const"() {{values = dense<0.0> : tensor<1xf32>}} : () -> tensor<1xf32>
  %inv = "tosa.const"() {{values = dense<[{dense(inv)}]> : tensor<1x{h}xf32>}} : () -> tensor<1x{h}xf32>
{shape("s1", [S, 1])}{shape("s4", [1, 1, S, r])}{shape("z", [0, 0, 0, 0])}{shape("oh", [0, 0, 0, h])}{shape("or", [0, 0, 0, r])}{shape("nr", [B, H, S, r])}{shape("nh", [B, H, S, h])}{shape("np", [B, H, S, D - r])}  %pf = tosa.cast %pos : (tensor<{S}xi32>) -> tensor<{S}xf32>
  %p2 = tosa.reshape %pf, %s1 : (tensor<{S}xf32>, !tosa.shape<2>) -> tensor<{S}x1xf32>
  %freqs = tosa.mul %p2, %inv, %shift : (tensor<{S}x1xf32>, tensor<1x{h}xf32>, tensor<1xi8>) -> {t((S, h))}
  %emb = tosa.concat %freqs, %freqs {{axis = 1 : i32}} : ({t((S, h))}, {t((S, h))}) -> {t((S, r))}
  %cos = tosa.cos %emb : ({t((S, r))}) -> {t((S, r))}
  %sin = tosa.sin %emb : ({t((S, r))}) -> {t((S, r))}
  %cos4 = tosa.reshape %cos, %s4 : ({t((S, r))}, !tosa.shape<4>) -> {t((1, 1, S, r))}
  %sin4 = tosa.reshape %sin, %s4 : ({t((S, r))}, !tosa.shape<4>) -> {t((1, 1, S, r))}
  %xr = tosa.slice %x, %z, %nr : ({x}, !tosa.shape<4>, !tosa.shape<4>) -> {xr}
  %xp = tosa.slice %x, %or, %np : ({x}, !tosa.shape<4>, !tosa.shape<4>) -> {xp}
  %x1 = tosa.slice %xr, %z, %nh : ({xr}, !tosa.shape<4>, !tosa.shape<4>) -> {xh}
  %x2 = tosa.slice %xr, %oh, %nh : ({xr}, !tosa.shape<4>, !tosa.shape<4>) -> {xh}
  %n2 = tosa.negate %x2, %zp, %zp : ({xh}, tensor<1xf32>, tensor<1xf32>) -> {xh}
  %rh = tosa.concat %n2, %x1 {{axis = 3 : i32}} : ({xh}, {xh}) -> {xr}
  %a = tosa.mul %cos4, %xr, %shift : ({t((1, 1, S, r))}, {xr}, tensor<1xi8>) -> {xr}
  %b = tosa.mul %rh, %sin4, %shift : ({xr}, {t((1, 1, S, r))}, tensor<1xi8>) -> {xr}
  %rot = tosa.add %a, %b : ({xr}, {xr}) -> {xr}
  %r = tosa.concat %rot, %xp {{axis = 3 : i32}} : ({xr}, {xp}) -> {x}
  return %r : {x}
}}
"""


# ---------------------------------------------------------------------------
# The recovered spec, read back from the raised module
# ---------------------------------------------------------------------------


def parse_spec(text):
    """ref.RotarySpec of the (single) rope.rotate in `text`."""
    m = re.search(r"rope\.rotate .*rotary\(#rope\.spec<(.*)>\)", text)
    assert m, "no rope.rotate in the raised module"
    body = m.group(1)

    def num(key, default=None):
        v = re.search(rf"\b{key} = ([-0-9.eE+]+)", body)
        return float(v.group(1)) if v else default
    scaling = ref.Scaling()
    if "#rope.linear" in body:
        scaling = ref.Scaling("linear", factor=float(re.search(r"#rope\.linear<factor = ([-0-9.eE+]+)>", body).group(1)))
    elif "#rope.freq_factors" in body:
        factors = re.search(r"factors = \[([^\]]*)\]", body).group(1)
        scaling = ref.Scaling("freq_factors", freq_factors=tuple(float(v) for v in factors.split(",")))
    else:
        assert "scaling" not in body, f"unexpected scaling in {body}"
    dims = num("dims")
    return ref.RotarySpec(
        base=num("base", 10000.0), rotary_dims=int(dims) if dims else None,
        offset=int(num("offset", 0)),
        layout="interleaved" if "layout = interleaved" in body else "half",
        scaling=scaling, attention_factor=num("attention_factor"),
        inverse="inverse = true" in body)


def pair_frequencies(freqs, spec, head_dim):
    """Per head element, the frequency of its pair (0 for pass-through)."""
    r = spec.rotary_dims or head_dim
    h, off = r // 2, spec.offset
    out = np.zeros(head_dim)
    if spec.layout == "half":
        out[off:off + h] = freqs
        out[off + h:off + r] = freqs
    else:
        out[off:off + r:2] = freqs
        out[off + 1:off + r:2] = freqs
    return out


def element_positions(p, shape, seq_dim):
    """Positions broadcast to every element of a tensor of `shape`."""
    nd = len(shape)
    sd = seq_dim % nd
    if p.ndim == 1:
        view = [1] * nd
        view[sd] = p.shape[0]
        return np.broadcast_to(p.reshape(view), shape[:-1] + (1,)).astype(np.float64)
    view = [1] * nd
    view[0], view[sd] = p.shape
    return np.broadcast_to(p.reshape(view), shape[:-1] + (1,)).astype(np.float64)


# ---------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------

rng = T.rng(7)
LLAMA3 = ref.Scaling("llama3", factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
                     original_max_position_embeddings=8192)

CASES = []

B, H, S, D = 2, 4, 16, 64
CASES.append(dict(
    name="half_tensor_arith", pipeline=ELEMENTWISE,
    text=half_tensor_arith(B, H, S, D, f32_inv_freq(10000.0, D)),
    inv=f32_inv_freq(10000.0, D), spec=ref.RotarySpec(),
    x=(B, H, S, D), positions=rng.integers(0, 4096, S).astype(np.int64), seq_dim=-2))

# x·cos − rotate_half(x)·sin: the inverse rotation.
CASES.append(dict(
    name="half_inverse_by_subtraction", pipeline=ELEMENTWISE,
    text=half_tensor_arith(B, H, S, D, f32_inv_freq(10000.0, D), "x·cos − rh·sin"),
    inv=f32_inv_freq(10000.0, D), spec=ref.RotarySpec(inverse=True),
    x=(B, H, S, D), positions=rng.integers(0, 4096, S).astype(np.int64), seq_dim=-2))

# x·sin + rotate_half(x)·cos = rh·cos − rotate_half(rh)·sin: the inverse
# rotation of rh = rotate_half(x), which stays in the raised module.
CASES.append(dict(
    name="half_inverse_of_partner", pipeline=ELEMENTWISE,
    text=half_tensor_arith(B, H, S, D, f32_inv_freq(10000.0, D), "x·sin + rh·cos"),
    inv=f32_inv_freq(10000.0, D), spec=ref.RotarySpec(inverse=True),
    x=(B, H, S, D), positions=rng.integers(0, 4096, S).astype(np.int64), seq_dim=-2,
    rotated=rotate_half, leftovers=("math.cos",)))

# Llama 3.1 frequencies (not geometric): raised with explicit freq_factors.
inv = f32_llama3(500000.0, D, 8.0, 1.0, 4.0, 8192)
CASES.append(dict(
    name="hf_llama3_linalg", pipeline="--rope-lower-to-cpu",
    text=hf_llama_linalg(H, S, D, inv), inv=inv,
    spec=ref.RotarySpec(base=500000.0, scaling=LLAMA3),
    x=(1, H, S, D), positions=rng.integers(0, 4096, (1, S)).astype(np.int64), seq_dim=-2))

# Constant caches of m·cos/m·sin (m an attention factor, as DeepSeek's
# YaRN caches hold it) for positions 0..511, gathered by position.
L, D3 = 512, 32
inv = f32_inv_freq(10000.0, D3)
M = np.float32(1.1386294)
emb = np.outer(np.arange(L, dtype=np.float32), np.concatenate([inv, inv])).astype(np.float32)
CASES.append(dict(
    name="hf_cached_gather", pipeline=ELEMENTWISE,
    text=hf_cached_gather(H, S, D3, (np.cos(emb) * M).astype(np.float32),
                          (np.sin(emb) * M).astype(np.float32)),
    inv=inv, m=float(M), spec=ref.RotarySpec(attention_factor=float(M)),
    x=(1, H, S, D3), positions=rng.integers(0, L, (1, S)).astype(np.int64), seq_dim=-2))

# Linear scaling (factor 4), interleaved, [B, S, H, D] with [B, S] positions.
B2, S2, H2, D2 = 2, 16, 4, 32
inv = (f32_inv_freq(10000.0, D2) / np.float32(4.0)).astype(np.float32)
CASES.append(dict(
    name="gptj_interleaved_linear", pipeline=ELEMENTWISE,
    text=gptj_interleaved(B2, S2, H2, D2, inv), inv=inv,
    spec=ref.RotarySpec(layout="interleaved", scaling=ref.Scaling("linear", factor=4.0)),
    x=(B2, S2, H2, D2), positions=rng.integers(0, 4096, (B2, S2)).astype(np.int32), seq_dim=1))

# TOSA, partial rotary: 32 of 64 dims, base 500000.
inv = f32_inv_freq(500000.0, 32)
CASES.append(dict(
    name="tosa_partial", pipeline=TOSA,
    text=tosa_partial(B, H, S, D, 32, inv), inv=inv,
    spec=ref.RotarySpec(base=500000.0, rotary_dims=32),
    x=(B, H, S, D), positions=rng.integers(0, 4096, S).astype(np.int32), seq_dim=-2))

for case in CASES:
    name = case["name"]
    with T.guard(name):
        raised = compiler.lower(case["text"], "--rope-raise")
        # Raising must have happened, completely: one rotation, no table left.
        assert raised.count("rope.rotate") == 1, raised
        for leftover in case.get("leftovers", ("math.cos", "tosa.cos", "tensor.concat",
                                               "tosa.concat")):
            assert leftover not in raised, f"{leftover} left in:\n{raised}"
        spec = parse_spec(raised)
        intended = case["spec"]
        x = T.quantize(rng.standard_normal(case["x"]), "f32")
        # What the rotation applies to (rotate_half only permutes and negates,
        # so the pair norms below are x's).
        xr = case.get("rotated", lambda v: v)(x)
        p, seq_dim = case["positions"], case["seq_dim"]
        f_tilde = case["inv"].astype(np.float64)
        f_hat = ref.inv_freq(spec, x.shape[-1])
        # The spec recovered is the one the frontend meant: its parameters
        # where they are geometric, its frequencies within 2^-21 otherwise.
        if intended.scaling.kind == "llama3":
            assert spec.scaling.kind == "freq_factors" and spec.base == intended.base, spec
            f_meant = ref.inv_freq(intended, x.shape[-1])
            assert np.all(np.abs(f_hat - f_meant) <= 2.0 ** -21 * f_meant), (f_hat, f_meant)
        else:
            assert spec == intended, f"recovered {spec}, meant {intended}"
        drift = float(np.max(np.abs(f_hat - f_tilde) / f_tilde))
        print(f"{name}: recovered frequencies within {drift / U:.2f}·2^-24 of the constants")

        # The original's own reference: its f32 constants, exactly.
        r = spec.rotary_dims or x.shape[-1]
        h = r // 2
        m = case.get("m", 1.0)
        exact = ref.RotarySpec(
            base=10000.0, rotary_dims=spec.rotary_dims, offset=spec.offset, layout=spec.layout,
            scaling=ref.Scaling("freq_factors", freq_factors=tuple(
                10000.0 ** (-2.0 * np.arange(h) / r) / f_tilde)), inverse=spec.inverse,
            attention_factor=m)
        n = T.pair_norms(xr, spec)
        pe = element_positions(p, x.shape, seq_dim)
        phase = pe * pair_frequencies(f_tilde, spec, x.shape[-1])
        atol_orig = (np.sqrt(2.0) * m * n * (T.ulp(phase, "f32") / 2 + 2 * U + U * (m != 1.0))
                     + 2 * T.ulp(m * n, "f32"))
        # One more rounding (m·cos, m·sin) with an attention factor.
        atol_raised = T.rotation_atol(xr, spec, "f32", 2 if m == 1.0 else 3)
        drift_phase = pe * pair_frequencies(np.abs(f_hat - f_tilde), spec, x.shape[-1])

        original = T.compile(case["text"], pipeline=case["pipeline"])
        lowered = T.compile(raised, pipeline=case["pipeline"])
        out_orig = T.call(original, "kernel", T.to_storage(x, "f32"), p)
        out_raised = T.call(lowered, "kernel", T.to_storage(x, "f32"), p)

        T.check(out_orig, ref.rotate(xr, p, exact, seq_dim), atol_orig,
                f"{name} original == reference")
        T.check(out_raised, ref.rotate(xr, p, spec, seq_dim), atol_raised,
                f"{name} raised == reference")
        T.check(out_raised, out_orig,
                atol_orig + atol_raised + np.sqrt(2.0) * m * n * drift_phase,
                f"{name} raised == original")
        # The rotation is not the identity: a raised module that dropped it
        # could not pass.
        assert float(np.max(np.abs(out_raised - xr))) > 0.5
T.finish()

# CHECK: PASS half_tensor_arith original == reference
# CHECK: PASS half_tensor_arith raised == reference
# CHECK: PASS half_tensor_arith raised == original
# CHECK: PASS half_inverse_by_subtraction original == reference
# CHECK: PASS half_inverse_by_subtraction raised == reference
# CHECK: PASS half_inverse_by_subtraction raised == original
# CHECK: PASS half_inverse_of_partner original == reference
# CHECK: PASS half_inverse_of_partner raised == reference
# CHECK: PASS half_inverse_of_partner raised == original
# CHECK: PASS hf_llama3_linalg original == reference
# CHECK: PASS hf_llama3_linalg raised == reference
# CHECK: PASS hf_llama3_linalg raised == original
# CHECK: PASS hf_cached_gather original == reference
# CHECK: PASS hf_cached_gather raised == reference
# CHECK: PASS hf_cached_gather raised == original
# CHECK: PASS gptj_interleaved_linear original == reference
# CHECK: PASS gptj_interleaved_linear raised == reference
# CHECK: PASS gptj_interleaved_linear raised == original
# CHECK: PASS tosa_partial original == reference
# CHECK: PASS tosa_partial raised == reference
# CHECK: PASS tosa_partial raised == original
# CHECK-NOT: FAIL
