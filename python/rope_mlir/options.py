"""How `rope_mlir.compile` compiles: CompileOptions and pass pipelines."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Mapping

__all__ = ["TARGETS", "CompileOptions", "pipeline_text"]

TARGETS = ("cpu", "cuda")


@dataclass(frozen=True)
class CompileOptions:
    """How `compile` compiles. Every field is also a keyword of `compile`.

    target: "cpu" (``--rope-lower-to-cpu``) or "cuda" (``--rope-lower-to-nvvm``).
    pipeline: a pass pipeline replacing the target's, in MLIR's textual form
        (``"rope-lower-to-cpu{query-tile=32}"``) or rope-opt's flags
        (``"--rope-lower-to-cpu=query-tile=32"``).
    pipeline_options: options of the target's pipeline, e.g.
        ``{"query-tile": 32, "runtime-checks": False}``; `compile` takes them
        as keywords too (``query_tile=32``).
    opt_level: LLVM's optimisation level (0-3).
    source_name: the file name diagnostics give the source.
    output: compile ahead of time into a shared library at this path (CPU),
        or the folder of compiled kernels (CUDA; see rope_mlir.cuda).
    chip: the GPU (CUDA) the kernels are for.
    emulate: CUDA only: run the GPU program on the CPU, its kernels in the
        GPU emulator with its race, bounds and divergence checks
        (``rope-lower-to-nvvm{emulate=true}``; no GPU needed).
    prebuilt_only: CUDA only: compile nothing; look the module up in `output`.
    """
    target: str = "cpu"
    pipeline: str | None = None
    pipeline_options: Mapping = field(default_factory=dict)
    opt_level: int = 2
    source_name: str = "<source>"
    output: str | os.PathLike | None = None
    chip: str = "sm_90"
    emulate: bool = False
    prebuilt_only: bool = False

    def __post_init__(self):
        if self.target not in TARGETS:
            raise ValueError(f"target: expected one of {', '.join(map(repr, TARGETS))}, "
                             f"got {self.target!r}")
        if not isinstance(self.opt_level, int) or not 0 <= self.opt_level <= 3:
            raise ValueError(f"opt_level: expected an integer from 0 to 3, got {self.opt_level!r}")
        if self.pipeline is not None and self.pipeline_options:
            raise ValueError("pipeline_options: options of the target's pipeline cannot be given "
                             "with an explicit pipeline (put them into it)")

    def pass_pipeline(self) -> str:
        """The textual pass pipeline this compiles with."""
        if self.pipeline is not None:
            return pipeline_text(self.pipeline)
        if self.target == "cpu":
            name, options = "rope-lower-to-cpu", dict(self.pipeline_options)
        elif self.emulate:
            name, options = "rope-lower-to-nvvm", {"emulate": True, **self.pipeline_options}
        else:
            name, options = "rope-lower-to-nvvm", {"chip": self.chip, **self.pipeline_options}
        return name + _options_text(options)


def _options_text(options: Mapping) -> str:
    if not options:
        return ""
    text = " ".join(f"{str(k).replace('_', '-')}="
                    f"{str(v).lower() if isinstance(v, bool) else v}" for k, v in options.items())
    return "{" + text + "}"


def pipeline_text(pipeline: str | list[str]) -> str:
    """A pass pipeline in MLIR's textual form. Accepts that form, or rope-opt's
    flags (``--rope-lower-to-cpu=query-tile=3 key-tile=5 --canonicalize``,
    also as a list), which it converts."""
    flags = pipeline if isinstance(pipeline, list) else [pipeline]
    flags = [f for f in " ".join(flags).replace(" --", "\n--").split("\n") if f.strip()]
    if not flags or not flags[0].lstrip().startswith("--"):
        return " ".join(flags)
    passes = []
    for flag in flags:
        name, _, options = flag.strip()[2:].partition("=")
        if name == "pass-pipeline":  # --pass-pipeline=builtin.module(...)
            passes.append(options.strip("'\""))
        else:
            passes.append(name + ("{" + options + "}" if options else ""))
    return ",".join(passes)
