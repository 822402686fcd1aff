"""IREE baseline for the prefill benchmark, run by benchmarks/run.py in the
frontend venv (iree-base-compiler and iree-base-runtime from PyPI, pinned in
utils/requirements-frontends.txt).

The same layer as torch2_sdpa.py (HF RoPE, then causal
`scaled_dot_product_attention`; GQA by HF's `repeat_kv`), exported with
`torch.export`, imported to the torch dialect by IREE's own FX importer and
compiled by IREE for its CPU backend (`llvm-cpu`, the host CPU), where SDPA
becomes IREE's fused `iree_linalg_ext.attention`. Run by IREE's runtime on
the `local-task` driver with THREADS workers. Compile time is not timed.

    python iree_attention.py THREADS INV_FREQ_JSON CONFIGS_JSON
prints {"version": ..., "times": {"Hq/Hkv/S": best seconds}, "errors": {...}}
as JSON (errors: max |IREE - PyTorch| / max |PyTorch| of each config, so a
wrong compile cannot pass as a fast one).
"""

import importlib.metadata
import json

import numpy as np
import torch
import torch.nn.functional as F
from iree import compiler as ireec
from iree import runtime as ireert
from iree.compiler.extras.fx_importer import FxImporter

from hf_layer import arguments, best_seconds, hf_rope, inputs


class Layer(torch.nn.Module):
    """RoPE the Hugging Face way (cos/sin of [S, D] from inv_freq), repeat_kv
    for GQA, causal SDPA."""

    def __init__(self, inv_freq, groups):
        super().__init__()
        self.register_buffer("inv_freq", torch.tensor(inv_freq, dtype=torch.float32))
        self.groups = groups

    def forward(self, q, k, v):
        q, k = hf_rope(q, k, self.inv_freq)
        if self.groups > 1:
            k = k.repeat_interleave(self.groups, dim=1)
            v = v.repeat_interleave(self.groups, dim=1)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def compile_layer(layer, args):
    program = torch.export.export(layer, args)
    importer = FxImporter()
    importer.import_frozen_program(program, func_name="main")
    return ireec.compile_str(str(importer.module), input_type="torch",
                             target_backends=["llvm-cpu"],
                             extra_args=["--iree-llvmcpu-target-cpu=host"])


def main():
    threads, inv_freq, configs = arguments()
    ireert.flags.parse_flags(f"--task_topology_max_group_count={threads}")
    config = ireert.Config("local-task")
    times, errors = {}, {}
    for hq, hkv, s, q, k, v in inputs(configs, 2 * len(inv_freq)):
        layer = Layer(inv_freq, hq // hkv).eval()
        context = ireert.SystemContext(config=config)
        context.add_vm_module(ireert.VmModule.copy_buffer(context.instance, compile_layer(layer, (q, k, v))))
        main_fn = context.modules.module["main"]
        # Inputs on the device once, outside the timed calls (the other
        # contenders also get their arrays in place).
        device = [ireert.asdevicearray(config.device, t.numpy()) for t in (q, k, v)]
        out = main_fn(*device).to_host()  # warm-up and check
        with torch.no_grad():
            expected = layer(q, k, v).numpy()
        errors[f"{hq}/{hkv}/{s}"] = float(np.abs(out - expected).max() / np.abs(expected).max())
        times[f"{hq}/{hkv}/{s}"] = best_seconds(lambda: main_fn(*device).to_host(), s)
    print(json.dumps({"version": importlib.metadata.version("iree-base-compiler"),
                      "times": times, "errors": errors}))


if __name__ == "__main__":
    main()
