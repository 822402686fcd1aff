# RUN: %python %s
"""Self-consistency checks for rope_mlir.reference (no compiled code involved).

Each check uses a property that holds independently of how the reference is
implemented (group laws of rotations, explicit loops, closed-form values), so
a bug in the reference cannot hide behind an identical bug in the check.
Exits non-zero on the first failure.
"""

import math
import sys

import numpy as np

from rope_mlir import reference as ref
from rope_mlir.reference import RotarySpec, Scaling

RNG = np.random.default_rng(1234)
LAYOUTS = ("half", "interleaved")
TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


def close(actual, expected, name, atol=1e-12, rtol=1e-12):
    ref.assert_close(actual, expected, atol=atol, rtol=rtol, dtype=np.float64, name=name)


def check(cond, name):
    if not cond:
        raise AssertionError(f"FAIL {name}")
    print(f"PASS {name}")


# ---------------------------------------------------------------------------
# Rotation properties
# ---------------------------------------------------------------------------


@test
def relative_position_property():
    # <R_m q, R_n k> must depend only on m - n.
    D = 16
    q = RNG.standard_normal((1, D))
    k = RNG.standard_normal((1, D))
    pairs = [(0, 0), (5, 5), (17, 17), (9, 2), (107, 100), (1000, 993), (3, 11), (50, 58)]
    for layout in LAYOUTS:
        for scaling in (Scaling(), Scaling(kind="linear", factor=4.0)):
            spec = RotarySpec(layout=layout, scaling=scaling)
            dots = {}
            for m, n in pairs:
                qm = ref.rotate(q, [m], spec)[0]
                kn = ref.rotate(k, [n], spec)[0]
                dots.setdefault(m - n, []).append(qm @ kn)
            for delta, vals in dots.items():
                close(np.array(vals), np.full(len(vals), vals[0]),
                      f"relative position {layout}/{scaling.kind} delta={delta}", atol=1e-11)
            # And it is not trivially constant.
            check(abs(dots[0][0] - dots[7][0]) > 1e-6, f"relative position {layout}/{scaling.kind} non-trivial")


@test
def inverse_undoes_rotation():
    x = RNG.standard_normal((2, 3, 9, 12))
    pos = RNG.integers(0, 5000, size=9)
    for layout in LAYOUTS:
        for scaling in (Scaling(), Scaling(kind="linear", factor=2.0),
                        Scaling(kind="llama3", factor=8.0, original_max_position_embeddings=64)):
            spec = RotarySpec(layout=layout, scaling=scaling, rotary_dims=8, offset=2)
            inv = RotarySpec(layout=layout, scaling=scaling, rotary_dims=8, offset=2, inverse=True)
            y = ref.rotate(ref.rotate(x, pos, spec, seq_dim=2), pos, inv, seq_dim=2)
            close(y, x, f"rotate then inverse {layout}/{scaling.kind}")


@test
def rotation_group_law():
    # R_q R_p = R_{p+q} for position-independent frequencies.
    x = RNG.standard_normal((4, 3, 10))  # [B, S, D], seq_dim 1
    p = np.array([0, 3, 77])
    q = np.array([5, 1000, 2])
    for layout in LAYOUTS:
        for scaling in (Scaling(), Scaling(kind="linear", factor=3.0),
                        Scaling(kind="freq_factors", freq_factors=(1.0, 2.0, 4.0, 8.0, 16.0))):
            spec = RotarySpec(layout=layout, scaling=scaling)
            two = ref.rotate(ref.rotate(x, p, spec, seq_dim=1), q, spec, seq_dim=1)
            one = ref.rotate(x, p + q, spec, seq_dim=1)
            close(two, one, f"R_q R_p = R_(p+q) {layout}/{scaling.kind}", atol=1e-11)


@test
def partial_rotary_pass_through():
    x = RNG.standard_normal((2, 5, 3, 10)).astype(np.float32)  # [B, S, H, D], seq_dim 1
    pos = np.arange(5) * 31
    for layout in LAYOUTS:
        spec = RotarySpec(layout=layout, rotary_dims=4, offset=2, attention_factor=1.7)
        y = ref.rotate(x, pos, spec, seq_dim=1)
        check(y.dtype == np.float64, f"rotate returns float64 ({layout})")
        keep = np.r_[0:2, 6:10]
        check(np.array_equal(y[..., keep], x[..., keep].astype(np.float64)),
              f"partial rotary pass-through dims bit-identical ({layout})")
        check(not np.allclose(y[..., 2:6], x[..., 2:6]), f"partial rotary rotates [2,6) ({layout})")


@test
def explicit_pair_rotation():
    # Compare against complex multiplication on the documented pairing, with m.
    D, r, off = 12, 8, 3
    h = r // 2
    x = RNG.standard_normal((6, D))
    pos = np.array([0, 1, 2, 10, 100, 4096])
    m = 0.8
    for layout in LAYOUTS:
        for inverse in (False, True):
            spec = RotarySpec(base=500.0, rotary_dims=r, offset=off, layout=layout,
                              attention_factor=m, inverse=inverse)
            y = ref.rotate(x, pos, spec, seq_dim=0)
            expected = x.copy()
            for s, p in enumerate(pos):
                for i in range(h):
                    a_idx, b_idx = ((off + i, off + i + h) if layout == "half"
                                    else (off + 2 * i, off + 2 * i + 1))
                    phi = p * 500.0 ** (-2.0 * i / r) * (-1 if inverse else 1)
                    z = complex(x[s, a_idx], x[s, b_idx]) * complex(math.cos(phi), math.sin(phi)) * m
                    expected[s, a_idx], expected[s, b_idx] = z.real, z.imag
            close(y, expected, f"explicit pair rotation {layout} inverse={inverse}", atol=1e-12)


@test
def per_batch_positions():
    # [B, S] positions must equal rotating each batch with its own [S] row.
    x = RNG.standard_normal((3, 2, 4, 8))
    pos = RNG.integers(0, 300, size=(3, 4))
    spec = RotarySpec(layout="interleaved")
    y = ref.rotate(x, pos, spec, seq_dim=2)
    for b in range(3):
        close(y[b], ref.rotate(x[b], pos[b], spec, seq_dim=1), f"per-batch positions b={b}")


@test
def cos_sin_table_shape_and_factor():
    spec = RotarySpec(rotary_dims=6, attention_factor=2.0, inverse=True)
    cos, sin = ref.cos_sin_table(np.arange(12).reshape(3, 4), spec, 10)
    check(cos.shape == (3, 4, 3) and sin.shape == (3, 4, 3), "cos_sin_table shape")
    close(cos ** 2 + sin ** 2, np.full(cos.shape, 4.0), "cos_sin_table magnitude m^2")
    close(sin[0, 1], -2.0 * np.sin(10000.0 ** (-np.arange(0, 6, 2) / 6)), "cos_sin_table inverse sin")


# ---------------------------------------------------------------------------
# Frequency scalings
# ---------------------------------------------------------------------------


@test
def dynamic_below_original_is_default():
    sc = Scaling(kind="dynamic", factor=4.0, original_max_position_embeddings=2048)
    base = ref.inv_freq(RotarySpec(), 64)
    for maxp in (0, 100, 2047):
        close(ref.inv_freq(RotarySpec(scaling=sc), 64, maxp), base, f"dynamic == default at max_position={maxp}")
    longer = ref.inv_freq(RotarySpec(scaling=sc), 64, 8191)
    check(longer[0] == 1.0 and np.all(longer[1:] < base[1:]), "dynamic lowers frequencies beyond L_orig")
    # Closed form at seq_len = 4 * L_orig with factor 4: base * 13^(64/62).
    close(longer, ref.inv_freq(RotarySpec(base=10000.0 * 13.0 ** (64 / 62)), 64), "dynamic closed form")


@test
def yarn_factor_one_is_default():
    sc = Scaling(kind="yarn", factor=1.0, original_max_position_embeddings=4096)
    spec = RotarySpec(scaling=sc)
    close(ref.inv_freq(spec, 128), ref.inv_freq(RotarySpec(), 128), "yarn factor=1 frequencies == default")
    check(ref.attention_factor(spec) == 1.0, "yarn factor=1 attention factor == 1")


@test
def yarn_shape():
    L, factor = 4096, 16.0
    sc = Scaling(kind="yarn", factor=factor, original_max_position_embeddings=L)
    f = ref.inv_freq(RotarySpec(scaling=sc), 128)
    base = ref.inv_freq(RotarySpec(), 128)
    ratio = f / base
    # Highest frequencies extrapolate (unchanged), lowest interpolate (/factor).
    close(ratio[:5], np.ones(5), "yarn high frequencies unchanged")
    close(ratio[-5:], np.full(5, 1 / factor), "yarn low frequencies interpolated")
    check(np.all(np.diff(ratio) <= 1e-15), "yarn ratio monotone non-increasing")
    close(ref.attention_factor(RotarySpec(scaling=sc)), 0.1 * math.log(factor) + 1, "yarn mscale")
    sc2 = Scaling(kind="yarn", factor=40.0, original_max_position_embeddings=L, mscale=1.0, mscale_all_dim=1.0)
    close(ref.attention_factor(RotarySpec(scaling=sc2)), 1.0, "yarn mscale/mscale_all_dim equal -> 1")
    check(ref.attention_factor(RotarySpec(scaling=sc, attention_factor=0.5)) == 0.5,
          "explicit attention_factor overrides yarn")


@test
def llama3_frequencies():
    sc = Scaling(kind="llama3", factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
                 original_max_position_embeddings=8192)
    spec = RotarySpec(base=500000.0, scaling=sc)
    f = ref.inv_freq(spec, 128)
    base = ref.inv_freq(RotarySpec(base=500000.0), 128)
    check(f.shape == (64,), "llama3 shape")
    check(f[0] == 1.0, "llama3 first frequency unchanged (1.0)")
    close(f[-1], base[-1] / 8.0, "llama3 last frequency divided by 8", atol=0)
    wavelen = 2 * math.pi / base
    medium = (wavelen >= 8192 / 4) & (wavelen <= 8192)
    check(medium.any(), "llama3 has medium band")
    check(np.all((f[medium] <= base[medium]) & (f[medium] >= base[medium] / 8)), "llama3 medium band in between")
    check(ref.attention_factor(spec) == 1.0, "llama3 attention factor 1")


@test
def longrope_selection():
    h = 4
    short, long = (1.0, 1.5, 2.0, 2.5), (1.0, 4.0, 9.0, 16.0)
    sc = Scaling(kind="longrope", factor=8.0, original_max_position_embeddings=4096,
                 short_factor=short, long_factor=long)
    spec = RotarySpec(scaling=sc)
    base = ref.inv_freq(RotarySpec(), 2 * h)
    close(ref.inv_freq(spec, 2 * h, 4095), base / np.array(short), "longrope short at seq_len == L_orig")
    close(ref.inv_freq(spec, 2 * h), base / np.array(short), "longrope short without max_position")
    close(ref.inv_freq(spec, 2 * h, 4096), base / np.array(long), "longrope long beyond L_orig")
    close(ref.attention_factor(spec), math.sqrt(1 + math.log(8.0) / math.log(4096)), "longrope attention factor")


# ---------------------------------------------------------------------------
# Attention
# ---------------------------------------------------------------------------


def manual_attention(q, k, v, allowed, scale):
    # Per-row loops, independent of the vectorised implementation.
    B, H, Sq, _ = q.shape
    out = np.zeros((B, H, Sq, v.shape[-1]))
    for b in range(B):
        for hh in range(H):
            for i in range(Sq):
                idx = [j for j in range(k.shape[2]) if allowed[b, hh, i, j]]
                if not idx:
                    continue
                s = np.array([scale * q[b, hh, i] @ k[b, hh, j] for j in idx])
                w = np.exp(s - s.max())
                w /= w.sum()
                out[b, hh, i] = sum(wj * v[b, hh, j] for wj, j in zip(w, idx))
    return out


@test
def attention_causal_matches_manual():
    B, H, Sq, Sk, D, Dv = 2, 3, 4, 6, 8, 5
    q = RNG.standard_normal((B, H, Sq, D))
    k = RNG.standard_normal((B, H, Sk, D))
    v = RNG.standard_normal((B, H, Sk, Dv))
    # Default positions: queries are the last Sq of the Sk keys.
    allowed = np.zeros((B, H, Sq, Sk), dtype=bool)
    for i in range(Sq):
        allowed[:, :, i, : i + (Sk - Sq) + 1] = True
    out = ref.attention(q, k, v, causal=True)
    close(out, manual_attention(q, k, v, allowed, 1 / math.sqrt(D)), "attention causal == manual masked softmax")
    # Same thing via an explicit bool mask and via an additive float mask.
    close(ref.attention(q, k, v, mask=allowed[0, 0]), out, "attention bool mask == causal")
    fmask = np.where(allowed[0, 0], 0.0, -np.inf)
    close(ref.attention(q, k, v, mask=fmask), out, "attention -inf float mask == causal")
    # Non-causal, custom scale.
    close(ref.attention(q, k, v, scale=0.3), manual_attention(q, k, v, np.ones_like(allowed), 0.3),
          "attention full == manual softmax")


@test
def attention_per_batch_positions_causal():
    B, H, S, D = 2, 1, 5, 4
    q = RNG.standard_normal((B, H, S, D))
    k = RNG.standard_normal((B, H, S, D))
    v = RNG.standard_normal((B, H, S, D))
    qp = np.array([[0, 1, 2, 3, 4], [10, 8, 6, 4, 2]])
    kp = np.array([[0, 1, 2, 3, 4], [2, 4, 6, 8, 10]])
    allowed = kp[:, None, None, :] <= qp[:, None, :, None]
    spec = RotarySpec(layout="interleaved")
    out = ref.attention(q, k, v, causal=True, rotary=spec, q_positions=qp, k_positions=kp)
    rq = ref.rotate(q, qp, spec, seq_dim=2)
    rk = ref.rotate(k, kp, spec, seq_dim=2)
    close(out, manual_attention(rq, rk, v, allowed, 1 / math.sqrt(D)), "attention per-batch positions causal+rotary")


@test
def attention_fully_masked_row_is_zero():
    B, H, S, D = 1, 2, 3, 4
    q = RNG.standard_normal((B, H, S, D))
    k = RNG.standard_normal((B, H, S, D))
    v = RNG.standard_normal((B, H, S, D))
    mask = np.ones((S, S), dtype=bool)
    mask[1] = False
    out = ref.attention(q, k, v, mask=mask)
    check(np.all(np.isfinite(out)), "fully masked row: no NaN")
    check(np.all(out[:, :, 1] == 0.0), "fully masked row yields exactly 0 (bool mask)")
    fmask = np.where(mask, 0.0, -np.inf)
    out2 = ref.attention(q, k, v, mask=fmask)
    check(np.all(out2[:, :, 1] == 0.0) and np.all(np.isfinite(out2)), "fully masked row yields 0 (float -inf mask)")
    close(out2, out, "bool and -inf masks agree")
    # Causal with a query position before every key is also fully masked.
    out3 = ref.attention(q, k, v, causal=True, q_positions=[-1, 0, 1], k_positions=[0, 1, 2])
    check(np.all(out3[:, :, 0] == 0.0), "causal row before all keys yields 0")


@test
def attention_gqa_equals_repeated_kv():
    B, Hq, Hkv, Sq, Sk, D = 2, 6, 2, 3, 5, 8
    q = RNG.standard_normal((B, Hq, Sq, D))
    k = RNG.standard_normal((B, Hkv, Sk, D))
    v = RNG.standard_normal((B, Hkv, Sk, 4))
    spec = RotarySpec(rotary_dims=4)
    g = Hq // Hkv
    for kwargs in ({}, {"causal": True, "rotary": spec}):
        out = ref.attention(q, k, v, **kwargs)
        # Explicit repetition: query head h uses kv head h // g.
        k_rep = np.stack([k[:, h // g] for h in range(Hq)], axis=1)
        v_rep = np.stack([v[:, h // g] for h in range(Hq)], axis=1)
        close(out, ref.attention(q, k_rep, v_rep, **kwargs), f"GQA == repeated kv heads {sorted(kwargs)}")
    # MQA
    out = ref.attention(q, k[:, :1], v[:, :1])
    close(out, ref.attention(q, np.repeat(k[:, :1], Hq, 1), np.repeat(v[:, :1], Hq, 1)), "MQA == repeated kv head")


@test
def attention_rotary_is_relative():
    # Shifting every q and k position by the same amount must not change attention.
    B, H, S, D = 1, 2, 5, 8
    q = RNG.standard_normal((B, H, S, D))
    k = RNG.standard_normal((B, H, S, D))
    v = RNG.standard_normal((B, H, S, D))
    spec = RotarySpec()
    pos = np.arange(S)
    a = ref.attention(q, k, v, causal=True, rotary=spec, q_positions=pos, k_positions=pos)
    b = ref.attention(q, k, v, causal=True, rotary=spec, q_positions=pos + 777, k_positions=pos + 777)
    close(a, b, "rotary attention is shift invariant", atol=1e-11)


# ---------------------------------------------------------------------------
# Linear attention
# ---------------------------------------------------------------------------


def phi(x):
    return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))


@test
def linear_attention_direct_formula():
    B, H, S, D, Dv = 2, 2, 5, 6, 3
    q = RNG.standard_normal((B, H, S, D)) * 2
    k = RNG.standard_normal((B, H, S, D)) * 2
    v = RNG.standard_normal((B, H, S, Dv))
    out = ref.linear_attention(q, k, v)
    # Direct: (phi(Q) phi(K)^T V) / (phi(Q) sum_n phi(K_n)).
    fq, fk = phi(q), phi(k)
    num = fq @ (np.swapaxes(fk, -1, -2) @ v)
    den = fq @ fk.sum(axis=2)[..., None]
    close(out, num / den, "linear attention non-causal == direct formula")

    # Causal + rotary via explicit loops over m and n.
    spec = RotarySpec(layout="interleaved")
    pos = np.arange(S) * 3 + 1
    out = ref.linear_attention(q, k, v, rotary=spec, positions=pos, causal=True)
    rq = ref.rotate(fq, pos, spec, seq_dim=2)
    rk = ref.rotate(fk, pos, spec, seq_dim=2)
    expected = np.zeros_like(out)
    for b in range(B):
        for hh in range(H):
            for mi in range(S):
                nsum = sum((rq[b, hh, mi] @ rk[b, hh, n]) * v[b, hh, n] for n in range(mi + 1))
                dsum = sum(fq[b, hh, mi] @ fk[b, hh, n] for n in range(mi + 1))
                expected[b, hh, mi] = nsum / dsum
    close(out, expected, "linear attention causal+rotary == loops")


# ---------------------------------------------------------------------------
# Sinusoidal and dtype helpers
# ---------------------------------------------------------------------------


@test
def sinusoidal_values():
    pos = np.array([[0, 1], [7, 300]])
    pe = ref.sinusoidal(pos, 6)
    check(pe.shape == (2, 2, 6), "sinusoidal shape")
    exp = np.zeros((2, 2, 6))
    for idx in np.ndindex(2, 2):
        p = pos[idx]
        for i in range(3):
            exp[idx][2 * i] = math.sin(p / 10000.0 ** (2 * i / 6))
            exp[idx][2 * i + 1] = math.cos(p / 10000.0 ** (2 * i / 6))
    close(pe, exp, "sinusoidal == formula")


@test
def bf16_round_trip():
    # Against the classic float32 bit trick (round-to-nearest-even on the
    # upper 16 bits) for random finite float32 bit patterns.
    bits = RNG.integers(0, 2**32, size=200000, dtype=np.uint64).astype(np.uint32)
    f32 = bits.view(np.float32)
    finite = np.isfinite(f32)
    b = bits[finite]
    trick = ((b + np.uint32(0x7FFF) + ((b >> 16) & np.uint32(1))) >> 16).astype(np.uint16)
    check(np.array_equal(ref.to_bf16_bits(f32[finite]), trick), "to_bf16_bits == float32 RNE bit trick")
    # Ties to even, specials.
    vals = np.array([1.0, 1.0 + 2**-8, 1.0 + 3 * 2**-8, -0.0, np.inf, -np.inf, np.nan, 3.5e38, 1e-45])
    got = ref.to_bf16_bits(vals)
    check(list(got[:6]) == [0x3F80, 0x3F80, 0x3F82, 0x8000, 0x7F80, 0xFF80], "bf16 ties-to-even and specials")
    check(np.isnan(ref.from_bf16_bits(got[6])), "bf16 NaN stays NaN")
    check(got[7] == 0x7F80, "bf16 overflow -> inf")
    check(got[8] == 0x0000, "bf16 tiny -> 0")
    # float64 input must not double-round through float32: 1 + 2^-8 + 2^-40
    # is just above a bf16 tie, so it must round up.
    check(ref.to_bf16_bits(np.array([1.0 + 2**-8 + 2**-40]))[0] == 0x3F81, "bf16 no double rounding from float64")
    rt = ref.from_bf16_bits(ref.to_bf16_bits(np.array([0.15625, -2.0, 65280.0])))
    check(rt.dtype == np.float32 and list(rt) == [0.15625, -2.0, 65280.0], "bf16 round trip exact values")


@test
def assert_close_behaviour():
    e = np.array([1.0, 2.0, 1e-3])
    ref.assert_close(e * (1 + 1e-7), e, rtol=2e-7, name="rtol pass")
    ref.assert_close(np.float32(1.0) + np.spacing(np.float32(1.0)) * 2, 1.0, ulps=2, name="ulps pass")
    ref.assert_close(1.0 + 2**-7, 1.0, ulps=1, dtype="bfloat16", name="bf16 ulps pass")
    for bad, kw, label in (
        (e + 1e-3, {"atol": 1e-4}, "atol"),
        (np.array([1.0, np.nan, 1e-3]), {"atol": 1.0}, "NaN"),
        (1.0 + 2**-6, {"ulps": 1, "dtype": "bfloat16"}, "bf16 ulps"),
        (np.ones(2), {"atol": 1.0}, "shape"),
    ):
        expected = e if label not in ("bf16 ulps",) else 1.0
        try:
            ref.assert_close(bad, expected, name=f"expected failure ({label})", **kw)
        except AssertionError:
            print(f"PASS assert_close rejects ({label})")
        else:
            raise AssertionError(f"FAIL assert_close accepted bad input ({label})")


def main():
    for fn in TESTS:
        print(f"--- {fn.__name__}")
        fn()
    print(f"ALL {len(TESTS)} reference self-tests passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
