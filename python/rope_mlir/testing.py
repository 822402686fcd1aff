"""Helpers for the numerical lit tests: inputs, dtype round-trips, tolerances.

Tolerances are stated in ulps of the storage type at the magnitude that sets
the rounding error of each result, not of the (possibly cancelled) result:
* rotation: the norm of the element's pair (a rotation preserves it, and f32
  rounding of a·cos − b·sin is relative to it), times the attention factor;
* attention: the largest |value| (outputs are convex combinations of values).
"""

from __future__ import annotations

import numpy as np

from . import reference as ref

# Storage types by MLIR name: numpy dtype used to hold them, and ulp dtype.
STORAGE = {"f32": np.float32, "f16": np.float16, "bf16": np.uint16}


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def to_storage(x: np.ndarray, dtype: str) -> np.ndarray:
    """f64 values -> the array a kernel takes for `dtype`."""
    if dtype == "bf16":
        return ref.to_bf16_bits(x)
    return np.asarray(x, dtype=STORAGE[dtype])


def from_storage(x: np.ndarray, dtype: str) -> np.ndarray:
    """A kernel's array -> f64 values."""
    if dtype == "bf16":
        return ref.from_bf16_bits(x).astype(np.float64)
    return np.asarray(x, dtype=np.float64)


def quantize(x: np.ndarray, dtype: str) -> np.ndarray:
    """Values exactly representable in `dtype` (so the reference sees the same
    inputs as the kernel)."""
    return from_storage(to_storage(x, dtype), dtype)


def ulp(magnitude: np.ndarray, dtype: str) -> np.ndarray:
    """Spacing of `dtype` at |magnitude| (normal range floor for tiny values)."""
    mag = np.abs(np.asarray(magnitude, dtype=np.float64))
    if dtype == "bf16":
        exp = np.floor(np.log2(np.maximum(mag, 2.0 ** -126)))
        return 2.0 ** (exp - 7)
    t = STORAGE[dtype]
    return np.spacing(np.maximum(mag, np.finfo(t).tiny).astype(t)).astype(np.float64)


def pair_norms(x: np.ndarray, spec: ref.RotarySpec) -> np.ndarray:
    """For every element of x (head dim last), the norm of its rotation pair;
    pass-through elements get their own magnitude."""
    d = x.shape[-1]
    r = spec.rotary_dims or d
    h, off = r // 2, spec.offset
    norms = np.abs(x).astype(np.float64)
    if spec.layout == "half":
        a, b = slice(off, off + h), slice(off + h, off + r)
    else:
        a, b = slice(off, off + r, 2), slice(off + 1, off + r, 2)
    n = np.hypot(x[..., a], x[..., b])
    norms[..., a] = n
    norms[..., b] = n
    return norms


def check_rotation(actual, expected, x, spec, dtype, ulps, name):
    """|actual − expected| <= ulps · ulp(m · pair norm) elementwise."""
    m = ref.attention_factor(spec)
    atol = ulps * ulp(m * pair_norms(x, spec), dtype)
    return check(actual, expected, atol, name)


def check(actual, expected, atol, name):
    """Elementwise |actual − expected| <= atol (array or scalar); prints the
    result and raises AssertionError on failure."""
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    if actual.shape != expected.shape:
        raise AssertionError(f"FAIL {name}: shape {actual.shape} != {expected.shape}")
    err = np.abs(actual - expected)
    atol = np.broadcast_to(np.asarray(atol, dtype=np.float64), err.shape)
    bad = ~(err <= atol)  # NaN counts as bad
    ratio = float(np.max(np.where(atol > 0, err / np.where(atol > 0, atol, 1), err > 0)))
    if bad.any():
        idx = np.unravel_index(np.argmax(np.where(bad, err, -1)), err.shape)
        raise AssertionError(
            f"FAIL {name}: {int(bad.sum())}/{err.size} out of tolerance; worst at {idx}: "
            f"actual={actual[idx]!r} expected={expected[idx]!r} err={err[idx]:.3e} "
            f"tol={atol[idx]:.3e}")
    print(f"PASS {name}: max_abs_err={float(err.max()) if err.size else 0.0:.3e} "
          f"max_err/tol={ratio:.3f} n={err.size}")
    return float(err.max()) if err.size else 0.0
