#!/usr/bin/env python3
"""rope-mlir GPU benchmarks (issue 5), every figure from one run, as ratios:

* rotary application, Q [1,32,S,128] f16 (llama3 spec): bytes moved per
  second (read x + write result) against a device-to-device copy of the same
  bytes (PyTorch `copy_`), and against PyTorch eager RoPE (HF-style
  x·cos + rotate_half(x)·sin with precomputed tables);
* attention with RoPE, f16 and bf16, B=1, 32 query heads with 32 (MHA) or
  8 (GQA) kv heads, S = 1024..8192, D=128, causal: our fused module
  (rope.rotate of Q and K folded into rope.attention, which runs on the
  tensor-core kernel) against PyTorch eager RoPE +
  `scaled_dot_product_attention` (`enable_gqa`) on the same GPU; TFLOP/s
  with the causal count 2·B·H·S²·D.

Our functions run on device buffers (PyTorch's allocations, passed as memref
descriptors), so no host transfers are timed. Each function call creates its
stream, allocates its temporaries stream-ordered, launches and synchronises;
all of that is in the timing. Each attention case also records the device
time of every kernel of a call (PyTorch's profiler, ours and PyTorch's), so
the attention kernels themselves are compared too.

`python3 benchmarks/gpu.py --case NAME` only calls one module three times,
for a profiler (utils/run_gpu_bundle.sh runs ncu on one case).

Two modes, because the GPU machine has no LLVM:
  ROPE_GPU_COMPILE_ONLY=1 ROPE_KERNEL_CACHE=DIR python3 benchmarks/gpu.py
      (here) compiles the benchmark modules into DIR;
  ROPE_PREBUILT_ONLY=1 ROPE_KERNEL_CACHE=DIR python3 benchmarks/gpu.py OUT
      (there) runs them and writes OUT/gpu.{json,md}.
`make gpu-bundle` does the first (with the GPU test files); utils/run_gpu_bundle.sh
the second.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from rope_mlir import cuda, reference as ref
import rope_testing as T

LLAMA3_SPEC = ref.RotarySpec(base=500000.0, scaling=ref.Scaling(
    "llama3", factor=8.0, original_max_position_embeddings=8192))
LLAMA3 = T.spec_attr(LLAMA3_SPEC)
ROTARY_SEQS = (1024, 4096, 16384)
H, D = 32, 128
ATTN_SEQS = (1024, 2048, 4096, 8192)
ATTN_KV_HEADS = (32, 8)
ATTN_DTYPES = ("f16", "bf16")
# Decode: one query per head against a cache of this many keys (bf16, GQA
# 32/8, the cache already rotated), on the split-K form of the kernel.
DECODE_KEYS = (4096, 32768)


def rotate_module(s):
    t = f"tensor<1x{H}x{s}x{D}xf16>"
    return (f"func.func @rotate(%x: {t}, %p: tensor<{s}xi64>) -> {t} {{\n"
            f"  %r = rope.rotate %x, %p rotary({LLAMA3}) : {t}, tensor<{s}xi64>\n"
            f"  return %r : {t}\n}}\n")


def attention_module(s, hkv, dt):
    qt, kt = f"tensor<1x{H}x{s}x{D}x{dt}>", f"tensor<1x{hkv}x{s}x{D}x{dt}>"
    pt = f"tensor<{s}xi64>"
    return (f"func.func @attention(%q: {qt}, %k: {kt}, %v: {kt}, %p: {pt}) -> {qt} {{\n"
            f"  %qr = rope.rotate %q, %p rotary({LLAMA3}) : {qt}, {pt}\n"
            f"  %kr = rope.rotate %k, %p rotary({LLAMA3}) : {kt}, {pt}\n"
            f"  %o = rope.attention %qr, %kr, %v causal : {qt}, {kt}, {kt}\n"
            f"  return %o : {qt}\n}}\n")


def decode_module(sk):
    qt, kt = f"tensor<1x{H}x1x{D}xbf16>", f"tensor<1x8x{sk}x{D}xbf16>"
    return (f"func.func @decode(%q: {qt}, %k: {kt}, %v: {kt}) -> {qt} {{\n"
            f"  %o = rope.attention %q, %k, %v causal : {qt}, {kt}, {kt}\n"
            f"  return %o : {qt}\n}}\n")


def attention_name(s, hkv, dt):
    return f"attention {dt} {H}/{hkv} S={s}"


# f32 (FMA products on the same kernel) at one size, beside the tensor cores.
ATTENTION_CASES = [(s, hkv, dt) for dt in ATTN_DTYPES for hkv in ATTN_KV_HEADS
                   for s in ATTN_SEQS] + [(2048, 8, "f32")]
MODULES = {**{f"rotate S={s}": rotate_module(s) for s in ROTARY_SEQS},
           **{attention_name(*c): attention_module(*c) for c in ATTENTION_CASES},
           **{f"decode S={sk}": decode_module(sk) for sk in DECODE_KEYS}}


class TorchBuffer:
    """A torch CUDA tensor seen as a device buffer by GpuLibrary."""

    def __init__(self, tensor):
        self.tensor = tensor
        self.ptr = tensor.data_ptr()


def device_call(lib, name, tensors):
    """A call of @name on torch CUDA tensors, its result freed: what the
    benchmarks time (the call's host work, launches and synchronisation)."""
    bufs = [TorchBuffer(t) for t in tensors]
    shapes = [tuple(t.shape) for t in tensors]
    return lambda: lib.free_result(lib.call_device(name, bufs, shapes), bufs)


def timed(fn, sync, reps=20, warmup=3):
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2]  # median


def kernel_times(torch, fn, calls=3):
    """Device time of each kernel `fn` launches, in launch order, in seconds
    (mean over `calls`), from PyTorch's profiler (CUPTI traces every kernel
    of the process, ours too): where a call's time goes besides its
    launches, allocations and synchronisation."""
    from torch.profiler import ProfilerActivity, profile
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    kernels = [e for e in prof.events() if e.device_type.name == "CUDA"
               and not e.name.startswith(("Memcpy", "Memset"))]
    kernels.sort(key=lambda e: e.time_range.start)
    per_call = len(kernels) // calls
    times = [sum(kernels[c * per_call + i].time_range.elapsed_us() for c in range(calls))
             / calls * 1e-6 for i in range(per_call)]
    return times, [kernels[i].name for i in range(per_call)]


def torch_tables(torch, positions, dtype):
    inv = torch.tensor(ref.inv_freq(LLAMA3_SPEC, D), dtype=torch.float32, device="cuda")
    freqs = torch.outer(positions.float(), inv)
    emb = torch.cat([freqs, freqs], dim=-1)
    return emb.cos().to(dtype), emb.sin().to(dtype)


def torch_rope(torch, x, cos, sin):
    x1, x2 = x[..., : D // 2], x[..., D // 2:]
    return x * cos + torch.cat([-x2, x1], dim=-1) * sin


def time_attention(torch, F, libs, sync, s, hkv, dt):
    lib = libs[attention_name(s, hkv, dt)]
    tdt = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}[dt]
    q = torch.randn(1, H, s, D, device="cuda", dtype=tdt)
    k, v = (torch.randn(1, hkv, s, D, device="cuda", dtype=tdt) for _ in range(2))
    p = torch.arange(s, device="cuda", dtype=torch.int64)
    ours = device_call(lib, "attention", (q, k, v, p))
    cos, sin = torch_tables(torch, p, tdt)

    def torch_attention():
        return F.scaled_dot_product_attention(torch_rope(torch, q, cos, sin),
                                              torch_rope(torch, k, cos, sin), v,
                                              is_causal=True, enable_gqa=hkv != H)

    t_ours = timed(ours, sync, reps=10, warmup=2)
    t_torch = timed(torch_attention, sync, reps=20, warmup=3)
    ours_kernels, _ = kernel_times(torch, ours)
    torch_kernels, torch_names = kernel_times(torch, torch_attention)
    flops = 2 * H * s * s * D  # causal: half of 4·H·S²·D
    return {"B": 1, "H": H, "Hkv": hkv, "S": s, "D": D, "dtype": dt, "causal": True,
            "ours_s": t_ours, "torch_s": t_torch, "ours_TFLOPs": flops / t_ours / 1e12,
            "torch_TFLOPs": flops / t_torch / 1e12, "ours_vs_torch": t_torch / t_ours,
            "ours_kernels_s": ours_kernels, "torch_kernels_s": torch_kernels,
            "torch_attention_kernel": torch_names[torch_kernels.index(max(torch_kernels))],
            # The attention kernel alone (the longest of each call's kernels).
            "ours_attention_kernel_TFLOPs": flops / max(ours_kernels) / 1e12,
            "torch_attention_kernel_TFLOPs": flops / max(torch_kernels) / 1e12}


def time_decode(torch, F, lib, sync, sk):
    """One decode step: K+V bytes read per second, against a device copy of
    the same bytes (read + write per second) and PyTorch's SDPA."""
    q = torch.randn(1, H, 1, D, device="cuda", dtype=torch.bfloat16)
    k, v = (torch.randn(1, 8, sk, D, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    ours = device_call(lib, "decode", (q, k, v))
    kv = torch.cat([k, v])
    copy = torch.empty_like(kv)
    t_ours = timed(ours, sync)
    t_torch = timed(lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True), sync)
    t_copy = timed(lambda: copy.copy_(kv), sync)
    ours_kernels, _ = kernel_times(torch, ours)
    nbytes = k.nbytes + v.nbytes
    return {"Sk": sk, "bytes": nbytes, "ours_s": t_ours, "torch_s": t_torch,
            "ours_GBps": nbytes / t_ours / 1e9, "torch_GBps": nbytes / t_torch / 1e9,
            "copy_GBps": 2 * nbytes / t_copy / 1e9, "ours_vs_torch": t_torch / t_ours,
            "ours_kernels_s": ours_kernels,
            "ours_kernels_GBps": nbytes / sum(ours_kernels) / 1e9}


def run(out_dir: Path):
    import torch
    import torch.nn.functional as F

    libs = {name: T.gpu_compile(text) for name, text in MODULES.items()}
    sync = torch.cuda.synchronize
    results = {"gpu": cuda.device_name(), "torch": torch.__version__, "rotary": [], "attention": []}

    for s in ROTARY_SEQS:
        lib = libs[f"rotate S={s}"]
        x = torch.randn(1, H, s, D, device="cuda", dtype=torch.float16)
        p = torch.arange(s, device="cuda", dtype=torch.int64)
        ours = device_call(lib, "rotate", (x, p))
        y = torch.empty_like(x)
        cos, sin = torch_tables(torch, p, torch.float16)
        t_ours = timed(ours, sync)
        t_copy = timed(lambda: y.copy_(x), sync)
        t_torch = timed(lambda: torch_rope(torch, x, cos, sin), sync)
        nbytes = 2 * x.numel() * x.element_size()
        ours_kernels, _ = kernel_times(torch, ours)
        results["rotary"].append({
            "S": s, "bytes": nbytes, "ours_s": t_ours, "copy_s": t_copy, "torch_s": t_torch,
            "ours_GBps": nbytes / t_ours / 1e9, "copy_GBps": nbytes / t_copy / 1e9,
            "ours_vs_copy": t_copy / t_ours, "ours_vs_torch": t_torch / t_ours,
            "ours_kernels_s": ours_kernels})
        print(json.dumps(results["rotary"][-1]), flush=True)

    for s, hkv, dt in ATTENTION_CASES:
        results["attention"].append(time_attention(torch, F, libs, sync, s, hkv, dt))
        print(json.dumps(results["attention"][-1]), flush=True)

    results["decode"] = []
    for sk in DECODE_KEYS:
        results["decode"].append(time_decode(torch, F, libs[f"decode S={sk}"], sync, sk))
        print(json.dumps(results["decode"][-1]), flush=True)

    write_results(results, out_dir)


def write_results(results, out_dir: Path):
    """OUT/gpu.json (every figure) and OUT/gpu.md (the tables)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "gpu.json").write_text(json.dumps(results, indent=2) + "\n")
    lines = [f"# GPU benchmarks: {results['gpu']} (PyTorch {results['torch']})", "",
             "Rotary application, Q [1,32,S,128] f16, llama3 (median of 20; bytes = read + write):",
             "", "| S | ours GB/s | copy GB/s | ours / copy | ours vs PyTorch eager | "
             "ours kernels µs | ours kernels GB/s |",
             "|---|---|---|---|---|---|---|"]
    def us(ts):
        return " + ".join(f"{t * 1e6:.0f}" for t in ts)
    for r in results["rotary"]:
        ks = r.get("ours_kernels_s", [])
        kernels = (f"{us(ks)} | "
                   f"{r['bytes'] / sum(ks) / 1e9:.0f}" if ks else "– | –")
        lines.append(f"| {r['S']} | {r['ours_GBps']:.0f} | {r['copy_GBps']:.0f} | "
                     f"{r['ours_vs_copy']:.2f} | {r['ours_vs_torch']:.2f}× | {kernels} |")
    lines += ["", "Attention with RoPE (llama3), B=1, 32 query heads, D=128, causal "
              "(TFLOP/s with the causal count 2·H·S²·D; PyTorch: eager RoPE + SDPA). "
              "A call's time (median, host clock around call and synchronisation) and "
              "its kernels' device time (profiler): the longest kernel (the attention) "
              "and the others together:", "",
              "| dtype | kv heads | S | ours ms | PyTorch ms | ours TFLOP/s | PyTorch TFLOP/s | "
              "ours vs PyTorch | ours kernels ms | PyTorch kernels ms | "
              "longest kernel TFLOP/s, ours / PyTorch |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]

    def kernels(ts):
        return f"{max(ts) * 1e3:.2f} + {(sum(ts) - max(ts)) * 1e3:.2f}"
    for a in results["attention"]:
        lines.append(f"| {a['dtype']} | {a['Hkv']} | {a['S']} | {a['ours_s'] * 1e3:.2f} | "
                     f"{a['torch_s'] * 1e3:.2f} | {a['ours_TFLOPs']:.1f} | "
                     f"{a['torch_TFLOPs']:.1f} | {a['ours_vs_torch']:.3f}× | "
                     f"{kernels(a['ours_kernels_s'])} | {kernels(a['torch_kernels_s'])} | "
                     f"{a['ours_attention_kernel_TFLOPs']:.0f} / "
                     f"{a['torch_attention_kernel_TFLOPs']:.0f} |")
    if results.get("decode"):
        lines += ["", "Decode, bf16, 32 query heads on 8 kv heads, D=128, one query against a "
                  "cache of Sk keys (GB/s of K and V read; copy: read + write of the same "
                  "bytes):", "",
                  "| Sk | ours µs | PyTorch µs | ours GB/s | PyTorch GB/s | copy GB/s | "
                  "ours vs PyTorch | ours kernels µs | ours kernels GB/s |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for r in results["decode"]:
            lines.append(
                f"| {r['Sk']} | {r['ours_s'] * 1e6:.0f} | {r['torch_s'] * 1e6:.0f} | "
                f"{r['ours_GBps']:.0f} | {r['torch_GBps']:.0f} | {r['copy_GBps']:.0f} | "
                f"{r['ours_vs_torch']:.2f}× | "
                f"{us(r['ours_kernels_s'])} | "
                f"{r['ours_kernels_GBps']:.0f} |")
    names = sorted({a["torch_attention_kernel"][:160] for a in results["attention"]
                    if "torch_attention_kernel" in a})
    if names:
        lines += ["", "PyTorch's longest kernel (the attention):", ""]
        lines += [f"* `{name}`" for name in names]
    lines.append("")
    (out_dir / "gpu.md").write_text("\n".join(lines))
    print("\n".join(lines))


def run_one(name: str, calls: int = 3):
    """`calls` calls of one benchmark module (a MODULES name, e.g.
    "attention bf16 32/8 S=8192") on random inputs, for a profiler:
    ncu --clock-control none -k regex:attention python3 benchmarks/gpu.py --case NAME"""
    import torch
    if name not in MODULES:
        sys.exit(f"--case: {name!r} is not one of: {', '.join(MODULES)}")
    lib = T.gpu_compile(MODULES[name])
    (fn, signature), = lib.functions.items()
    args_sig, _ = signature.callable_types()
    dtypes = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}
    tensors = [torch.arange(sig.shape[0], device="cuda") if sig.dtype == "i64" else
               torch.randn(*sig.shape, device="cuda", dtype=dtypes[sig.dtype])
               for sig in args_sig]
    call = device_call(lib, fn, tensors)
    for _ in range(calls):
        call()
    torch.cuda.synchronize()
    print(f"ran {name} {calls} times")


def main():
    if T.gpu_compile_only():
        for name, text in MODULES.items():
            cuda.build(text, T.gpu_options())
            print(f"COMPILED {name}")
        return
    if len(sys.argv) > 2 and sys.argv[1] == "--case":
        return run_one(sys.argv[2])
    run(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "results")


if __name__ == "__main__":
    main()
