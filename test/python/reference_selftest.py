# RUN: %python %s | FileCheck %s
#
# The T5 bucketing report (float32 as T5 evaluates it vs float64, |n| <= 4096):
# CHECK-LABEL: --- t5_relative_bucket_float32_vs_float64
# CHECK: NOTE T5 nb=8 md=16 bidirectional=True: float32 value exactly integral at |n| in []
# CHECK-NEXT: NOTE T5 nb=8 md=16 bidirectional=True: float32 and float64 agree for every |n| <= 4096
# CHECK: NOTE T5 nb=8 md=16 bidirectional=False: float32 value exactly integral at |n| in [8]
# CHECK-NEXT: NOTE T5 nb=8 md=16 bidirectional=False: float32 and float64 agree for every |n| <= 4096
# CHECK: NOTE T5 nb=8 md=128 bidirectional=True: float32 value exactly integral at |n| in []
# CHECK-NEXT: NOTE T5 nb=8 md=128 bidirectional=True: float32 and float64 agree for every |n| <= 4096
# CHECK: NOTE T5 nb=8 md=128 bidirectional=False: float32 value exactly integral at |n| in []
# CHECK-NEXT: NOTE T5 nb=8 md=128 bidirectional=False: float32 and float64 agree for every |n| <= 4096
# CHECK: NOTE T5 nb=32 md=16 bidirectional=True: float32 value exactly integral at |n| in []
# CHECK-NEXT: NOTE T5 nb=32 md=16 bidirectional=True: float32 and float64 agree for every |n| <= 4096
# CHECK: PASS T5 nb=32 md=16 bidirectional=False: rejected (max_distance <= max_exact = 16)
# CHECK: NOTE T5 nb=32 md=128 bidirectional=True: float32 value exactly integral at |n| in [16, 32, 64]
# CHECK-NEXT: NOTE T5 nb=32 md=128 bidirectional=True: float32 and float64 agree for every |n| <= 4096
# CHECK: NOTE T5 nb=32 md=128 bidirectional=False: float32 value exactly integral at |n| in []
# CHECK-NEXT: NOTE T5 nb=32 md=128 bidirectional=False: float32 and float64 agree for every |n| <= 4096
# CHECK: ALL {{[0-9]+}} reference self-tests passed
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
# Attention variants: sliding window, softcap, sinks, ALiBi, T5 relative bias
# ---------------------------------------------------------------------------


def contract_attention(q, k, v, *, scale, qp, kp, causal=False, window=None, softcap=None, bias=None,
                       visible=None, sinks=None):
    """The documented contract, one (batch, head, query) row at a time.

    q [B,Hq,Sq,D] (already rotated), k/v [B,Hkv,Sk,*]; qp [B,Sq], kp [B,Sk];
    bias [B,Hq,Sq,Sk] is the sum of the additive terms, visible [B,Hq,Sq,Sk]
    a boolean mask; sinks [Hq].
    """
    B, Hq, Sq, _ = q.shape
    Hkv, Sk = k.shape[1], k.shape[2]
    g = Hq // Hkv
    out = np.zeros((B, Hq, Sq, v.shape[-1]))
    for b in range(B):
        for h in range(Hq):
            for i in range(Sq):
                s_vals, v_rows = [], []
                for j in range(Sk):
                    if causal and not kp[b, j] <= qp[b, i]:
                        continue
                    if window is not None and not qp[b, i] - window < kp[b, j]:
                        continue
                    if visible is not None and not visible[b, h, i, j]:
                        continue
                    s = scale * float(np.dot(q[b, h, i], k[b, h // g, j]))
                    if softcap is not None:
                        s = softcap * math.tanh(s / softcap)
                    if bias is not None:
                        s += bias[b, h, i, j]
                    s_vals.append(s)
                    v_rows.append(v[b, h // g, j])
                if not s_vals:
                    continue  # no visible key: zeros
                m = max(s_vals) if sinks is None else max(max(s_vals), sinks[h])
                w = [math.exp(s - m) for s in s_vals]
                den = sum(w) + (0.0 if sinks is None else math.exp(sinks[h] - m))
                out[b, h, i] = sum(wj * vj for wj, vj in zip(w, v_rows)) / den
    return out


def as_batch(p, B):
    p = np.asarray(p)
    return np.broadcast_to(p, (B, p.shape[-1])) if p.ndim == 1 else p


@test
def attention_window_is_causal_band():
    B, Hq, Hkv, Sq, Sk, D = 2, 4, 2, 5, 9, 8
    q = RNG.standard_normal((B, Hq, Sq, D))
    k = RNG.standard_normal((B, Hkv, Sk, D))
    v = RNG.standard_normal((B, Hkv, Sk, 3))
    qp_default = np.arange(Sq) + (Sk - Sq)
    kp_default = np.arange(Sk)
    qp_batch = np.array([[4, 5, 6, 7, 8], [20, 3, 9, 14, 2]])
    kp_batch = np.array([[0, 1, 2, 3, 4, 5, 6, 7, 8], [1, 3, 5, 7, 9, 11, 13, 15, 17]])
    for label, qp, kp in (("default positions", None, None), ("per-batch positions", qp_batch, kp_batch)):
        qpb = as_batch(qp_default if qp is None else qp, B)
        kpb = as_batch(kp_default if kp is None else kp, B)
        for W in (1, 3, 4, 100):
            out = ref.attention(q, k, v, causal=True, window=W, q_positions=qp, k_positions=kp)
            # Independent: causal plus an explicit boolean band mask p_q - W < p_k.
            band = (kpb[:, None, None, :] > qpb[:, None, :, None] - W)
            close(out, ref.attention(q, k, v, causal=True, mask=band, q_positions=qp, k_positions=kp),
                  f"window={W} == causal + band mask ({label})")
            close(out, contract_attention(q, k, v, scale=1 / math.sqrt(D), qp=qpb, kp=kpb, causal=True, window=W),
                  f"window={W} == row loops ({label})")
        big = ref.attention(q, k, v, causal=True, window=10**6, q_positions=qp, k_positions=kp)
        close(big, ref.attention(q, k, v, causal=True, q_positions=qp, k_positions=kp),
              f"window wider than every distance == causal ({label})")
    # W = 1: each query sees only the key at its own position, so out = that v row.
    one = ref.attention(q, k, v, causal=True, window=1)
    expected = np.stack([v[:, h // 2, Sk - Sq:] for h in range(Hq)], axis=1)
    close(one, expected, "window=1 sees only its own position", atol=1e-15)
    # A query whose window holds no key yields zeros.
    gap = ref.attention(q, k, v, causal=True, window=2, q_positions=[3, 30, 31, 32, 40], k_positions=np.arange(Sk))
    check(np.all(gap[:, :, 1:] == 0.0) and np.any(gap[:, :, 0] != 0.0), "window with no key inside yields zeros")
    # Rotary does not interact with the window (masking is by position).
    spec = RotarySpec(layout="interleaved")
    rq = ref.rotate(q, qp_batch, spec, seq_dim=2, max_position=20)
    rk = ref.rotate(k, kp_batch, spec, seq_dim=2, max_position=20)
    close(ref.attention(q, k, v, causal=True, window=3, rotary=spec, q_positions=qp_batch, k_positions=kp_batch),
          contract_attention(rq, rk, v, scale=1 / math.sqrt(D), qp=qp_batch, kp=kp_batch, causal=True, window=3),
          "window + rotary == row loops on rotated q, k")


@test
def attention_softcap_is_tanh_on_logits():
    B, H, Sq, Sk, D = 2, 3, 4, 6, 8
    q = RNG.standard_normal((B, H, Sq, D)) * 3
    k = RNG.standard_normal((B, H, Sk, D)) * 3
    v = RNG.standard_normal((B, H, Sk, 5))
    scale, c = 0.4, 2.5
    logits = scale * np.einsum("bhqd,bhkd->bhqk", q, k)
    check(np.abs(logits).max() > 3 * c, "softcap test logits exceed the cap")
    capped = c * np.tanh(logits / c)
    # Explicit softmax of the capped logits (non-causal).
    w = np.exp(capped - capped.max(axis=-1, keepdims=True))
    expected = np.einsum("bhqk,bhkd->bhqd", w / w.sum(axis=-1, keepdims=True), v)
    close(ref.attention(q, k, v, scale=scale, softcap=c), expected, "softcap == softmax(c * tanh(s / c))")
    # Capping happens before an additive mask: c * tanh(s / c) + bias, not c * tanh((s + bias) / c).
    bias = RNG.standard_normal((Sq, Sk)) * 4
    z = capped + bias
    w = np.exp(z - z.max(axis=-1, keepdims=True))
    expected = np.einsum("bhqk,bhkd->bhqd", w / w.sum(axis=-1, keepdims=True), v)
    out = ref.attention(q, k, v, scale=scale, softcap=c, mask=bias)
    close(out, expected, "softcap applies before the additive mask")
    z_wrong = c * np.tanh((logits + bias) / c)
    w = np.exp(z_wrong - z_wrong.max(axis=-1, keepdims=True))
    wrong = np.einsum("bhqk,bhkd->bhqd", w / w.sum(axis=-1, keepdims=True), v)
    check(np.abs(out - wrong).max() > 1e-3, "softcap after the mask would differ (test is sensitive)")
    # Causal, per-row loops; an integer cap works too.
    qp, kp = np.arange(Sq) + 2, np.arange(Sk)
    close(ref.attention(q, k, v, scale=scale, softcap=3, causal=True),
          contract_attention(q, k, v, scale=scale, qp=as_batch(qp, B), kp=as_batch(kp, B), causal=True, softcap=3.0),
          "softcap + causal == row loops")
    # A huge cap is (numerically) no cap.
    close(ref.attention(q, k, v, scale=scale, softcap=1e7), ref.attention(q, k, v, scale=scale),
          "softcap=1e7 ~ no softcap", atol=1e-9)


@test
def attention_sinks_are_a_zero_value_key():
    B, Hq, Hkv, Sq, Sk, D, Dv = 2, 4, 2, 3, 5, 8, 4
    q = RNG.standard_normal((B, Hq, Sq, D))
    k = RNG.standard_normal((B, Hkv, Sk, D))
    v = RNG.standard_normal((B, Hkv, Sk, Dv))
    sinks = np.array([-1.5, 0.0, 2.0, 40.0])  # the last dominates every logit
    for causal in (False, True):
        out = ref.attention(q, k, v, causal=causal, sinks=sinks)
        # Independent: one extra key per row whose logit is sink_h and whose
        # value row is zero (k = 0 makes q.k = 0; a float mask adds sink_h).
        k_rep = np.stack([k[:, h // (Hq // Hkv)] for h in range(Hq)], axis=1)
        v_rep = np.stack([v[:, h // (Hq // Hkv)] for h in range(Hq)], axis=1)
        k_ext = np.concatenate([k_rep, np.zeros((B, Hq, 1, D))], axis=2)
        v_ext = np.concatenate([v_rep, np.zeros((B, Hq, 1, Dv))], axis=2)
        fmask = np.zeros((1, Hq, Sq, Sk + 1))
        if causal:
            visible = np.arange(Sk)[None, :] <= (np.arange(Sq) + Sk - Sq)[:, None]
            fmask[..., :Sk] = np.where(visible, 0.0, -np.inf)
        fmask[..., Sk] = sinks[None, :, None]
        close(out, ref.attention(q, k_ext, v_ext, mask=fmask),
              f"sinks == softmax with an extra zero-value key (causal={causal})")
    check(np.abs(out[:, 3]).max() < 1e-12, "a dominant sink drives the output to ~0")
    close(ref.attention(q, k, v, causal=True, sinks=np.full(Hq, -np.inf)), ref.attention(q, k, v, causal=True),
          "sinks of -inf == no sinks", atol=0)
    # Sinks are not scaled or capped.
    qp, kp = np.arange(Sq) + 2, np.arange(Sk)
    close(ref.attention(q, k, v, causal=True, sinks=sinks, scale=0.3, softcap=1.0),
          contract_attention(q, k, v, scale=0.3, qp=as_batch(qp, B), kp=as_batch(kp, B), causal=True,
                             softcap=1.0, sinks=sinks),
          "sinks with scale and softcap == row loops (sink not scaled or capped)")


@test
def attention_fully_masked_row_with_sinks_is_zero():
    B, H, S, D = 1, 2, 3, 4
    q = RNG.standard_normal((B, H, S, D))
    k = RNG.standard_normal((B, H, S, D))
    v = RNG.standard_normal((B, H, S, D))
    sinks = np.array([0.5, -3.0])
    mask = np.ones((S, S), dtype=bool)
    mask[1] = False
    out = ref.attention(q, k, v, mask=mask, sinks=sinks)
    check(np.all(np.isfinite(out)) and np.all(out[:, :, 1] == 0.0), "fully masked row with sinks yields exactly 0")
    check(np.all(out[:, :, [0, 2]] != 0.0), "other rows with sinks are not zero")
    fmask = np.where(mask, 0.0, -np.inf)
    out2 = ref.attention(q, k, v, mask=fmask, sinks=sinks)
    check(np.all(out2[:, :, 1] == 0.0), "fully -inf row with sinks yields exactly 0")
    out3 = ref.attention(q, k, v, causal=True, window=2, q_positions=[-1, 5, 2], k_positions=[0, 1, 2],
                         sinks=np.full(H, -np.inf))
    check(np.all(out3[:, :, :2] == 0.0) and np.all(np.isfinite(out3)),
          "rows with no visible key (causal, window) and -inf sinks yield exactly 0")


def alibi_bias(slopes, qp, kp):
    B, Sq, Sk = qp.shape[0], qp.shape[1], kp.shape[1]
    bias = np.zeros((B, len(slopes), Sq, Sk))
    for b in range(B):
        for h in range(len(slopes)):
            for i in range(Sq):
                for j in range(Sk):
                    bias[b, h, i, j] = -slopes[h] * abs(int(qp[b, i]) - int(kp[b, j]))
    return bias


@test
def attention_alibi_is_an_additive_bias():
    B, Hq, Hkv, Sq, Sk, D = 2, 6, 3, 4, 7, 8
    q = RNG.standard_normal((B, Hq, Sq, D))
    k = RNG.standard_normal((B, Hkv, Sk, D))
    v = RNG.standard_normal((B, Hkv, Sk, 5))
    slopes = ref.alibi_slopes(Hq)
    qp_batch = np.array([[3, 4, 5, 6], [10, 2, 7, 0]])
    kp_batch = np.array([[0, 1, 2, 3, 4, 5, 6], [0, 2, 4, 6, 8, 10, 12]])
    for label, qp, kp in (("default positions", None, None), ("per-batch positions", qp_batch, kp_batch)):
        qpb = as_batch(np.arange(Sq) + Sk - Sq if qp is None else qp, B)
        kpb = as_batch(np.arange(Sk) if kp is None else kp, B)
        bias = alibi_bias(slopes, qpb, kpb)
        for causal in (False, True):
            out = ref.attention(q, k, v, alibi_slopes=slopes, causal=causal, q_positions=qp, k_positions=kp)
            close(out, ref.attention(q, k, v, mask=bias, causal=causal, q_positions=qp, k_positions=kp),
                  f"ALiBi == float mask -slope*|p_q - p_k| (causal={causal}, {label})")
        # BLOOM's slope * p_k differs by a per-row constant: equal under causal masking only.
        bloom = slopes[None, :, None, None] * kpb[:, None, None, :].astype(np.float64)
        bloom = np.broadcast_to(bloom, (B, Hq, Sq, Sk))
        close(ref.attention(q, k, v, alibi_slopes=slopes, causal=True, q_positions=qp, k_positions=kp),
              ref.attention(q, k, v, mask=bloom, causal=True, q_positions=qp, k_positions=kp),
              f"causal ALiBi == BLOOM's slope * p_k ({label})", atol=1e-12)
        check(np.abs(ref.attention(q, k, v, alibi_slopes=slopes, q_positions=qp, k_positions=kp)
                     - ref.attention(q, k, v, mask=bloom, q_positions=qp, k_positions=kp)).max() > 1e-3,
              f"non-causal ALiBi != BLOOM's slope * p_k ({label})")


@test
def alibi_slopes_values():
    check(np.array_equal(ref.alibi_slopes(8), 2.0 ** -np.arange(1, 9)), "alibi_slopes(8) == 2^-1 .. 2^-8 exactly")
    check(ref.alibi_slopes(8).dtype == np.float64, "alibi_slopes returns float64")
    # BLOOM's build_alibi_tensor for 12 heads: base 2^-1 to powers 1..8, then
    # extra_base 2^-0.5 to the odd powers 1, 3, 5, 7.
    bloom12 = np.concatenate([0.5 ** np.arange(1, 9), (2.0 ** -0.5) ** np.array([1, 3, 5, 7])])
    # (BLOOM's repeated powers of the rounded 2^-0.5 drift by a few ulps.)
    close(ref.alibi_slopes(12), bloom12, "alibi_slopes(12) == BLOOM recipe", atol=0, rtol=1e-15)
    # 2^-(k + 1/2) = sqrt(1/2) / 2^k, whose float64 rounding is exact scaling of sqrt's.
    close(ref.alibi_slopes(12)[8:], math.sqrt(0.5) / 2.0 ** np.arange(4), "alibi_slopes(12) extra slopes",
          atol=0, rtol=2.3e-16)

    # Press et al.'s get_slopes, transcribed.
    def get_slopes(n):
        def power_of_2(n):
            start = 2 ** (-2 ** -(math.log2(n) - 3))
            return [start * start ** i for i in range(n)]
        if math.log2(n).is_integer():
            return power_of_2(n)
        p = 2 ** math.floor(math.log2(n))
        return power_of_2(p) + get_slopes(2 * p)[0::2][: n - p]

    for n in (1, 2, 3, 5, 6, 7, 12, 16, 20, 32, 40, 64, 96):
        close(ref.alibi_slopes(n), np.array(get_slopes(n)), f"alibi_slopes({n}) == get_slopes", atol=0, rtol=1e-14)


def t5_log_part_f64(n, nb, md, bid):
    # float64 value of log(n / max_exact) / log(md / max_exact) * (nb' - max_exact) for
    # a distance n >= max_exact (nb' the per-direction bucket count); None below.
    nb = nb // 2 if bid else nb
    max_exact = nb // 2
    if n < max_exact:
        return None
    return math.log(n / max_exact) / math.log(md / max_exact) * (nb - max_exact)


def t5_log_part_f32(n, nb, md, bid):
    # The same in float32 (scalar np.float32 operations, correctly rounded log).
    nb = nb // 2 if bid else nb
    max_exact = nb // 2
    if n < max_exact:
        return None
    log_ratio = np.float32(math.log(float(np.float32(n) / np.float32(max_exact))))
    return float((log_ratio / np.float32(math.log(md / max_exact))) * np.float32(nb - max_exact))


def t5_bucket(rel, nb, md, bid, log_part):
    # Scalar transcription of T5's _relative_position_bucket, with the
    # logarithmic part of large distances from `log_part`.
    bucket = 0
    n_total = nb
    if bid:
        nb //= 2
        if rel > 0:
            bucket += nb
        n = abs(rel)
    else:
        n = -min(rel, 0)
    max_exact = nb // 2
    if n < max_exact:
        return bucket + n
    large = max_exact + int(log_part(n, n_total, md, bid))
    return bucket + min(large, nb - 1)


def t5_bucket_f64(rel, nb, md, bid):
    return t5_bucket(rel, nb, md, bid, t5_log_part_f64)


def t5_bucket_f32(rel, nb, md, bid):
    return t5_bucket(rel, nb, md, bid, t5_log_part_f32)


@test
def t5_relative_bucket_values():
    # Hand-computed from T5's definition (rel = memory - query position).
    cases = {
        # bidirectional, 32 buckets, max_distance 128: 16 per direction, 8 exact
        (32, 128, True): {0: 0, -1: 1, -7: 7, -8: 8, -12: 9, -16: 10, -20: 10, -32: 12, -64: 14, -100: 15,
                          -127: 15, -128: 15, -1000: 15, 1: 17, 7: 23, 8: 24, 16: 26, 100: 31, 1000: 31},
        # unidirectional (decoder), 32 buckets, max_distance 128: 16 exact
        (32, 128, False): {5: 0, 1000: 0, 0: 0, -1: 1, -15: 15, -16: 16, -20: 17, -32: 21, -64: 26, -100: 30,
                           -127: 31, -128: 31, -5000: 31},
        # bidirectional, 8 buckets, max_distance 16: 4 per direction, 2 exact
        (8, 16, True): {0: 0, -1: 1, -2: 2, -4: 2, -8: 3, -16: 3, 1: 5, 3: 6, 8: 7, 100: 7},
    }
    for (nb, md, bid), table in cases.items():
        rel = np.array(list(table.keys()))
        got = ref.t5_relative_bucket(rel, num_buckets=nb, max_distance=md, bidirectional=bid)
        check(got.dtype == np.int64 and list(got) == list(table.values()),
              f"T5 buckets hand-computed nb={nb} md={md} bidirectional={bid}")
    rel2 = np.array([[-3, 0, 40], [7, -200, 2]], dtype=np.int32)
    got2 = ref.t5_relative_bucket(rel2, num_buckets=32, max_distance=128, bidirectional=True)
    check(got2.shape == (2, 3) and got2.dtype == np.int64, "T5 buckets keep the shape (int32 input)")


@test
def t5_relative_bucket_float32_vs_float64():
    n = np.arange(-4096, 4097)
    for nb in (8, 32):
        for md in (16, 128):
            for bid in (True, False):
                tag = f"nb={nb} md={md} bidirectional={bid}"
                max_exact = (nb // 2 if bid else nb) // 2
                if md <= max_exact:
                    try:
                        ref.t5_relative_bucket(n, num_buckets=nb, max_distance=md, bidirectional=bid)
                    except ValueError:
                        print(f"PASS T5 {tag}: rejected (max_distance <= max_exact = {max_exact})")
                        continue
                    raise AssertionError(f"FAIL T5 {tag} accepted max_distance <= max_exact")
                got = ref.t5_relative_bucket(n, num_buckets=nb, max_distance=md, bidirectional=bid)
                f32 = np.array([t5_bucket_f32(int(x), nb, md, bid) for x in n])
                f64 = np.array([t5_bucket_f64(int(x), nb, md, bid) for x in n])
                check(np.array_equal(got, f32), f"T5 {tag}: vectorised == float32 scalar loop for |n| <= 4096")
                check(got.min() >= 0 and got.max() == nb - 1, f"T5 {tag}: buckets in [0, {nb - 1}], all reached")
                # Distances where the float32 value before truncation is an
                # exact nonzero integer below the clamp: a logf 1 ulp low there
                # would give the bucket below.
                per_direction = nb // 2 if bid else nb
                log_part = {x: t5_log_part_f32(x, nb, md, bid) for x in range(max_exact, 4097)}
                exact = [x for x, val in log_part.items()
                         if val != 0.0 and val == int(val) and max_exact + int(val) < per_direction - 1]
                print(f"NOTE T5 {tag}: float32 value exactly integral at |n| in {exact}")
                diff = n[f32 != f64]
                if diff.size:
                    where = ", ".join(f"n={x}: f32={f32[x + 4096]} f64={f64[x + 4096]}" for x in diff)
                    print(f"NOTE T5 {tag}: float32 and float64 differ at {diff.size} distances: {where}")
                else:
                    print(f"NOTE T5 {tag}: float32 and float64 agree for every |n| <= 4096")


@test
def attention_t5_bias_is_an_additive_bias():
    B, Hq, Hkv, Sq, Sk, D = 2, 4, 1, 5, 40, 8
    q = RNG.standard_normal((B, Hq, Sq, D))
    k = RNG.standard_normal((B, Hkv, Sk, D))
    v = RNG.standard_normal((B, Hkv, Sk, 3))
    qp_batch = np.array([[0, 9, 17, 30, 39], [35, 3, 100, 20, 21]])
    kp_batch = np.stack([np.arange(Sk), np.arange(Sk) * 3])
    for nb, md, bid in ((32, 128, True), (32, 20, False), (8, 16, True)):
        table = RNG.standard_normal((nb, Hq)) * 2
        for label, qp, kp in (("default positions", None, None), ("per-batch positions", qp_batch, kp_batch)):
            qpb = as_batch(np.arange(Sq) + Sk - Sq if qp is None else qp, B)
            kpb = as_batch(np.arange(Sk) if kp is None else kp, B)
            bias = np.zeros((B, Hq, Sq, Sk))
            for b in range(B):
                for i in range(Sq):
                    for j in range(Sk):
                        bucket = t5_bucket_f32(int(kpb[b, j] - qpb[b, i]), nb, md, bid)
                        bias[b, :, i, j] = table[bucket]
            for causal in (False, True):
                out = ref.attention(q, k, v, relative_bias=table, relative_buckets=(nb, md, bid), causal=causal,
                                    q_positions=qp, k_positions=kp)
                close(out, ref.attention(q, k, v, mask=bias, causal=causal, q_positions=qp, k_positions=kp),
                      f"T5 bias == float mask of table[bucket(p_k - p_q), h] nb={nb} md={md} "
                      f"bidirectional={bid} causal={causal} ({label})")


@test
def attention_all_features_match_row_loops():
    # Everything at once against the contract written as per-row loops:
    # GQA, rotary, softcap, float mask + ALiBi + T5 (additive), bool mask,
    # causal + window, sinks.
    B, Hq, Hkv, Sq, Sk, D, Dv = 2, 6, 2, 6, 11, 8, 3
    q = RNG.standard_normal((B, Hq, Sq, D)) * 2
    k = RNG.standard_normal((B, Hkv, Sk, D)) * 2
    v = RNG.standard_normal((B, Hkv, Sk, Dv))
    qp = np.array([[5, 6, 7, 8, 9, 10], [12, 3, 30, 16, 17, 0]])
    kp = np.stack([np.arange(Sk), np.arange(Sk) * 2 + 1])
    spec = RotarySpec(rotary_dims=4, layout="half")
    slopes = ref.alibi_slopes(Hq)
    table = RNG.standard_normal((16, Hq))
    sinks = RNG.standard_normal(Hq)
    fmask = RNG.standard_normal((Sq, Sk))
    fmask[2, 3] = -np.inf
    bmask = RNG.random((B, 1, Sq, Sk)) > 0.2
    scale, c, W = 0.5, 4.0, 5
    # The float mask and the bool mask cannot both go through `mask`; fold the
    # bool one into the float one as -inf for the reference call.
    fm_all = np.where(bmask, fmask, -np.inf)
    out = ref.attention(q, k, v, scale=scale, causal=True, mask=fm_all, rotary=spec, q_positions=qp,
                        k_positions=kp, window=W, softcap=c, sinks=sinks, alibi_slopes=slopes, relative_bias=table,
                        relative_buckets=(16, 24, True))
    joint = int(max(qp.max(), kp.max()))
    rq = ref.rotate(q, qp, spec, seq_dim=2, max_position=joint)
    rk = ref.rotate(k, kp, spec, seq_dim=2, max_position=joint)
    bias = np.broadcast_to(fmask, (B, Hq, Sq, Sk)) + alibi_bias(slopes, qp, kp)
    for b in range(B):
        for i in range(Sq):
            for j in range(Sk):
                bias[b, :, i, j] += table[t5_bucket_f32(int(kp[b, j] - qp[b, i]), 16, 24, True)]
    visible = np.broadcast_to(bmask & np.isfinite(fmask), (B, Hq, Sq, Sk))
    expected = contract_attention(rq, rk, v, scale=scale, qp=qp, kp=kp, causal=True, window=W, softcap=c,
                                  bias=np.where(visible, bias, 0.0), visible=visible, sinks=sinks)
    close(out, expected, "all features together == row loops")
    check(np.any(np.all(expected == 0.0, axis=-1)), "all-features test has rows with no visible key")


@test
def attention_argument_validation():
    q = np.zeros((1, 4, 3, 8))
    k = np.zeros((1, 2, 3, 8))
    v = np.zeros((1, 2, 3, 8))
    t5 = np.zeros((32, 4))
    bad = (
        ("window without causal", {"window": 2}, ValueError, "window"),
        ("window=0", {"window": 0, "causal": True}, ValueError, "window"),
        ("window=2.0", {"window": 2.0, "causal": True}, TypeError, "window"),
        ("softcap=0", {"softcap": 0.0}, ValueError, "softcap"),
        ("softcap=-1", {"softcap": -1.0}, ValueError, "softcap"),
        ("softcap=inf", {"softcap": np.inf}, ValueError, "softcap"),
        ("sinks of shape [2] for Hq=4", {"sinks": np.zeros(2)}, ValueError, "sinks"),
        ("a NaN sink", {"sinks": np.array([0.0, np.nan, 0.0, 0.0])}, ValueError, "sinks"),
        ("alibi_slopes of shape [4, 1]", {"alibi_slopes": np.zeros((4, 1))}, ValueError, "alibi_slopes"),
        ("boolean alibi_slopes", {"alibi_slopes": [True] * 4}, TypeError, "alibi_slopes"),
        ("relative_bias without relative_buckets", {"relative_bias": t5}, ValueError, "relative_buckets"),
        ("relative_buckets without relative_bias", {"relative_buckets": (32, 128, True)}, ValueError,
         "relative_bias"),
        ("relative_bias of shape [32, 2] for Hq=4", {"relative_bias": np.zeros((32, 2)),
                                                     "relative_buckets": (32, 128, True)}, ValueError,
         "relative_bias"),
        ("num_buckets=1", {"relative_bias": np.zeros((1, 4)), "relative_buckets": (1, 128, False)}, ValueError,
         "num_buckets"),
        ("bidirectional num_buckets=3", {"relative_bias": np.zeros((3, 4)), "relative_buckets": (3, 128, True)},
         ValueError, "num_buckets"),
        ("bidirectional max_distance=8 <= max_exact=8", {"relative_bias": t5, "relative_buckets": (32, 8, True)},
         ValueError, "max_distance"),
        ("unidirectional max_distance=16 <= max_exact=16", {"relative_bias": t5,
                                                            "relative_buckets": (32, 16, False)},
         ValueError, "max_distance"),
        ("relative_buckets of length 2", {"relative_bias": t5, "relative_buckets": (32, 128)}, TypeError,
         "relative_buckets"),
        ("non-bool bidirectional", {"relative_bias": t5, "relative_buckets": (32, 128, 1)}, TypeError,
         "bidirectional"),
        ("q_positions of length 4 for Sq=3", {"alibi_slopes": np.zeros(4), "q_positions": np.arange(4)},
         ValueError, "q_positions"),
    )
    for label, kwargs, exc, word in bad:
        try:
            ref.attention(q, k, v, **kwargs)
        except exc as e:
            check(word in str(e), f"attention rejects {label} ({exc.__name__} naming {word}: {e})")
        else:
            raise AssertionError(f"FAIL attention accepted {label}")
    for args, exc in ((np.array([1.5]), TypeError), (np.array([True]), TypeError)):
        try:
            ref.t5_relative_bucket(args, num_buckets=32, max_distance=128, bidirectional=True)
        except exc:
            print(f"PASS t5_relative_bucket rejects dtype {args.dtype}")
        else:
            raise AssertionError(f"FAIL t5_relative_bucket accepted dtype {args.dtype}")
    for n, exc in ((0, ValueError), (-3, ValueError), (2.0, TypeError)):
        try:
            ref.alibi_slopes(n)
        except exc:
            print(f"PASS alibi_slopes rejects {n!r}")
        else:
            raise AssertionError(f"FAIL alibi_slopes accepted {n!r}")


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
