"""The rotary spec: everything that determines a rotary embedding except the
head dim, as Python values and as the dialect's `#rope.spec` attribute.

    spec = RotarySpec(base=500000.0, scaling=Scaling("llama3", factor=8.0,
                                                     original_max_position_embeddings=8192))
    text = spec.to_attr()                  # '#rope.spec<base = 5.000000e+05, ...>'
    spec = RotarySpec.from_attr(text)      # the same spec

The text is read and written by the dialect itself, through the C API
(ropeSpecParse / ropeSpecPrint in include/rope-c/Spec.h): the attribute's
parser, verifier and printer, so Python and rope-opt agree on the syntax by
construction. The fields cross as JSON, named like the attribute's
parameters; `rotary_dims=None` is `dims = 0` (the whole head),
`Scaling(kind="default")` is no scaling, `Scaling.freq_factors` is
`#rope.freq_factors<factors = ...>`. An invalid spec raises SpecError (a
ValueError) naming the field, or with the dialect's diagnostics.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

from . import _capi
from .errors import SpecError

__all__ = ["LAYOUTS", "SCALING_KINDS", "RotarySpec", "Scaling"]

SCALING_KINDS = ("default", "linear", "dynamic", "yarn", "llama3", "longrope", "freq_factors")
LAYOUTS = ("half", "interleaved")


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

    def to_attr(self, head_dim: int | None = None) -> str:
        """This spec as the dialect prints it (`#rope.spec<...>`, defaults
        omitted). With `head_dim`, the rotated range is checked against it
        and rotary dims that cover the whole head are written as the default
        (no `dims`)."""
        return _capi.spec_print(_spec_fields(self, head_dim))

    @classmethod
    def from_attr(cls, text: str) -> "RotarySpec":
        """The spec of `#rope.spec<...>` text, read and verified by the dialect.
        `dims = 0` (the whole head) is `rotary_dims=None`."""
        return _spec_of_fields(_capi.spec_parse(text))


# ---------------------------------------------------------------------------
# The attribute's parameters (the JSON fields of ropeSpecParse/ropeSpecPrint)
# ---------------------------------------------------------------------------

# (JSON name, Scaling attribute, kind of value) of each scaling kind's parameters.
_FLOAT, _OPTIONAL_FLOAT, _INT, _BOOL, _FLOATS = "float", "float|None", "int", "bool", "floats"
_L_ORIG = ("original_max_position_embeddings", "original_max_position_embeddings", _INT)
_SCALING_PARAMETERS = {
    "linear": (("factor", "factor", _FLOAT),),
    "dynamic": (("factor", "factor", _FLOAT), _L_ORIG),
    "yarn": (("factor", "factor", _FLOAT), _L_ORIG, ("beta_fast", "beta_fast", _FLOAT),
             ("beta_slow", "beta_slow", _FLOAT), ("mscale", "mscale", _OPTIONAL_FLOAT),
             ("mscale_all_dim", "mscale_all_dim", _OPTIONAL_FLOAT),
             ("truncate", "truncate", _BOOL)),
    "llama3": (("factor", "factor", _FLOAT), ("low_freq_factor", "low_freq_factor", _FLOAT),
               ("high_freq_factor", "high_freq_factor", _FLOAT), _L_ORIG),
    "longrope": (("short_factor", "short_factor", _FLOATS),
                 ("long_factor", "long_factor", _FLOATS), ("factor", "factor", _FLOAT), _L_ORIG),
    "freq_factors": (("factors", "freq_factors", _FLOATS),),
}


def _float(value, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise SpecError(f"{what} must be a real number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise SpecError(f"{what} must be finite, got {value!r}")
    return value


def _int(value, what: str) -> int:
    if (isinstance(value, bool) or not isinstance(value, numbers.Real)
            or not math.isfinite(value) or value != int(value)):
        raise SpecError(f"{what} must be an integer, got {value!r}")
    return int(value)


def _bool(value, what: str) -> bool:
    is_bool = isinstance(value, bool) or getattr(getattr(value, "dtype", None), "kind", "") == "b"
    if not is_bool and not (isinstance(value, numbers.Integral) and value in (0, 1)):
        raise SpecError(f"{what} must be true or false, got {value!r}")
    return bool(value)


def _floats(values, what: str) -> list[float]:
    if values is None or isinstance(values, (str, bytes)):
        raise SpecError(f"{what} must be a list of real numbers, got {values!r}")
    try:
        items = list(values)
    except TypeError:
        raise SpecError(f"{what} must be a list of real numbers, got {values!r}") from None
    return [_float(v, f"{what}[{i}]") for i, v in enumerate(items)]


_TO_JSON = {_FLOAT: _float, _INT: _int, _BOOL: _bool, _FLOATS: _floats,
            _OPTIONAL_FLOAT: lambda v, what: None if v is None else _float(v, what)}


def _scaling_fields(sc: Scaling) -> dict | None:
    """The JSON of `sc` (None: no scaling), with plain Python numbers."""
    if not isinstance(sc, Scaling):
        raise SpecError(f"scaling must be a Scaling, got {sc!r}")
    if sc.kind == "default":
        return None
    if sc.kind not in _SCALING_PARAMETERS:
        raise SpecError(f"scaling.kind: unknown scaling kind {sc.kind!r}; expected one of "
                        f"{', '.join(SCALING_KINDS)}")
    fields = {"kind": sc.kind}
    for name, attribute, kind in _SCALING_PARAMETERS[sc.kind]:
        value = getattr(sc, attribute)
        if value is None and kind in (_INT, _FLOATS):
            raise SpecError(f"{sc.kind} scaling needs {attribute}")
        fields[name] = _TO_JSON[kind](value, f"scaling.{attribute}")
    return fields


def _resolved_dims(spec: RotarySpec, head_dim: int | None) -> int | None:
    """The `dims` to write (None: the whole head), checked against `head_dim`."""
    offset = _int(spec.offset, "offset")
    r = None if spec.rotary_dims is None else _int(spec.rotary_dims, "rotary_dims")
    if head_dim is not None:
        head_dim = _int(head_dim, "head_dim")
        r = head_dim - offset if r is None else r
        if r <= 0 or r % 2 or offset < 0 or offset + r > head_dim:
            raise SpecError(f"rotary dims {r} at offset {offset} do not fit head dim {head_dim}")
        if offset == 0 and r == head_dim:
            r = None
    elif r is not None and (r <= 0 or r % 2):
        raise SpecError(f"rotary_dims must be a positive even number, got {r}")
    if offset != 0 and r is None:
        raise SpecError("offset: an offset needs rotary_dims (or a head_dim to take them from)")
    return r


def _spec_fields(spec: RotarySpec, head_dim: int | None) -> dict:
    """The JSON of `spec`, for ropeSpecPrint."""
    if not isinstance(spec, RotarySpec):
        raise SpecError(f"expected a RotarySpec, got {spec!r}")
    if spec.layout not in LAYOUTS:
        raise SpecError(f"layout must be one of {', '.join(LAYOUTS)}, got {spec.layout!r}")
    dims = _resolved_dims(spec, head_dim)
    return {"base": _float(spec.base, "base"), "dims": dims or 0,
            "offset": _int(spec.offset, "offset"), "layout": spec.layout,
            "scaling": _scaling_fields(spec.scaling),
            "attention_factor": (None if spec.attention_factor is None
                                 else _float(spec.attention_factor, "attention_factor")),
            "inverse": _bool(spec.inverse, "inverse")}


def _scaling_of_fields(fields: dict | None) -> Scaling:
    if fields is None:
        return Scaling()
    kind = fields.get("kind")
    if kind not in _SCALING_PARAMETERS:
        raise SpecError(f"the C API returned an unknown scaling kind {kind!r}")
    values = {}
    for name, attribute, type_ in _SCALING_PARAMETERS[kind]:
        if name in fields:
            value = _TO_JSON[type_](fields[name], f"scaling.{attribute}")
            values[attribute] = tuple(value) if type_ == _FLOATS else value
    return Scaling(kind, **values)


def _spec_of_fields(fields: dict) -> RotarySpec:
    """The RotarySpec of ropeSpecParse's JSON."""
    dims = _int(fields.get("dims", 0), "dims")
    factor = fields.get("attention_factor")
    return RotarySpec(base=_float(fields.get("base", 10000.0), "base"),
                      rotary_dims=dims or None,
                      offset=_int(fields.get("offset", 0), "offset"),
                      layout=fields.get("layout", "half"),
                      scaling=_scaling_of_fields(fields.get("scaling")),
                      attention_factor=None if factor is None else _float(factor, "attention_factor"),
                      inverse=_bool(fields.get("inverse", False), "inverse"))
