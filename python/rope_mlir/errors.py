"""The exceptions of the package, and the diagnostics they carry.

    NativeLibraryError   a native library of the package is missing (OSError)
    CompileError         MLIR rejected a module or a pipeline failed
    SpecError            a RotarySpec or `#rope.spec` text is invalid (ValueError)
    ArgumentError        an argument does not fit a compiled function (ValueError, TypeError)
    RuntimeCheckError    a compiled function's runtime check failed

Compilation and the spec functions of the C API report MLIR's diagnostics as
JSON (include/rope-c/Compiler.h); `parse_diagnostics` reads them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

__all__ = ["ArgumentError", "CompileError", "Diagnostic", "NativeLibraryError",
           "RuntimeCheckError", "SpecError", "parse_diagnostics"]


@dataclass(frozen=True)
class Diagnostic:
    """One diagnostic of a failed compilation, at its source location."""
    severity: str
    location: str
    message: str
    notes: tuple = ()  # ((location, message), ...)

    def __str__(self) -> str:
        lines = [f"{self.location}: {self.severity}: {self.message}"]
        lines += [f"{loc}: note: {msg}" for loc, msg in self.notes]
        return "\n".join(lines)


def parse_diagnostics(text: str) -> list[Diagnostic]:
    """The diagnostics of the C API's JSON list (text that is not JSON
    becomes one error at an unknown location)."""
    try:
        entries = json.loads(text) if text else []
    except json.JSONDecodeError:
        return [Diagnostic("error", "<unknown>", text)]
    return [Diagnostic(e["severity"], e["location"], e["message"],
                       tuple((n["location"], n["message"]) for n in e.get("notes", [])))
            for e in entries]


class NativeLibraryError(OSError):
    """A native library of the package is missing (the build did not make it)."""


class CompileError(RuntimeError):
    """Compilation failed. `diagnostics` lists MLIR's diagnostics with their
    locations (``file:line:col``); the message is all of them, one per line."""

    def __init__(self, message: str, diagnostics=()):
        self.diagnostics = tuple(diagnostics)
        text = "\n".join(str(d) for d in self.diagnostics)
        super().__init__(f"{message}\n{text}" if text else message)


class SpecError(ValueError):
    """A rotary spec is invalid: a RotarySpec the dialect rejects, or
    `#rope.spec` text that does not parse or verify. The message names the
    field or says where the text is wrong; `diagnostics` holds the dialect's
    own diagnostics where it produced them."""

    def __init__(self, message: str, diagnostics=()):
        self.diagnostics = tuple(diagnostics)
        details = "; ".join(d.message for d in self.diagnostics)
        super().__init__(f"{message}: {details}" if details else message)


class RuntimeCheckError(RuntimeError):
    """A compiled function's runtime check failed (e.g. dynamic extents that
    must agree do not): nothing of the failing op ran. The message is the
    op's diagnostic with its source location and the extents found."""


class ArgumentError(ValueError, TypeError):
    """An argument does not fit the compiled function's signature; the message
    names the argument and both types. (A ValueError; also a TypeError, as
    earlier versions raised.)"""
