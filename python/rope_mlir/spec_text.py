"""`#rope.spec<...>` text for a RotarySpec, and a RotarySpec from such text.

    attr = spec.to_attr()                  # or spec.to_attr(head_dim)
    spec = RotarySpec.from_attr(attr)

The printer writes what the dialect's parser reads (defaults omitted, floats
that parse back to the same double); the parser reads what the dialect's
printer writes (and what the printer here writes), so a test states a spec
once, as either. The syntax is that of `#rope.spec` in
docs/Dialects/RopeDialect.md.
"""

from __future__ import annotations

import math
import re

from .reference import RotarySpec, Scaling

# ---------------------------------------------------------------------------
# Printing
# ---------------------------------------------------------------------------


def format_float(value) -> str:
    """An f64 literal that MLIR parses back to the same double (repr, with a '.')."""
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"cannot print non-finite value {value!r} as an MLIR float")
    mantissa, e, exponent = repr(v).partition("e")
    if "." not in mantissa:
        mantissa += ".0"  # MLIR float literals need a '.': 1e-05 -> 1.0e-05
    return mantissa + e + exponent


def _floats(values) -> str:
    return "[" + ", ".join(format_float(v) for v in values) + "]"


def _params(pairs) -> str:
    return ", ".join(f"{k} = {v}" for k, v in pairs)


def format_scaling(sc: Scaling) -> str | None:
    """`#rope.<kind><...>` for `sc`, or None for the default (no scaling)."""
    kind = sc.kind
    if kind == "default":
        return None
    orig = sc.original_max_position_embeddings
    if kind in ("dynamic", "yarn", "llama3", "longrope") and orig is None:
        raise ValueError(f"{kind} scaling needs original_max_position_embeddings")
    if kind == "linear":
        p = [("factor", format_float(sc.factor))]
    elif kind == "dynamic":
        p = [("factor", format_float(sc.factor)), ("original_max_position_embeddings", int(orig))]
    elif kind == "yarn":
        p = [("factor", format_float(sc.factor)), ("original_max_position_embeddings", int(orig))]
        if float(sc.beta_fast) != 32.0:
            p.append(("beta_fast", format_float(sc.beta_fast)))
        if float(sc.beta_slow) != 1.0:
            p.append(("beta_slow", format_float(sc.beta_slow)))
        if sc.mscale is not None:
            p.append(("mscale", format_float(sc.mscale)))
        if sc.mscale_all_dim is not None:
            p.append(("mscale_all_dim", format_float(sc.mscale_all_dim)))
        if not sc.truncate:
            p.append(("truncate", "false"))
    elif kind == "llama3":
        p = [("factor", format_float(sc.factor))]
        if float(sc.low_freq_factor) != 1.0:
            p.append(("low_freq_factor", format_float(sc.low_freq_factor)))
        if float(sc.high_freq_factor) != 4.0:
            p.append(("high_freq_factor", format_float(sc.high_freq_factor)))
        p.append(("original_max_position_embeddings", int(orig)))
    elif kind == "longrope":
        p = [("short_factor", _floats(sc.short_factor)), ("long_factor", _floats(sc.long_factor))]
        if float(sc.factor) != 1.0:
            p.append(("factor", format_float(sc.factor)))
        p.append(("original_max_position_embeddings", int(orig)))
    elif kind == "freq_factors":
        p = [("factors", _floats(sc.freq_factors))]
    else:
        raise ValueError(f"unknown scaling kind {kind!r}")
    return f"#rope.{kind}<{_params(p)}>"


def format_spec(spec: RotarySpec, head_dim: int | None = None) -> str:
    """`#rope.spec<...>` for `spec`, defaults omitted. With `head_dim`, the
    rotated range is checked against it and a partial rotary spec that
    covers the whole head is written without `dims`."""
    r = spec.rotary_dims
    if head_dim is not None:
        r = head_dim - spec.offset if r is None else int(r)
        if r <= 0 or r % 2 or spec.offset < 0 or spec.offset + r > head_dim:
            raise ValueError(f"rotary dims {r} at offset {spec.offset} do not fit head dim {head_dim}")
        if spec.offset == 0 and r == head_dim:
            r = None
    elif r is not None and (int(r) <= 0 or int(r) % 2):
        raise ValueError(f"rotary_dims must be a positive even number, got {r}")
    p = []
    if float(spec.base) != 10000.0:
        p.append(("base", format_float(spec.base)))
    if r is not None:
        p.append(("dims", int(r)))  # partial rotary (0, the default, means the whole head)
    if spec.offset != 0:
        if r is None:
            raise ValueError("an offset needs rotary_dims (or a head_dim to take them from)")
        p.append(("offset", int(spec.offset)))
    if spec.layout != "half":
        if spec.layout != "interleaved":
            raise ValueError(f"unknown layout {spec.layout!r}")
        p.append(("layout", "interleaved"))
    scaling = format_scaling(spec.scaling)
    if scaling is not None:
        p.append(("scaling", scaling))
    if spec.attention_factor is not None:
        p.append(("attention_factor", format_float(spec.attention_factor)))
    if spec.inverse:
        p.append(("inverse", "true"))
    return f"#rope.spec<{_params(p)}>" if p else "#rope.spec<>"


# ---------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------

_TOKEN = re.compile(r"\s*(#rope\.\w+|[A-Za-z_]\w*|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[<>\[\],=])")


def _tokens(text: str) -> list[str]:
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise ValueError(f"cannot parse a rotary spec at {text[pos:pos + 20]!r} in {text!r}")
        out.append(m.group(1))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, text: str):
        self.text, self.toks, self.i = text, _tokens(text), 0

    def error(self, what: str) -> ValueError:
        near = " ".join(self.toks[self.i:self.i + 4]) or "the end"
        return ValueError(f"{what} at {near!r} in {self.text!r}")

    def take(self, expected: str | None = None) -> str:
        if self.i >= len(self.toks):
            raise self.error(f"expected {expected or 'more'}")
        tok = self.toks[self.i]
        if expected is not None and tok != expected:
            raise self.error(f"expected {expected!r}")
        self.i += 1
        return tok

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def value(self):
        tok = self.peek()
        if tok == "[":
            self.take("[")
            items = []
            while self.peek() != "]":
                items.append(float(self.take()))
                if self.peek() == ",":
                    self.take(",")
            self.take("]")
            return tuple(items)
        if tok is not None and tok.startswith("#rope."):
            return self.attr()
        if tok is None or tok in "<>[],=":
            raise self.error("expected a value")
        return self.take()

    def attr(self):
        """`#rope.<name><k = v, ...>` as (name, {k: v})."""
        name = self.take()
        if not name.startswith("#rope."):
            raise self.error("expected a #rope attribute")
        self.take("<")
        params = {}
        while self.peek() != ">":
            key = self.take()
            self.take("=")
            if key in params:
                raise self.error(f"duplicate parameter {key!r}")
            params[key] = self.value()
            if self.peek() == ",":
                self.take(",")
            elif self.peek() != ">":
                raise self.error("expected ',' or '>'")
        self.take(">")
        return name[len("#rope."):], params


def _bool(text: str, what: str) -> bool:
    if text not in ("true", "false"):
        raise ValueError(f"{what} must be true or false, got {text!r}")
    return text == "true"


_SCALING_FIELDS = {
    "linear": {"factor"},
    "dynamic": {"factor", "original_max_position_embeddings"},
    "yarn": {"factor", "original_max_position_embeddings", "beta_fast", "beta_slow", "mscale",
             "mscale_all_dim", "truncate"},
    "llama3": {"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"},
    "longrope": {"short_factor", "long_factor", "factor", "original_max_position_embeddings"},
    "freq_factors": {"factors"},
}


def _scaling(kind: str, params: dict) -> Scaling:
    if kind not in _SCALING_FIELDS:
        raise ValueError(f"unknown scaling kind #rope.{kind}")
    unknown = set(params) - _SCALING_FIELDS[kind]
    if unknown:
        raise ValueError(f"#rope.{kind} has no parameter {sorted(unknown)[0]!r}")
    kw = {}
    for key, val in params.items():
        if key == "original_max_position_embeddings":
            kw[key] = int(val)
        elif key == "truncate":
            kw[key] = _bool(val, "truncate")
        elif key == "factors":
            kw["freq_factors"] = tuple(val)
        elif key in ("short_factor", "long_factor"):
            kw[key] = tuple(val)
        else:
            kw[key] = float(val)
    return Scaling(kind, **kw)


def parse_spec(text: str) -> RotarySpec:
    """The RotarySpec of `#rope.spec<...>` text (as rope-opt prints it, or as
    format_spec writes it). `dims = 0` (the whole head) is `rotary_dims=None`."""
    p = _Parser(text)
    name, params = p.attr()
    if p.peek() is not None:
        raise p.error("unexpected text after the spec")
    if name != "spec":
        raise ValueError(f"expected #rope.spec, got #rope.{name}")
    kw = {}
    for key, val in params.items():
        if key == "base":
            kw["base"] = float(val)
        elif key == "dims":
            kw["rotary_dims"] = int(val) or None
        elif key == "offset":
            kw["offset"] = int(val)
        elif key == "layout":
            if val not in ("half", "interleaved"):
                raise ValueError(f"layout must be half or interleaved, got {val!r}")
            kw["layout"] = val
        elif key == "scaling":
            if not isinstance(val, tuple) or len(val) != 2 or not isinstance(val[1], dict):
                raise ValueError(f"scaling must be a #rope scaling attribute, got {val!r}")
            kw["scaling"] = _scaling(*val)
        elif key == "attention_factor":
            kw["attention_factor"] = float(val)
        elif key == "inverse":
            kw["inverse"] = _bool(val, "inverse")
        else:
            raise ValueError(f"#rope.spec has no parameter {key!r}")
    return RotarySpec(**kw)
