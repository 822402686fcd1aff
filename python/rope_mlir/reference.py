"""Independent float64 numpy reference for rotary position embeddings (RoPE).

Every numerical test of the compiled code compares against this module, so it
is written directly from the formulas (Hugging Face transformers'
``modeling_rope_utils.py`` and the RoFormer paper, arXiv:2104.09864) and
deliberately favours clarity over speed.  All computation happens in float64
and every array-returning function returns float64 (except the bf16 bit
helpers, whose outputs are bit patterns / float32 by definition).

Notation used throughout:
    D      head dim (last dim of x)
    r      number of rotated dims (even, r <= D)
    h      r / 2, the number of rotation pairs / frequencies
    theta  the RoPE base
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = [
    "Scaling",
    "RotarySpec",
    "inv_freq",
    "attention_factor",
    "cos_sin_table",
    "rotate",
    "attention",
    "linear_attention",
    "sinusoidal",
    "to_bf16_bits",
    "from_bf16_bits",
    "assert_close",
]

_SCALING_KINDS = ("default", "linear", "dynamic", "yarn", "llama3", "longrope", "freq_factors")
_LAYOUTS = ("half", "interleaved")


# ---------------------------------------------------------------------------
# Configuration
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Scaling:
    """Frequency-scaling configuration (HF ``rope_scaling``)."""

    kind: str = "default"  # "default" | "linear" | "dynamic" | "yarn" | "llama3" | "longrope" | "freq_factors"
    factor: float = 1.0
    original_max_position_embeddings: int | None = None  # L_orig
    low_freq_factor: float = 1.0  # llama3
    high_freq_factor: float = 4.0  # llama3
    beta_fast: float = 32.0  # yarn
    beta_slow: float = 1.0  # yarn
    mscale: float | None = None  # yarn
    mscale_all_dim: float | None = None  # yarn
    truncate: bool = True  # yarn
    short_factor: tuple | None = None  # longrope, length h
    long_factor: tuple | None = None  # longrope, length h
    freq_factors: tuple | None = None  # llama.cpp style, length h


@dataclass(frozen=True)
class RotarySpec:
    """Everything that determines a rotary embedding except the head dim."""

    base: float = 10000.0
    rotary_dims: int | None = None  # r; None means the full head dim D
    offset: int = 0  # rotated dims are [offset, offset + r); the rest pass through unchanged
    layout: str = "half"  # "half" | "interleaved"
    scaling: Scaling = Scaling()
    attention_factor: float | None = None  # explicit m; overrides the scaling's default
    inverse: bool = False


# ---------------------------------------------------------------------------
# Frequencies
# ---------------------------------------------------------------------------


def _rotary_dims(spec: RotarySpec, head_dim: int) -> int:
    """Resolve and validate r against the head dim and offset."""
    r = head_dim if spec.rotary_dims is None else int(spec.rotary_dims)
    if r <= 0 or r % 2 != 0:
        raise ValueError(f"rotary_dims must be a positive even number, got {r}")
    if spec.offset < 0 or spec.offset + r > head_dim:
        raise ValueError(
            f"rotated range [{spec.offset}, {spec.offset + r}) does not fit in head dim {head_dim}"
        )
    if spec.layout not in _LAYOUTS:
        raise ValueError(f"unknown layout {spec.layout!r}; expected one of {_LAYOUTS}")
    return r


def _require_l_orig(sc: Scaling) -> int:
    if sc.original_max_position_embeddings is None:
        raise ValueError(f"scaling kind {sc.kind!r} requires original_max_position_embeddings")
    return int(sc.original_max_position_embeddings)


def _per_pair_factors(values, h: int, what: str) -> np.ndarray:
    if values is None:
        raise ValueError(f"{what} is required")
    arr = np.asarray(values, dtype=np.float64)
    if arr.shape != (h,):
        raise ValueError(f"{what} must have length h={h}, got shape {arr.shape}")
    return arr


def _base_inv_freq(base: float, r: int) -> np.ndarray:
    # f_i = theta^(-2i/r), written as 1 / theta^(2i/r) like HF so the float64
    # values match the usual construction bit-for-bit as far as possible.
    exponents = np.arange(0, r, 2, dtype=np.float64) / r
    return 1.0 / (np.float64(base) ** exponents)


def _yarn_find_correction_dim(num_rotations: float, dim: int, base: float, l_orig: int) -> float:
    # Inverse of "wavelength of dim d fits num_rotations times into l_orig":
    # the (fractional) dim index whose frequency completes num_rotations
    # full turns over the original context.
    return (dim * math.log(l_orig / (num_rotations * 2.0 * math.pi))) / (2.0 * math.log(base))


def inv_freq(spec: RotarySpec, head_dim: int, max_position: int | None = None) -> np.ndarray:
    """Per-pair inverse frequencies, shape (h,), float64.

    ``max_position`` is the largest position that will be rotated; only the
    context-length dependent kinds ("dynamic", "longrope") look at it.
    """
    r = _rotary_dims(spec, head_dim)
    h = r // 2
    sc = spec.scaling
    theta = float(spec.base)
    factor = float(sc.factor)
    f = _base_inv_freq(theta, r)
    seq_len = None if max_position is None else int(max_position) + 1

    if sc.kind == "default":
        return f

    if sc.kind == "linear":
        # Position interpolation: positions are effectively divided by factor.
        return f / factor

    if sc.kind == "dynamic":
        # Dynamic NTK: grow the base once the sequence exceeds the original
        # context; below L_orig the correction term is exactly 1.
        l_orig = _require_l_orig(sc)
        if seq_len is None:
            raise ValueError("dynamic scaling requires max_position")
        if r <= 2:
            raise ValueError("dynamic scaling requires rotary_dims > 2 (exponent r/(r-2))")
        length = max(seq_len, l_orig)
        new_base = theta * ((factor * length / l_orig) - (factor - 1.0)) ** (r / (r - 2))
        return _base_inv_freq(new_base, r)

    if sc.kind == "yarn":
        l_orig = _require_l_orig(sc)
        dim = r
        low = _yarn_find_correction_dim(sc.beta_fast, dim, theta, l_orig)
        high = _yarn_find_correction_dim(sc.beta_slow, dim, theta, l_orig)
        if sc.truncate:
            low = math.floor(low)
            high = math.ceil(high)
        low = max(low, 0)
        high = min(high, dim - 1)
        if low == high:
            # Avoid a division by zero in the ramp (HF does the same).
            high += 0.001
        j = np.arange(h, dtype=np.float64)
        ramp = np.clip((j - low) / (high - low), 0.0, 1.0)
        # High-frequency pairs (small j) extrapolate, low-frequency pairs
        # interpolate, with a linear blend in between.
        extrap_factor = 1.0 - ramp
        extrap = f
        interp = f / factor
        return interp * (1.0 - extrap_factor) + extrap * extrap_factor

    if sc.kind == "llama3":
        l_orig = _require_l_orig(sc)
        lo, hi = float(sc.low_freq_factor), float(sc.high_freq_factor)
        low_wavelen = l_orig / lo
        high_wavelen = l_orig / hi
        wavelen = 2.0 * math.pi / f
        smooth = (l_orig / wavelen - lo) / (hi - lo)
        medium = (1.0 - smooth) * f / factor + smooth * f
        # Long wavelengths are interpolated, short ones kept, medium blended.
        return np.where(wavelen > low_wavelen, f / factor, np.where(wavelen < high_wavelen, f, medium))

    if sc.kind == "longrope":
        # Short factors are used unless the sequence exceeds the original
        # context (or when the length is unknown).
        use_long = False
        if seq_len is not None:
            use_long = seq_len > _require_l_orig(sc)
        ext = _per_pair_factors(
            sc.long_factor if use_long else sc.short_factor, h, "long_factor" if use_long else "short_factor"
        )
        exponents = np.arange(0, r, 2, dtype=np.float64) / r
        return 1.0 / (ext * theta**exponents)

    if sc.kind == "freq_factors":
        return f / _per_pair_factors(sc.freq_factors, h, "freq_factors")

    raise ValueError(f"unknown scaling kind {sc.kind!r}; expected one of {_SCALING_KINDS}")


def attention_factor(spec: RotarySpec) -> float:
    """The magnitude scale m applied to the rotated dims (cos and sin)."""
    if spec.attention_factor is not None:
        return float(spec.attention_factor)
    sc = spec.scaling
    factor = float(sc.factor)

    if sc.kind == "yarn":

        def get_mscale(scale: float, mscale: float = 1.0) -> float:
            return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0

        # Truthiness (not "is not None") matches HF: mscale=0 falls back too.
        if sc.mscale and sc.mscale_all_dim:
            return float(get_mscale(factor, sc.mscale) / get_mscale(factor, sc.mscale_all_dim))
        return float(get_mscale(factor, 1.0))

    if sc.kind == "longrope":
        if factor <= 1:
            return 1.0
        return math.sqrt(1.0 + math.log(factor) / math.log(_require_l_orig(sc)))

    if sc.kind not in _SCALING_KINDS:
        raise ValueError(f"unknown scaling kind {sc.kind!r}; expected one of {_SCALING_KINDS}")
    return 1.0


# ---------------------------------------------------------------------------
# Tables and rotation
# ---------------------------------------------------------------------------


def _as_positions(positions) -> np.ndarray:
    """Positions as an int64 array; integer-valued floats are accepted."""
    p = np.asarray(positions)
    if p.dtype == np.bool_ or not np.issubdtype(p.dtype, np.number):
        raise TypeError(f"positions must be integers, got dtype {p.dtype}")
    if not np.issubdtype(p.dtype, np.integer):
        if not np.all(np.isfinite(p)) or not np.all(p == np.round(p)):
            raise ValueError("positions must be integer-valued")
    return p.astype(np.int64)


def cos_sin_table(positions, spec: RotarySpec, head_dim: int,
                  max_position: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(m*cos(phi), m*sin(phi)), each of shape positions.shape + (h,).

    phi = p * inv_freq; the sin table is negated for the inverse rotation.
    Frequencies that depend on the context length use max(positions), unless
    ``max_position`` is given (attention rotates Q and K with one shared
    largest position, so both see the same frequencies).
    """
    p = _as_positions(positions)
    if max_position is None:
        max_position = int(p.max()) if p.size else None
    freqs = inv_freq(spec, head_dim, max_position)
    m = attention_factor(spec)
    phi = p.astype(np.float64)[..., None] * freqs
    cos = m * np.cos(phi)
    sin = m * np.sin(phi)
    if spec.inverse:
        # Conjugate rotation: cos(-phi) = cos(phi), sin(-phi) = -sin(phi).
        sin = -sin
    return cos, sin


def rotate(x, positions, spec: RotarySpec, seq_dim: int = -2,
           max_position: int | None = None) -> np.ndarray:
    """Apply RoPE to x (rank >= 2, last dim D) along ``seq_dim``.

    positions is [S] (shared by every other dim) or [B, S] with B = x.shape[0]
    (per-batch positions; seq_dim must then not be 0).
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim < 2:
        raise ValueError(f"x must have rank >= 2, got shape {x.shape}")
    nd = x.ndim
    sd = seq_dim + nd if seq_dim < 0 else seq_dim
    if not 0 <= sd < nd - 1:
        raise ValueError(f"seq_dim {seq_dim} is out of range or is the last (head) dim for rank {nd}")
    head_dim = x.shape[-1]
    r = _rotary_dims(spec, head_dim)
    h = r // 2
    off = spec.offset

    p = _as_positions(positions)
    seq_len = x.shape[sd]
    if p.ndim == 1:
        if p.shape[0] != seq_len:
            raise ValueError(f"positions length {p.shape[0]} != x.shape[{sd}] = {seq_len}")
    elif p.ndim == 2:
        if sd == 0:
            raise ValueError("per-batch positions [B, S] need seq_dim != 0")
        if p.shape != (x.shape[0], seq_len):
            raise ValueError(f"positions shape {p.shape} != (x.shape[0], x.shape[{sd}]) = {(x.shape[0], seq_len)}")
    else:
        raise ValueError(f"positions must be [S] or [B, S], got shape {p.shape}")

    cos, sin = cos_sin_table(p, spec, head_dim, max_position)  # p.shape + (h,)

    # Work with the sequence dim at -2 so the tables broadcast naturally.
    # Moving an axis >= 1 keeps the batch dim at 0.
    xs = np.moveaxis(x, sd, -2)
    if p.ndim == 2:
        # [B, S, h] -> [B, 1, ..., 1, S, h] to line up with xs = [B, ..., S, D].
        cos = cos.reshape((cos.shape[0],) + (1,) * (xs.ndim - 3) + cos.shape[1:])
        sin = sin.reshape(cos.shape)

    if spec.layout == "half":
        ia = np.arange(off, off + h)
        ib = ia + h
    else:  # interleaved
        ia = np.arange(off, off + r, 2)
        ib = ia + 1
    a = xs[..., ia]
    b = xs[..., ib]

    out = xs.copy()  # pass-through dims are copied untouched (not scaled by m)
    out[..., ia] = a * cos - b * sin
    out[..., ib] = b * cos + a * sin
    return np.moveaxis(out, -2, sd)


# ---------------------------------------------------------------------------
# Attention
# ---------------------------------------------------------------------------


def _positions_per_batch(positions, batch: int, seq: int, what: str) -> np.ndarray:
    """Broadcast [S] or [B, S] positions to [B, S] (for masking)."""
    p = _as_positions(positions)
    if p.ndim == 1 and p.shape == (seq,):
        return np.broadcast_to(p, (batch, seq))
    if p.ndim == 2 and p.shape == (batch, seq):
        return p
    raise ValueError(f"{what} must have shape [{seq}] or [{batch}, {seq}], got {p.shape}")


def attention(
    q,
    k,
    v,
    *,
    scale=None,
    causal=False,
    mask=None,
    rotary=None,
    q_positions=None,
    k_positions=None,
) -> np.ndarray:
    """Softmax attention, optionally with RoPE on q and k, GQA/MQA, masks.

    q [B,Hq,Sq,D], k [B,Hkv,Sk,D], v [B,Hkv,Sk,Dv] -> [B,Hq,Sq,Dv].
    """
    q = np.asarray(q, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        raise ValueError("q, k, v must be rank 4: [B, H, S, D]")
    B, Hq, Sq, D = q.shape
    Bk, Hkv, Sk, Dk = k.shape
    if Bk != B or Dk != D or v.shape[:3] != (B, Hkv, Sk):
        raise ValueError(f"incompatible shapes q{q.shape} k{k.shape} v{v.shape}")
    if Hkv == 0 or Hq % Hkv != 0:
        raise ValueError(f"Hq={Hq} must be a multiple of Hkv={Hkv}")
    group = Hq // Hkv

    # Default positions right-align the queries with the keys (decode-style).
    if q_positions is None:
        q_positions = np.arange(Sq) + (Sk - Sq)
    if k_positions is None:
        k_positions = np.arange(Sk)

    if rotary is not None:
        # Length-dependent scalings (dynamic, longrope) see the largest
        # position of queries and keys together, as one forward pass would.
        joint_max = int(max(_as_positions(q_positions).max(), _as_positions(k_positions).max()))
        q = rotate(q, q_positions, rotary, seq_dim=2, max_position=joint_max)
        k = rotate(k, k_positions, rotary, seq_dim=2, max_position=joint_max)

    # GQA: query head hq uses kv head hq // group; np.repeat yields exactly that.
    k = np.repeat(k, group, axis=1)
    v = np.repeat(v, group, axis=1)

    if scale is None:
        scale = 1.0 / math.sqrt(D)
    logits = float(scale) * np.einsum("bhqd,bhkd->bhqk", q, k)

    allowed = np.ones((B, Hq, Sq, Sk), dtype=bool)
    if causal:
        qp = _positions_per_batch(q_positions, B, Sq, "q_positions")
        kp = _positions_per_batch(k_positions, B, Sk, "k_positions")
        allowed &= (kp[:, None, None, :] <= qp[:, None, :, None])
    if mask is not None:
        mk = np.asarray(mask)
        if not 2 <= mk.ndim <= 4:
            raise ValueError(f"mask must have rank 2..4, got shape {mk.shape}")
        mk = np.broadcast_to(mk, (B, Hq, Sq, Sk))
        if mk.dtype == np.bool_:
            allowed &= mk
        elif np.issubdtype(mk.dtype, np.floating):
            logits = logits + mk.astype(np.float64)
            # An additive -inf is a mask-out; treating it as such keeps a row
            # of all -inf at 0 instead of NaN.
            allowed &= logits != -np.inf
        else:
            # 0/1 integer masks are ambiguous (boolean or additive?): refuse.
            raise TypeError(f"mask must be bool or floating point, got dtype {mk.dtype}")

    # Numerically stable softmax over allowed keys only; rows with no allowed
    # key get max 0 and denominator 1, so their output is exactly 0.
    masked = np.where(allowed, logits, -np.inf)
    row_max = masked.max(axis=-1, keepdims=True, initial=-np.inf)
    row_max = np.where(np.isfinite(row_max), row_max, 0.0)
    e = np.where(allowed, np.exp(np.where(allowed, logits - row_max, 0.0)), 0.0)
    denom = e.sum(axis=-1, keepdims=True)
    probs = e / np.where(denom == 0.0, 1.0, denom)
    return np.einsum("bhqk,bhkd->bhqd", probs, v)


def _elu_plus_one(x: np.ndarray) -> np.ndarray:
    # elu(x) + 1; expm1 on min(x, 0) avoids overflow warnings for large x
    # in the branch np.where discards.
    return np.where(x > 0, x, np.expm1(np.minimum(x, 0.0))) + 1.0


def linear_attention(q, k, v, *, rotary=None, positions=None, causal=False) -> np.ndarray:
    """RoFormer linear attention (eq. 19) with feature map elu(x) + 1.

    The numerator uses rotated features, the denominator unrotated ones
    (rotation could make it vanish or go negative).
    q, k [B,H,S,D], v [B,H,S,Dv] -> [B,H,S,Dv].
    """
    q = np.asarray(q, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    if q.ndim != 4 or q.shape != k.shape or v.shape[:3] != q.shape[:3]:
        raise ValueError(f"incompatible shapes q{q.shape} k{k.shape} v{v.shape}")
    S = q.shape[2]
    if positions is None:
        positions = np.arange(S)

    fq = _elu_plus_one(q)
    fk = _elu_plus_one(k)
    if rotary is not None:
        rq = rotate(fq, positions, rotary, seq_dim=2)
        rk = rotate(fk, positions, rotary, seq_dim=2)
    else:
        rq, rk = fq, fk

    num_w = np.einsum("bhmd,bhnd->bhmn", rq, rk)
    den_w = np.einsum("bhmd,bhnd->bhmn", fq, fk)
    if causal:
        # Causality is by sequence index (n <= m), not by position value.
        keep = np.tril(np.ones((S, S), dtype=bool))
        num_w = np.where(keep, num_w, 0.0)
        den_w = np.where(keep, den_w, 0.0)
    num = np.einsum("bhmn,bhnd->bhmd", num_w, v)
    den = den_w.sum(axis=-1, keepdims=True)
    return num / den


# ---------------------------------------------------------------------------
# Absolute sinusoidal embedding (Transformer, Vaswani et al.)
# ---------------------------------------------------------------------------


def sinusoidal(positions, dim: int, base: float = 10000.0) -> np.ndarray:
    """PE(p, 2i) = sin(p / base^(2i/dim)), PE(p, 2i+1) = cos(same); shape positions.shape + (dim,).

    An odd dim simply ends with a sin column.
    """
    p = np.asarray(positions, dtype=np.float64)
    two_i = np.arange(0, dim, 2, dtype=np.float64)
    angle = p[..., None] / (np.float64(base) ** (two_i / dim))
    out = np.empty(p.shape + (dim,), dtype=np.float64)
    out[..., 0::2] = np.sin(angle)
    out[..., 1::2] = np.cos(angle[..., : dim // 2])
    return out


# ---------------------------------------------------------------------------
# dtype helpers for tests
# ---------------------------------------------------------------------------

# bf16 has float32's exponent range and 8 significant bits (7 stored).
_BF16_MIN_EXP = -126  # exponent of the smallest normal
_BF16_MANT_BITS = 7


def _bf16_spacing(absval: np.ndarray) -> np.ndarray:
    """Spacing of bf16 at finite |v| (float64): 2^(exponent - 7), exponent floored at -126."""
    _, e = np.frexp(absval)  # absval = m * 2^e with m in [0.5, 1) -> exponent = e - 1
    exponent = np.maximum(e.astype(np.int64) - 1, _BF16_MIN_EXP)
    return np.ldexp(1.0, exponent - _BF16_MANT_BITS)


def to_bf16_bits(x) -> np.ndarray:
    """Float array -> uint16 bf16 bit patterns, round-to-nearest-even.

    Rounds directly from float64 (no float32 intermediate, which could
    double-round).  Overflow goes to +-inf; NaN stays NaN (quiet bit forced so
    the truncated payload can never turn it into inf).
    """
    x = np.asarray(x, dtype=np.float64)
    finite = np.isfinite(x)
    xf = np.where(finite, x, 0.0)
    ulp = _bf16_spacing(np.abs(xf))
    # x / ulp is exact (power-of-two scale) and np.round is half-to-even; the
    # result is a bf16 value, or 2^128 which float32 turns into inf.
    with np.errstate(over="ignore"):
        rounded = (np.round(xf / ulp) * ulp).astype(np.float32)
        rounded = np.where(finite, rounded, x.astype(np.float32))
    bits = (rounded.view(np.uint32) >> 16).astype(np.uint16)
    nan = np.isnan(x)
    bits = np.where(nan, bits | np.uint16(0x0040), bits)
    return bits.astype(np.uint16)


def from_bf16_bits(u) -> np.ndarray:
    """uint16 bf16 bit patterns -> float32 (exact)."""
    u = np.asarray(u, dtype=np.uint16)
    # Keep everything an array of uint32 (0-d operands would otherwise decay
    # to scalars and be promoted to int64 before the view).
    wide = np.array(u, dtype=np.uint32, ndmin=1) << np.uint32(16)
    return wide.view(np.float32).reshape(u.shape)


def _ulp_of(expected: np.ndarray, dtype) -> np.ndarray:
    """Spacing of ``dtype`` at |expected|, as float64."""
    a = np.abs(expected)
    if isinstance(dtype, str) and dtype.lower() in ("bfloat16", "bf16"):
        # Measure at the bf16 value nearest to |e|, mirroring the cast done
        # for numpy dtypes below.
        with np.errstate(invalid="ignore"):
            ab = from_bf16_bits(to_bf16_bits(a)).astype(np.float64)
            finite = np.isfinite(ab)
            return np.where(finite, _bf16_spacing(np.where(finite, ab, 0.0)), np.nan)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.spacing(a.astype(dtype)).astype(np.float64)


def assert_close(actual, expected, *, atol=0.0, rtol=0.0, ulps=None, dtype=np.float32, name="") -> float:
    """Elementwise |a - e| <= atol + rtol*|e|, or (if ulps) <= ulps * ulp_dtype(e).

    Exactly equal elements (including equal infinities) always pass; NaN on
    either side always fails.  Prints one PASS/FAIL line; returns the max abs
    error or raises AssertionError.
    """
    a = np.asarray(actual, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    if a.shape != e.shape:
        msg = f"FAIL {name}: shape mismatch actual {a.shape} vs expected {e.shape}"
        print(msg)
        raise AssertionError(msg)

    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        err = np.abs(a - e)
        ulp = _ulp_of(e, dtype)
        ulp_err = err / ulp
        ok = err <= atol + rtol * np.abs(e)
        if ulps is not None:
            ok |= err <= ulps * ulp
        ok |= a == e
        nan = np.isnan(a) | np.isnan(e)
        ok &= ~nan
        err = np.where(a == e, 0.0, err)
        ulp_err = np.where(a == e, 0.0, ulp_err)

    n = a.size
    if n:
        max_abs = float(np.nanmax(np.where(nan, -np.inf, err)))
        max_ulp = float(np.nanmax(np.where(nan, -np.inf, ulp_err)))
    else:
        max_abs = max_ulp = 0.0

    if ok.all():
        print(f"PASS {name}: max_abs_err={max_abs:.3e} max_ulp_err={max_ulp:.3g} (n={n})")
        return max_abs

    bad = ~ok
    if (bad & nan).any():
        flat = int(np.flatnonzero((bad & nan).ravel())[0])
    else:
        flat = int(np.argmax(np.where(bad, err, -np.inf).ravel()))
    idx = np.unravel_index(flat, a.shape) if a.ndim else ()
    msg = (
        f"FAIL {name}: {int(bad.sum())}/{n} elements out of tolerance "
        f"(atol={atol}, rtol={rtol}, ulps={ulps}, dtype={getattr(dtype, '__name__', dtype)}); "
        f"worst at index {tuple(int(i) for i in idx)}: actual={a.ravel()[flat]!r} "
        f"expected={e.ravel()[flat]!r} abs_err={err.ravel()[flat]:.3e} ulp_err={ulp_err.ravel()[flat]:.3g}; "
        f"max_abs_err={max_abs:.3e} max_ulp_err={max_ulp:.3g}"
    )
    print(msg)
    raise AssertionError(msg)


if __name__ == "__main__":
    pass
