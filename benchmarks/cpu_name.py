"""The host CPU as the benchmark tables name it (benchmarks/run.py and
benchmarks/torch_backend.py): /proc/cpuinfo's model name, and where it
gives them, the family/model numbers and the vector, low-precision and
matrix ISAs. VMs often name every Xeon alike ("Intel(R) Xeon(R)
Processor"), and the ISA separates machine kinds whose figures differ:
oneDNN's bf16 runs on AMX where it exists (10x PyTorch's bf16 figures)."""

from __future__ import annotations

import platform

ISAS = (("avx512f", "AVX-512"), ("avx512_bf16", "AVX512-BF16"),
        ("avx512_fp16", "AVX512-FP16"), ("amx_bf16", "AMX-BF16"))


def cpu_fields() -> dict:
    """The first processor's fields of /proc/cpuinfo (empty where there is none)."""
    fields = {}
    try:
        for line in open("/proc/cpuinfo"):
            if not line.strip():
                break
            key, _, value = line.partition(":")
            fields[key.strip()] = value.strip()
    except OSError:
        pass
    return fields


def cpu_name(fields: dict | None = None) -> str:
    fields = cpu_fields() if fields is None else fields
    name = fields.get("model name") or platform.processor() or "unknown"
    if "cpu family" in fields and "model" in fields:
        flags = set(fields.get("flags", "").split())
        isa = [label for flag, label in ISAS if flag in flags]
        name += (f" (family {fields['cpu family']} model {fields['model']}; "
                 f"{', '.join(isa) or 'no AVX-512'})")
    return name
