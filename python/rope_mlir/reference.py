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

from .spec import LAYOUTS, SCALING_KINDS, RotarySpec, Scaling

__all__ = [
    "Scaling",
    "RotarySpec",
    "inv_freq",
    "attention_factor",
    "cos_sin_table",
    "rotate",
    "attention",
    "alibi_slopes",
    "t5_relative_bucket",
    "linear_attention",
    "sinusoidal",
    "to_bf16_bits",
    "from_bf16_bits",
    "assert_close",
]

# The spec types live in spec.py (with their `#rope.spec` text); they are
# re-exported here, where the oracle that gives them meaning is.
_SCALING_KINDS = SCALING_KINDS
_LAYOUTS = LAYOUTS


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


# One function per scaling kind: (scaling, base frequencies f, r, theta,
# seq_len = max_position + 1 or None) -> the inverse frequencies.


def _inv_freq_linear(sc: Scaling, f: np.ndarray, r: int, theta: float, seq_len) -> np.ndarray:
    # Position interpolation: positions are effectively divided by factor.
    return f / float(sc.factor)


def _inv_freq_dynamic(sc: Scaling, f: np.ndarray, r: int, theta: float, seq_len) -> np.ndarray:
    # Dynamic NTK: grow the base once the sequence exceeds the original
    # context; below L_orig the correction term is exactly 1.
    factor = float(sc.factor)
    l_orig = _require_l_orig(sc)
    if seq_len is None:
        raise ValueError("dynamic scaling requires max_position")
    if r <= 2:
        raise ValueError("dynamic scaling requires rotary_dims > 2 (exponent r/(r-2))")
    length = max(seq_len, l_orig)
    new_base = theta * ((factor * length / l_orig) - (factor - 1.0)) ** (r / (r - 2))
    return _base_inv_freq(new_base, r)


def _inv_freq_yarn(sc: Scaling, f: np.ndarray, r: int, theta: float, seq_len) -> np.ndarray:
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
    j = np.arange(r // 2, dtype=np.float64)
    ramp = np.clip((j - low) / (high - low), 0.0, 1.0)
    # High-frequency pairs (small j) extrapolate, low-frequency pairs
    # interpolate, with a linear blend in between.
    extrap_factor = 1.0 - ramp
    extrap = f
    interp = f / float(sc.factor)
    return interp * (1.0 - extrap_factor) + extrap * extrap_factor


def _inv_freq_llama3(sc: Scaling, f: np.ndarray, r: int, theta: float, seq_len) -> np.ndarray:
    factor = float(sc.factor)
    l_orig = _require_l_orig(sc)
    lo, hi = float(sc.low_freq_factor), float(sc.high_freq_factor)
    low_wavelen = l_orig / lo
    high_wavelen = l_orig / hi
    wavelen = 2.0 * math.pi / f
    smooth = (l_orig / wavelen - lo) / (hi - lo)
    medium = (1.0 - smooth) * f / factor + smooth * f
    # Long wavelengths are interpolated, short ones kept, medium blended.
    return np.where(wavelen > low_wavelen, f / factor, np.where(wavelen < high_wavelen, f, medium))


def _inv_freq_longrope(sc: Scaling, f: np.ndarray, r: int, theta: float, seq_len) -> np.ndarray:
    # Short factors are used unless the sequence exceeds the original
    # context (or when the length is unknown).
    use_long = False
    if seq_len is not None:
        use_long = seq_len > _require_l_orig(sc)
    ext = _per_pair_factors(
        sc.long_factor if use_long else sc.short_factor, r // 2,
        "long_factor" if use_long else "short_factor"
    )
    exponents = np.arange(0, r, 2, dtype=np.float64) / r
    return 1.0 / (ext * theta**exponents)


def _inv_freq_freq_factors(sc: Scaling, f: np.ndarray, r: int, theta: float,
                           seq_len) -> np.ndarray:
    return f / _per_pair_factors(sc.freq_factors, r // 2, "freq_factors")


_INV_FREQ = {
    "default": lambda sc, f, r, theta, seq_len: f,
    "linear": _inv_freq_linear,
    "dynamic": _inv_freq_dynamic,
    "yarn": _inv_freq_yarn,
    "llama3": _inv_freq_llama3,
    "longrope": _inv_freq_longrope,
    "freq_factors": _inv_freq_freq_factors,
}


def inv_freq(spec: RotarySpec, head_dim: int, max_position: int | None = None) -> np.ndarray:
    """Per-pair inverse frequencies, shape (h,), float64.

    ``max_position`` is the largest position that will be rotated; only the
    context-length dependent kinds ("dynamic", "longrope") look at it.
    """
    r = _rotary_dims(spec, head_dim)
    sc = spec.scaling
    theta = float(spec.base)
    f = _base_inv_freq(theta, r)
    seq_len = None if max_position is None else int(max_position) + 1
    if sc.kind not in _INV_FREQ:
        raise ValueError(f"unknown scaling kind {sc.kind!r}; expected one of {_SCALING_KINDS}")
    return _INV_FREQ[sc.kind](sc, f, r, theta, seq_len)


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


def rotate_with_tables(x, cos, sin, *, layout: str = "half", rotary_dims: int | None = None,
                       offset: int = 0, seq_dim: int = -2) -> np.ndarray:
    """``x·cos + rot(x)·sin`` on the dims [offset, offset + r) of the head, the
    way frontends write it (Hugging Face's ``apply_rotary_pos_emb`` with
    ``rotate_half``; GPT-J's ``rotate_every_two`` for ``interleaved``); the other
    dims pass through. The tables are whatever the caller gives, element for
    element, not necessarily a rotation.

    Tables have width r (one coefficient per rotated element) or r/2 (one per
    pair, widened here as the layout pairs them), and leading dims that either
    broadcast against x's (same rank as x), or are [S] or [B, S] along
    ``seq_dim`` (and dim 0).
    """
    x = np.asarray(x, dtype=np.float64)
    cos = np.asarray(cos, dtype=np.float64)
    sin = np.asarray(sin, dtype=np.float64)
    nd = x.ndim
    if nd < 2:
        raise ValueError(f"x must have rank >= 2, got shape {x.shape}")
    sd = seq_dim + nd if seq_dim < 0 else seq_dim
    if not 0 <= sd < nd - 1:
        raise ValueError(f"seq_dim {seq_dim} is out of range or is the last (head) dim for rank {nd}")
    if cos.shape != sin.shape:
        raise ValueError(f"cos and sin shapes differ: {cos.shape} vs {sin.shape}")
    if layout not in ("half", "interleaved"):
        raise ValueError(f"layout must be 'half' or 'interleaved', got {layout!r}")
    head_dim = x.shape[-1]
    r = rotary_dims or head_dim
    h = r // 2
    if r % 2 or offset < 0 or offset + r > head_dim:
        raise ValueError(f"rotary dims [{offset}, {offset + r}) do not fit a head of {head_dim} as pairs")

    def widen(t):
        if t.shape[-1] == r:
            return t
        if t.shape[-1] != h:
            raise ValueError(f"tables must have width {r} or {h}, got {t.shape[-1]}")
        return np.concatenate([t, t], axis=-1) if layout == "half" else np.repeat(t, 2, axis=-1)

    def lay_out(t):
        if t.ndim == nd:
            return t
        shape = [1] * nd
        shape[-1] = r
        if t.ndim == 2:
            shape[sd] = t.shape[0]
        elif t.ndim == 3 and sd != 0:
            shape[0], shape[sd] = t.shape[0], t.shape[1]
        else:
            raise ValueError(f"tables of shape {t.shape} do not fit x of shape {x.shape}")
        return t.reshape(shape)

    cos, sin = lay_out(widen(cos)), lay_out(widen(sin))
    xr = x[..., offset:offset + r]
    if layout == "half":
        rot = np.concatenate([-xr[..., h:], xr[..., :h]], axis=-1)
    else:
        rot = np.stack([-xr[..., 1::2], xr[..., 0::2]], axis=-1).reshape(xr.shape)
    out = x.copy()
    out[..., offset:offset + r] = xr * cos + rot * sin
    return out


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


def alibi_slopes(num_heads) -> np.ndarray:
    """The standard ALiBi head slopes, shape [num_heads], float64.

    Press et al., "Train Short, Test Long" (arXiv:2108.12409), reference
    ``get_slopes``, which BLOOM's ``build_alibi_tensor`` reproduces:

    * n a power of two: slope_i = 2^(-8 i / n) for i = 1..n (a geometric
      sequence whose first term and ratio are both 2^(-8/n));
    * otherwise, with P = 2^floor(log2 n): the P slopes of P heads followed by
      the odd-indexed slopes of 2P heads, 2^(-8 (2j - 1) / (2P)) for
      j = 1..n - P (``get_slopes(2P)[0::2][:n - P]``; BLOOM's
      ``extra_powers = 1, 3, 5, ...`` of ``extra_base = 2^(-8 / (2P))``).

    Computed as 2 ** (exponent) with the exponent exact, so the power-of-two
    slopes are exact; the reference's repeated products ``start * ratio**i``
    agree to within a few float64 ulps.
    """
    if isinstance(num_heads, (bool, np.bool_)) or not isinstance(num_heads, (int, np.integer)):
        raise TypeError(f"alibi_slopes: num_heads must be an int, got {type(num_heads).__name__}")
    n = int(num_heads)
    if n <= 0:
        raise ValueError(f"alibi_slopes: num_heads must be positive, got {n}")
    p = 1 << (n.bit_length() - 1)  # closest power of two <= n
    slopes = 2.0 ** (-8.0 * np.arange(1, p + 1, dtype=np.float64) / p)
    if p != n:
        odd = np.arange(1, 2 * (n - p), 2, dtype=np.float64)  # 1, 3, ..., 2(n-P) - 1
        slopes = np.concatenate([slopes, 2.0 ** (-8.0 * odd / (2 * p))])
    return slopes


def _check_int(value, what: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{what} must be an int, got {type(value).__name__}")
    return int(value)


def _t5_bucket_config(num_buckets, max_distance, bidirectional, what: str = "t5_relative_bucket"):
    """Validate T5 bucketing parameters; returns (num_buckets, max_distance, bidirectional)."""
    nb = _check_int(num_buckets, f"{what}: num_buckets")
    md = _check_int(max_distance, f"{what}: max_distance")
    if not isinstance(bidirectional, (bool, np.bool_)):
        raise TypeError(f"{what}: bidirectional must be a bool, got {type(bidirectional).__name__}")
    bid = bool(bidirectional)
    if nb < 2:
        raise ValueError(f"{what}: num_buckets must be >= 2, got {nb}")
    if bid and nb < 4:
        raise ValueError(f"{what}: bidirectional bucketing halves num_buckets, so it needs num_buckets >= 4, got {nb}")
    half = nb // 2 if bid else nb
    max_exact = half // 2
    if md <= max_exact:
        which = "num_buckets // 2 // 2" if bid else "num_buckets // 2"
        raise ValueError(
            f"{what}: max_distance must exceed max_exact = {which} = {max_exact} "
            f"(log(max_distance / max_exact) must be > 0), got max_distance={md}"
        )
    return nb, md, bid


def t5_relative_bucket(relative_position, *, num_buckets, max_distance, bidirectional) -> np.ndarray:
    """T5's relative-position bucket of ``relative_position = p_k - p_q``, int64, same shape.

    Exactly ``T5Attention._relative_position_bucket`` of Hugging Face
    transformers (adapted from Mesh TensorFlow's
    ``_relative_position_bucket``; Raffel et al., arXiv:1910.10683):

        bucket = 0
        if bidirectional:                 # encoder
            num_buckets //= 2
            bucket += num_buckets if rel > 0 else 0
            n = |rel|
        else:                             # decoder: only the past is distinguished
            n = -min(rel, 0)
        max_exact = num_buckets // 2
        if n < max_exact:                 # small distances: one bucket each
            bucket += n
        else:                             # logarithmic bins up to max_distance
            bucket += min(max_exact + int(log(n / max_exact)
                                          / log(max_distance / max_exact)
                                          * (num_buckets - max_exact)),
                          num_buckets - 1)

    The logarithmic part is evaluated in float32 like T5 (``n.float() /
    max_exact``, ``torch.log``, division by the float32 rounding of the
    float64 ``math.log(max_distance / max_exact)``, multiplication by
    ``num_buckets - max_exact``, each rounded to float32) and truncated toward
    zero like ``.to(torch.long)``.  The float32 log is taken as the float32
    rounding of the float64 log (the correctly rounded logf, barring a
    double rounding), so the result does not depend on numpy's SIMD float32
    log.  Where the exact value is an integer (e.g. n = 16, 32, 64 for
    num_buckets=32, max_distance=128, bidirectional: 2 * log2(n / 8)) this
    float32 chain lands exactly on that integer, as the float64 one does; a
    logf 1 ulp low there would truncate to the bucket below.

    Raises ValueError for num_buckets < 2, bidirectional with num_buckets < 4,
    and max_distance <= max_exact (the log ratio would be <= 0).
    """
    rel = np.asarray(relative_position)
    if rel.dtype == np.bool_ or not np.issubdtype(rel.dtype, np.integer):
        raise TypeError(f"t5_relative_bucket: relative_position must be integers, got dtype {rel.dtype}")
    rel = rel.astype(np.int64)
    nb, md, bid = _t5_bucket_config(num_buckets, max_distance, bidirectional)

    buckets = np.zeros(rel.shape, dtype=np.int64)
    if bid:
        nb //= 2
        buckets += np.where(rel > 0, nb, 0)
        n = np.abs(rel)
    else:
        n = -np.minimum(rel, 0)
    max_exact = nb // 2
    is_small = n < max_exact

    # Large branch in float32; small entries use n = max_exact (log 1 = 0) so
    # no log(0) is evaluated for values np.where discards anyway.
    n_large = np.where(is_small, max_exact, n)
    ratio = n_large.astype(np.float32) / np.float32(max_exact)
    log_ratio = np.log(ratio.astype(np.float64)).astype(np.float32)
    log_max = np.float32(math.log(md / max_exact))
    scaled = (log_ratio / log_max) * np.float32(nb - max_exact)
    large = np.minimum(max_exact + np.trunc(scaled).astype(np.int64), nb - 1)
    return buckets + np.where(is_small, n, large)


def _per_head_values(values, hq: int, what: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.dtype == np.bool_ or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise TypeError(f"{what} must be real numbers, got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if arr.shape != (hq,):
        raise ValueError(f"{what} must have shape [Hq] = [{hq}] (one per query head), got {arr.shape}")
    return arr


def _attention_shapes(q, k, v):
    """q, k, v as float64 [B, H, S, D] arrays, checked; and the GQA group size."""
    q = np.asarray(q, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        raise ValueError("q, k, v must be rank 4: [B, H, S, D]")
    B, Hq, Sq, D = q.shape
    Bk, Hkv, Sk, Dk = k.shape
    if Bk != B or Dk != D or v.shape[:3] != (B, Hkv, Sk):
        raise ValueError(f"incompatible shapes q{q.shape} k{k.shape} v{v.shape}")
    # No heads at all (Hq = Hkv = 0) is an empty attention.
    if (Hkv == 0 and Hq != 0) or (Hkv != 0 and Hq % Hkv != 0):
        raise ValueError(f"Hq={Hq} must be a multiple of Hkv={Hkv}")
    return q, k, v, Hq // Hkv if Hkv else 1


def _check_window(window, causal):
    if window is None:
        return None
    window = _check_int(window, "window")
    if window <= 0:
        raise ValueError(f"window must be a positive number of keys, got {window}")
    if not causal:
        raise ValueError("window requires causal=True (the sliding window p_q - W < p_k <= p_q "
                         "includes the causal bound)")
    return window


def _check_softcap(softcap):
    if softcap is None:
        return None
    if isinstance(softcap, (bool, np.bool_)) or not isinstance(softcap, (int, float, np.integer, np.floating)):
        raise TypeError(f"softcap must be a real number, got {type(softcap).__name__}")
    softcap = float(softcap)
    if not (math.isfinite(softcap) and softcap > 0.0):
        raise ValueError(f"softcap must be finite and > 0, got {softcap}")
    return softcap


def _check_relative_bias(relative_bias, relative_buckets, hq: int):
    """(relative_bias as a float64 [num_buckets, Hq] table, (num_buckets,
    max_distance, bidirectional)), checked; (None, None) without them."""
    if (relative_bias is None) != (relative_buckets is None):
        raise ValueError("relative_bias and relative_buckets must be given together "
                         "(a [num_buckets, Hq] table and (num_buckets, max_distance, bidirectional))")
    if relative_buckets is None:
        return None, None
    if not isinstance(relative_buckets, (tuple, list)) or len(relative_buckets) != 3:
        raise TypeError("relative_buckets must be a tuple (num_buckets, max_distance, bidirectional), "
                        f"got {relative_buckets!r}")
    nb, md, bid = _t5_bucket_config(*relative_buckets, what="relative_buckets")
    table = np.asarray(relative_bias)
    if table.dtype == np.bool_ or not (np.issubdtype(table.dtype, np.integer)
                                       or np.issubdtype(table.dtype, np.floating)):
        raise TypeError(f"relative_bias must be real numbers, got dtype {table.dtype}")
    table = table.astype(np.float64)
    if table.shape != (nb, hq):
        raise ValueError(f"relative_bias must have shape [num_buckets, Hq] = [{nb}, {hq}], got {table.shape}")
    if not np.all(np.isfinite(table)):
        raise ValueError("relative_bias must be finite")
    return table, (nb, md, bid)


@dataclass(frozen=True)
class _AttentionTerms:
    """What besides q, k, v shapes the logits and which keys are visible,
    checked (see `attention`)."""
    causal: bool
    mask: object
    window: int | None
    softcap: float | None
    sinks: np.ndarray | None
    alibi_slopes: np.ndarray | None
    relative_bias: np.ndarray | None
    relative_buckets: tuple | None

    @classmethod
    def checked(cls, hq: int, causal, mask, window, softcap, sinks, alibi_slopes,
                relative_bias, relative_buckets) -> "_AttentionTerms":
        window = _check_window(window, causal)
        softcap = _check_softcap(softcap)
        if sinks is not None:
            sinks = _per_head_values(sinks, hq, "sinks")
            if np.any(np.isnan(sinks) | (sinks == np.inf)):
                raise ValueError("sinks must not be NaN or +inf (-inf means no sink for that head)")
        if alibi_slopes is not None:
            alibi_slopes = _per_head_values(alibi_slopes, hq, "alibi_slopes")
            if not np.all(np.isfinite(alibi_slopes)):
                raise ValueError("alibi_slopes must be finite")
        relative_bias, relative_buckets = _check_relative_bias(relative_bias, relative_buckets, hq)
        return cls(causal, mask, window, softcap, sinks, alibi_slopes, relative_bias,
                   relative_buckets)

    def needs_positions(self) -> bool:
        return (self.causal or self.window is not None or self.alibi_slopes is not None
                or self.relative_bias is not None)


def _logits(q, k, group: int, scale, softcap) -> np.ndarray:
    """1. and 2.: scale·q·kᵀ per query head (GQA: query head hq uses kv head
    hq // group, which np.repeat yields), soft-capped."""
    k = np.repeat(k, group, axis=1)
    if scale is None:
        # An empty head (D = 0) has zero logits whatever the scale: 1.
        scale = 1.0 / math.sqrt(q.shape[-1]) if q.shape[-1] else 1.0
    logits = float(scale) * np.einsum("bhqd,bhkd->bhqk", q, k)
    # 2. Soft-capping, before any mask or bias.
    if softcap is not None:
        logits = softcap * np.tanh(logits / softcap)
    return logits


def _mask_term(mask, logits, allowed):
    """A boolean mask restricts `allowed` (in place); a float one is added to
    the logits. Returns (logits, whether it was additive)."""
    mk = np.asarray(mask)
    if not 2 <= mk.ndim <= 4:
        raise ValueError(f"mask must have rank 2..4, got shape {mk.shape}")
    mk = np.broadcast_to(mk, allowed.shape)
    if mk.dtype == np.bool_:
        allowed &= mk
        return logits, False
    if np.issubdtype(mk.dtype, np.floating):
        return logits + mk.astype(np.float64), True
    # 0/1 integer masks are ambiguous (boolean or additive?): refuse.
    raise TypeError(f"mask must be bool or floating point, got dtype {mk.dtype}")


def _visible_logits(logits, terms: _AttentionTerms, q_positions, k_positions):
    """3. and 4.: the logits with the additive terms, and which keys each
    query sees ([B, Hq, Sq, Sk] bools)."""
    B, Hq, Sq, Sk = logits.shape
    # Per-batch positions, only when something depends on them (positions
    # are otherwise unused without rotary, as before).
    rel = None
    if terms.needs_positions():
        qp = _positions_per_batch(q_positions, B, Sq, "q_positions")
        kp = _positions_per_batch(k_positions, B, Sk, "k_positions")
        rel = kp[:, None, :] - qp[:, :, None]  # [B, Sq, Sk]: p_k - p_q
    allowed = np.ones((B, Hq, Sq, Sk), dtype=bool)
    additive = False
    if terms.causal:
        allowed &= rel[:, None] <= 0
    if terms.window is not None:
        allowed &= rel[:, None] > -terms.window
    if terms.mask is not None:
        logits, additive = _mask_term(terms.mask, logits, allowed)
    if terms.alibi_slopes is not None:
        distance = np.abs(rel).astype(np.float64)[:, None]  # [B, 1, Sq, Sk]
        logits = logits - terms.alibi_slopes[None, :, None, None] * distance
        additive = True
    if terms.relative_bias is not None:
        nb, md, bid = terms.relative_buckets
        bucket = t5_relative_bucket(rel, num_buckets=nb, max_distance=md, bidirectional=bid)  # [B, Sq, Sk]
        logits = logits + np.moveaxis(terms.relative_bias[bucket], -1, 1)  # [B, Sq, Sk, Hq] -> [B, Hq, Sq, Sk]
        additive = True
    if additive:
        # An additive -inf is a mask-out; treating it as such keeps a row
        # of all -inf at 0 instead of NaN.
        allowed &= logits != -np.inf
    return logits, allowed


def _softmax_values(logits, allowed, sinks, v) -> np.ndarray:
    """5. and 6.: numerically stable softmax over visible keys only, plus the
    sink logit in the denominator, times v. Rows with no visible key have an
    all-zero numerator, so their output is exactly 0."""
    masked = np.where(allowed, logits, -np.inf)
    row_max = masked.max(axis=-1, keepdims=True, initial=-np.inf)
    if sinks is not None:
        sink = sinks[None, :, None, None]
        row_max = np.maximum(row_max, sink)
    row_max = np.where(np.isfinite(row_max), row_max, 0.0)
    e = np.where(allowed, np.exp(np.where(allowed, logits - row_max, 0.0)), 0.0)
    denom = e.sum(axis=-1, keepdims=True)
    if sinks is not None:
        denom = denom + np.exp(sink - row_max)
    probs = e / np.where(denom == 0.0, 1.0, denom)
    return np.einsum("bhqk,bhkd->bhqd", probs, v)


def attention(q, k, v, *, scale=None, causal=False, mask=None, rotary=None, q_positions=None,
              k_positions=None, window=None, softcap=None, sinks=None, alibi_slopes=None,
              relative_bias=None, relative_buckets=None) -> np.ndarray:
    """Softmax attention with RoPE, GQA/MQA, masks, sliding window, softcap, sinks, ALiBi, T5 bias.

    q [B,Hq,Sq,D], k [B,Hkv,Sk,D], v [B,Hkv,Sk,Dv] -> [B,Hq,Sq,Dv]; query head
    h uses kv head h // (Hq // Hkv).  Positions p_q (q_positions) and p_k
    (k_positions) are [S] or [B, S]; by default keys sit at 0..Sk-1 and queries
    at Sk-Sq..Sk-1 (right-aligned, decode style).  For query i and key j of
    batch b, head h:

    1. s = scale * (q_rot . k_rot), scale defaulting to 1/sqrt(D); q_rot, k_rot
       are q, k rotated at p_q, p_k when ``rotary`` is given.
    2. ``softcap = c`` (> 0): s <- c * tanh(s / c), right after the scale and
       before any mask or bias (Gemma 2's attn_logit_softcapping).
    3. Additive terms, in this order: a floating-point ``mask`` (broadcast to
       [B,Hq,Sq,Sk]; -inf hides the key); ALiBi, s += -slope[h] * |p_q - p_k|
       with ``alibi_slopes`` [Hq] (FlashAttention's ``alibi_slopes``
       definition, also llama.cpp's current -|p_q - p_k| KQ mask times the
       slope; under causal masking it equals BLOOM's s += slope[h] * p_k up
       to the per-row constant slope[h] * p_q, which softmax ignores, so both
       give the same output there, but not without causal masking; see
       ``alibi_slopes()`` for the standard slopes); T5's relative bias,
       s += relative_bias[t5_relative_bucket(p_k - p_q), h] with
       ``relative_bias`` [num_buckets, Hq] and ``relative_buckets =
       (num_buckets, max_distance, bidirectional)``.
    4. Visibility; a key that is not visible contributes nothing: a boolean
       ``mask`` (True = visible), ``causal`` (p_k <= p_q), and ``window = W``
       (p_q - W < p_k <= p_q: the query and the W - 1 keys before it, the
       Mistral / Gemma sliding window of Hugging Face transformers; it includes
       the causal bound and so requires causal=True), and an additive -inf.
    5. out = sum_j exp(s_j - M) v_j / (sum_j exp(s_j - M) + [exp(sink_h - M)])
       over visible j, M = max(max_j s_j, sink_h).  ``sinks`` [Hq] (gpt-oss
       attention sinks) add one logit per query head to the denominator only;
       they are not scaled, capped or masked; a -inf sink is the same as none.
    6. A row with no visible key yields zeros (with sinks too).

    Arguments are validated; a bad one raises ValueError / TypeError naming it.
    """
    q, k, v, group = _attention_shapes(q, k, v)
    Sq, Sk = q.shape[2], k.shape[2]
    terms = _AttentionTerms.checked(q.shape[1], causal, mask, window, softcap, sinks,
                                    alibi_slopes, relative_bias, relative_buckets)
    # Default positions right-align the queries with the keys (decode-style).
    if q_positions is None:
        q_positions = np.arange(Sq) + (Sk - Sq)
    if k_positions is None:
        k_positions = np.arange(Sk)
    if rotary is not None:
        # Length-dependent scalings (dynamic, longrope) see the largest
        # position of queries and keys together, as one forward pass would.
        joint_max = int(max(np.max(_as_positions(q_positions), initial=0),
                            np.max(_as_positions(k_positions), initial=0)))
        q = rotate(q, q_positions, rotary, seq_dim=2, max_position=joint_max)
        k = rotate(k, k_positions, rotary, seq_dim=2, max_position=joint_max)
    logits = _logits(q, k, group, scale, terms.softcap)
    logits, allowed = _visible_logits(logits, terms, q_positions, k_positions)
    return _softmax_values(logits, allowed, terms.sinks, np.repeat(v, group, axis=1))


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
