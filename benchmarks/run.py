#!/usr/bin/env python3
"""rope-mlir CPU benchmarks: every figure from one run, as ratios.

* rotary application (Q [1,32,S,128] and K [1,8,S,128], f32, llama3 spec):
  bytes moved per second against a plain copy of the same bytes, numpy and
  PyTorch (HF-style x·cos + rotate_half(x)·sin with precomputed tables);
* prefill attention with RoPE, causal, B=1, H=32, D=128 (MHA and GQA 32/8):
  FLOP/s with the dense count 4·B·H·S²·D; ours fused (rotation folded into
  attention, online-softmax tiles) and unfused (plain lowering), numpy with
  OpenBLAS, PyTorch CPU; peak memory of our two forms, each measured in a
  fresh process;
* decode: one query against an un-rotated KV cache of 4k..32k keys, rotating
  K on load (fused) against re-rotating the cache and then attending.

Writes benchmarks/results/cpu.{json,md,png}. Never part of `make check`.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path


def _openblas_core_for_this_cpu() -> None:
    """OpenBLAS picks its kernels from the CPU model; on virtual machines that
    report a generic model ("Intel Xeon Processor") it falls back to its
    Prescott (SSE3) kernels, 5x below the machine's SGEMM rate, which would
    make every SGEMM ratio flatter us. Name the core from the instruction
    sets the CPU does report (before numpy loads OpenBLAS; subprocesses
    inherit it), unless the user chose one."""
    if "OPENBLAS_CORETYPE" in os.environ:
        return
    try:
        flags = set(Path("/proc/cpuinfo").read_text().split())
    except OSError:
        return
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags:
        os.environ["OPENBLAS_CORETYPE"] = "SkylakeX"
    elif {"avx2", "fma"} <= flags:
        os.environ["OPENBLAS_CORETYPE"] = "Haswell"


_openblas_core_for_this_cpu()

import numpy as np  # noqa: E402  (after the OpenBLAS core is named)

from rope_mlir import compiler, reference as ref

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
THREADS = os.cpu_count() or 1
LLAMA3_SPEC = ref.RotarySpec(base=500000.0, scaling=ref.Scaling(
    "llama3", factor=8.0, original_max_position_embeddings=8192))
LLAMA3 = LLAMA3_SPEC.to_attr()
PLAIN = "--rope-lower-to-cpu=fold-rotation=false decompose-attention=false"


def best_time(fn, reps=3, warmup=1):
    for _ in range(warmup):
        fn()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


# ---------------------------------------------------------------------------
# Baseline implementations (what a numpy / PyTorch user writes)
# ---------------------------------------------------------------------------

def tables(positions, head_dim):
    inv = ref.inv_freq(LLAMA3_SPEC, head_dim)
    freqs = np.outer(positions, inv)
    emb = np.concatenate([freqs, freqs], axis=-1)
    return np.cos(emb).astype(np.float32), np.sin(emb).astype(np.float32)


def np_rotate(x, cos, sin):
    h = x.shape[-1] // 2
    rot = np.concatenate([-x[..., h:], x[..., :h]], axis=-1)
    return x * cos + rot * sin


def np_attention(q, k, v, cos, sin, causal=True):
    q, k = np_rotate(q, cos, sin), np_rotate(k, cos, sin)
    g = q.shape[1] // k.shape[1]
    if g > 1:
        k, v = np.repeat(k, g, axis=1), np.repeat(v, g, axis=1)
    s = (q @ np.swapaxes(k, -1, -2)) * np.float32(1 / np.sqrt(q.shape[-1]))
    if causal:
        n = s.shape[-1]
        s = np.where(np.tril(np.ones((n, n), bool)), s, np.float32(-np.inf))
    s = np.exp(s - s.max(-1, keepdims=True))
    s /= s.sum(-1, keepdims=True)
    return s @ v


def torch_fns():
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(THREADS)

    def rotate(x, cos, sin):
        h = x.shape[-1] // 2
        return x * cos + torch.cat([-x[..., h:], x[..., :h]], dim=-1) * sin

    def attention(q, k, v, cos, sin):
        with torch.no_grad():
            q, k = rotate(q, cos, sin), rotate(k, cos, sin)
            g = q.shape[1] // k.shape[1]
            if g > 1:
                k, v = k.repeat_interleave(g, 1), v.repeat_interleave(g, 1)
            s = (q @ k.transpose(-1, -2)) * (1 / q.shape[-1] ** 0.5)
            n = s.shape[-1]
            s = s.masked_fill(~torch.ones(n, n, dtype=torch.bool).tril(), float("-inf"))
            return torch.softmax(s, -1) @ v

    return torch, rotate, attention


# ---------------------------------------------------------------------------
# Our kernels
# ---------------------------------------------------------------------------

def rotate_module(hq, hkv, s, d):
    return f"""
func.func @rotate_q(%q: tensor<1x{hq}x{s}x{d}xf32>, %p: tensor<{s}xi64>) -> tensor<1x{hq}x{s}x{d}xf32> {{
  %qr = rope.rotate %q, %p rotary({LLAMA3}) : tensor<1x{hq}x{s}x{d}xf32>, tensor<{s}xi64>
  return %qr : tensor<1x{hq}x{s}x{d}xf32>
}}
func.func @rotate_k(%k: tensor<1x{hkv}x{s}x{d}xf32>, %p: tensor<{s}xi64>) -> tensor<1x{hkv}x{s}x{d}xf32> {{
  %kr = rope.rotate %k, %p rotary({LLAMA3}) : tensor<1x{hkv}x{s}x{d}xf32>, tensor<{s}xi64>
  return %kr : tensor<1x{hkv}x{s}x{d}xf32>
}}"""


def attention_module(hq, hkv, s, d):
    qt, kt = f"tensor<1x{hq}x{s}x{d}xf32>", f"tensor<1x{hkv}x{s}x{d}xf32>"
    return f"""
func.func @attention(%q: {qt}, %k: {kt}, %v: {kt}, %p: tensor<{s}xi64>) -> {qt} {{
  %qr = rope.rotate %q, %p rotary({LLAMA3}) : {qt}, tensor<{s}xi64>
  %kr = rope.rotate %k, %p rotary({LLAMA3}) : {kt}, tensor<{s}xi64>
  %o = rope.attention %qr, %kr, %v positions(%p, %p : tensor<{s}xi64>, tensor<{s}xi64>) causal : {qt}, {kt}, {kt}
  return %o : {qt}
}}"""


def decode_module(hq, hkv, n, d, dtype="f32"):
    qt, kt = f"tensor<1x{hq}x1x{d}x{dtype}>", f"tensor<1x{hkv}x{n}x{d}x{dtype}>"
    return f"""
func.func @rotate_on_load(%q: {qt}, %k: {kt}, %v: {kt}, %qp: tensor<1xi64>, %kp: tensor<{n}xi64>) -> {qt} {{
  %o = rope.attention %q, %k, %v positions(%qp, %kp : tensor<1xi64>, tensor<{n}xi64>) rotary({LLAMA3}) : {qt}, {kt}, {kt}
  return %o : {qt}
}}
func.func @rerotate_cache(%q: {qt}, %k: {kt}, %v: {kt}, %qp: tensor<1xi64>, %kp: tensor<{n}xi64>) -> {qt} {{
  %qr = rope.rotate %q, %qp rotary({LLAMA3}) : {qt}, tensor<1xi64>
  %kr = rope.rotate %k, %kp rotary({LLAMA3}) : {kt}, tensor<{n}xi64>
  %o = rope.attention %qr, %kr, %v : {qt}, {kt}, {kt}
  return %o : {qt}
}}"""


_ISOLATED = r"""
import resource, sys, time, numpy as np
from rope_mlir import compiler
text, pipeline, hq, hkv, s, d = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:7])
lib = compiler.compile(open(text).read(), pipeline=pipeline)
rng = np.random.default_rng(0)
q = rng.standard_normal((1, hq, s, d), dtype=np.float32)
k = rng.standard_normal((1, hkv, s, d), dtype=np.float32)
v = rng.standard_normal((1, hkv, s, d), dtype=np.float32)
p = np.arange(s, dtype=np.int64)
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) / 1024.0
# Peak memory of the first call (later calls reuse memory kept by the
# allocator): reset the high-water mark to the current resident size (Linux:
# clear_refs 5), call, read the new high-water mark.
open("/proc/self/clear_refs", "w").write("5")
before = status("VmRSS:")
lib.call("attention", q, k, v, p)
peak = status("VmHWM:") - before
best = 1e9
for _ in range(3):
    t0 = time.perf_counter(); lib.call("attention", q, k, v, p); best = min(best, time.perf_counter() - t0)
print(best, peak)
"""


def isolated_attention(pipeline, hq, hkv, s, d, workdir):
    """Time and peak extra memory (MiB) of our attention in a fresh process."""
    text = Path(workdir) / f"attention_{hq}_{hkv}_{s}.mlir"
    text.write_text(attention_module(hq, hkv, s, d))
    out = subprocess.run([sys.executable, "-c", _ISOLATED, str(text), pipeline,
                          str(hq), str(hkv), str(s), str(d)],
                         check=True, capture_output=True, text=True, env=os.environ).stdout
    t, mib = map(float, out.split())
    return t, mib


# ---------------------------------------------------------------------------
# Baselines outside this process
# ---------------------------------------------------------------------------

def frontend_python():
    """The frontend venv's python (PyTorch 2 from PyPI), if set up
    (utils/setup_frontends.sh)."""
    venv = Path(os.environ.get("ROPE_FRONTENDS_VENV",
                               Path.home() / ".cache" / "rope-mlir" / "venv-frontends"))
    python = venv / "bin" / "python"
    return python if python.exists() else None


def venv_baseline(script, configs):
    """Runs benchmarks/SCRIPT (torch2_sdpa.py or iree_attention.py) in the
    frontend venv on the prefill configs: {(Hq, Hkv, S): seconds}, the
    baseline's version and its reply (empty and None without the venv or when
    the baseline fails, which the run reports)."""
    python = frontend_python()
    if python is None:
        return {}, None, {}
    inv = ref.inv_freq(LLAMA3_SPEC, 128).tolist()
    out = subprocess.run([str(python), str(HERE / script), str(THREADS), json.dumps(inv),
                          json.dumps([list(c) for c in configs])],
                         capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ""})
    if out.returncode != 0:
        print(f"{script} failed: {out.stderr[-2000:]}", flush=True)
        return {}, None, {}
    data = json.loads(out.stdout)
    return {tuple(map(int, k.split("/"))): t for k, t in data["times"].items()}, data["version"], data


def sgemm_gflops(n=2048):
    """The machine's SGEMM rate on THREADS threads: numpy (OpenBLAS) n×n×n f32."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    return 2 * n ** 3 / best_time(lambda: a @ b, reps=5, warmup=1) / 1e9


# ---------------------------------------------------------------------------
# Benchmarks
# ---------------------------------------------------------------------------

def bench_rotary(results, seqs, torch_parts):
    rng = np.random.default_rng(0)
    for s in seqs:
        q = rng.standard_normal((1, 32, s, 128), dtype=np.float32)
        k = rng.standard_normal((1, 8, s, 128), dtype=np.float32)
        p = np.arange(s, dtype=np.int64)
        lib = compiler.compile(rotate_module(32, 8, s, 128))
        cos, sin = tables(p, 128)
        moved = 2 * (q.nbytes + k.nbytes)  # read + write
        dst_q, dst_k = np.empty_like(q), np.empty_like(k)
        row = {"S": s, "bytes": moved}
        # Small sizes take a millisecond and vary most (caches, clocks): more
        # repetitions there, the same for every contender.
        reps = 10 if s <= 1024 else 5
        row["copy"] = best_time(lambda: (np.copyto(dst_q, q), np.copyto(dst_k, k)), reps=reps)
        row["ours"] = best_time(lambda: (lib.call("rotate_q", q, p), lib.call("rotate_k", k, p)), reps=reps)
        row["numpy"] = best_time(lambda: (np_rotate(q, cos, sin), np_rotate(k, cos, sin)), reps=reps)
        if torch_parts:
            torch, t_rotate, _ = torch_parts
            tq, tk = torch.from_numpy(q), torch.from_numpy(k)
            tc, ts = torch.from_numpy(cos), torch.from_numpy(sin)
            row["torch"] = best_time(lambda: (t_rotate(tq, tc, ts), t_rotate(tk, tc, ts)), reps=reps)
        results["rotary"].append(row)
        print(f"rotary S={s}: " + ", ".join(
            f"{k} {moved / v / 1e9:.1f} GB/s" for k, v in row.items() if k not in ("S", "bytes")), flush=True)


def bench_prefill(results, configs, torch_parts, workdir):
    rng = np.random.default_rng(1)
    sdpa, results["machine"]["torch2"], _ = venv_baseline("torch2_sdpa.py", configs)
    # IREE's CPU attention runs at a few GFLOP/s (see benchmarks/README.md):
    # S = 4096 would take minutes per call, so it runs up to the target's S.
    iree, results["machine"]["iree"], reply = venv_baseline(
        "iree_attention.py", [c for c in configs if c[2] <= 2048])
    iree_errors = reply.get("errors", {})
    for hq, hkv, s in configs:
        d = 128
        flops = 4 * hq * s * s * d
        row = {"Hq": hq, "Hkv": hkv, "S": s, "flops": flops}
        row["ours"], row["ours_peak_mib"] = isolated_attention("--rope-lower-to-cpu", hq, hkv, s, d, workdir)
        row["ours_unfused"], row["unfused_peak_mib"] = isolated_attention(PLAIN, hq, hkv, s, d, workdir)
        q = rng.standard_normal((1, hq, s, d), dtype=np.float32)
        k = rng.standard_normal((1, hkv, s, d), dtype=np.float32)
        v = rng.standard_normal((1, hkv, s, d), dtype=np.float32)
        cos, sin = tables(np.arange(s), d)
        reps = 1 if s >= 2048 else 2
        row["numpy"] = best_time(lambda: np_attention(q, k, v, cos, sin), reps=reps, warmup=1)
        if torch_parts:
            torch, _, t_attention = torch_parts
            args = [torch.from_numpy(a) for a in (q, k, v, cos, sin)]
            row["torch"] = best_time(lambda: t_attention(*args), reps=reps, warmup=1)
        if (hq, hkv, s) in sdpa:
            row["torch2_sdpa"] = sdpa[(hq, hkv, s)]
        if (hq, hkv, s) in iree:
            row["iree"] = iree[(hq, hkv, s)]
            row["iree_rel_err"] = iree_errors[f"{hq}/{hkv}/{s}"]
        results["prefill"].append(row)
        print(f"prefill Hq={hq} Hkv={hkv} S={s}: " + ", ".join(
            f"{k} {flops / row[k] / 1e9:.1f} GFLOP/s" for k in ("ours", "ours_unfused", "numpy", "torch", "torch2_sdpa",
                                                               "iree")
            if k in row)
            + f"; peak MiB fused {row['ours_peak_mib']:.0f} unfused {row['unfused_peak_mib']:.0f}", flush=True)


def bench_decode(results, lengths, dtypes=("f32", "f16")):
    """One query against an un-rotated KV cache: the KV bytes read per second,
    against a plain copy of the same K and V (bytes read + written per
    second, the rotary benchmark's ceiling), for f32 and f16 caches."""
    rng = np.random.default_rng(2)
    for dtype in dtypes:
        np_type = {"f32": np.float32, "f16": np.float16}[dtype]
        for n in lengths:
            text = decode_module(32, 8, n, 128, dtype)
            lib = compiler.compile(text)
            # Re-rotating the cache is what the fold pass removes, so the baseline
            # is compiled without it.
            unfolded = compiler.compile(text, pipeline="--rope-lower-to-cpu=fold-rotation=false")
            q = rng.standard_normal((1, 32, 1, 128)).astype(np_type)
            k = rng.standard_normal((1, 8, n, 128)).astype(np_type)
            v = rng.standard_normal((1, 8, n, 128)).astype(np_type)
            qp = np.array([n - 1], np.int64)
            kp = np.arange(n, dtype=np.int64)
            dst_k, dst_v = np.empty_like(k), np.empty_like(v)
            row = {"dtype": dtype, "N": n, "kv_bytes": k.nbytes + v.nbytes}
            row["copy"] = best_time(lambda: (np.copyto(dst_k, k), np.copyto(dst_v, v)), reps=5)
            row["rotate_on_load"] = best_time(lambda: lib.call("rotate_on_load", q, k, v, qp, kp), reps=5)
            row["rerotate_cache"] = best_time(lambda: unfolded.call("rerotate_cache", q, k, v, qp, kp), reps=5)
            if dtype == "f32":
                cos_q, sin_q = tables(qp, 128)
                cos_k, sin_k = tables(kp, 128)

                def numpy_decode():
                    qr, kr = np_rotate(q, cos_q, sin_q), np_rotate(k, cos_k, sin_k)
                    kr, vv = np.repeat(kr, 4, axis=1), np.repeat(v, 4, axis=1)
                    s = (qr @ np.swapaxes(kr, -1, -2)) / np.sqrt(128)
                    s = np.exp(s - s.max(-1, keepdims=True))
                    return (s / s.sum(-1, keepdims=True)) @ vv
                row["numpy"] = best_time(numpy_decode, reps=3)
            results["decode"].append(row)
            kv = row["kv_bytes"]
            print(f"decode {dtype} N={n}: copy {2 * kv / row['copy'] / 1e9:.1f} GB/s, "
                  f"rotate on load {kv / row['rotate_on_load'] / 1e9:.1f} GB/s of KV, " + ", ".join(
                      f"{k} {row[k] * 1e3:.2f} ms" for k in ("rotate_on_load", "rerotate_cache", "numpy")
                      if k in row), flush=True)


def matmul_module(n):
    return f"""
func.func @matmul(%a: tensor<{n}x{n}xf32>, %b: tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32> {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<{n}x{n}xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32>
  %r = linalg.matmul ins(%a, %b : tensor<{n}x{n}xf32>, tensor<{n}x{n}xf32>) outs(%c : tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32>
  return %r : tensor<{n}x{n}xf32>
}}"""


def bench_matmul(results, n=2048):
    """A user's linalg.matmul through --rope-lower-to-cpu, against the SGEMM
    rate of the same run (numpy on OpenBLAS)."""
    module = compiler.compile(matmul_module(n), pipeline="--rope-lower-to-cpu")
    rng = np.random.default_rng(5)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    err = float(np.abs(module.matmul(a, b) - ref).max() / np.abs(ref).max())
    t = best_time(lambda: module.matmul(a, b), reps=3, warmup=1)
    results["matmul"] = {"N": n, "ours": t, "gflops": 2 * n ** 3 / t / 1e9, "rel_err": err}


def shown(value, spec, unit=""):
    """`value` formatted with `spec`, or a dash where it was not measured."""
    return "–" if value != value else f"{value:{spec}}{unit}"


def write_markdown(results, path):
    m = results["machine"]
    lines = [f"# CPU benchmarks", "",
             f"Machine: {m['cpu']}, {m['threads']} threads; numpy {m['numpy']} on {m['blas']}; "
             f"PyTorch {m.get('torch', 'absent')} (Debian) and {m.get('torch2') or 'no PyTorch 2'} "
             f"(PyPI, the frontend venv); IREE {m.get('iree') or 'absent'} (PyPI, the frontend venv); SGEMM (numpy 2048³) {results.get('sgemm_gflops', float('nan')):.1f} GFLOP/s. "
             f"All figures from one run of `make bench` "
             f"({m['date']}). Best of several repetitions; glibc keeps freed memory for reuse "
             f"(no page faults on fresh outputs), for every contender.", "",
             "## Rotary application (Q [1,32,S,128] + K [1,8,S,128], f32, llama3)", "",
             "Bytes moved (read + write) per second; ratio to a plain copy of the same bytes, and speed-up over numpy / PyTorch.", "",
             "| S | copy GB/s | ours GB/s | numpy GB/s | torch GB/s | ours / copy | ours vs numpy | ours vs torch |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results["rotary"]:
        g = lambda k: r["bytes"] / r[k] / 1e9 if k in r else float("nan")
        lines.append(f"| {r['S']} | {g('copy'):.1f} | {g('ours'):.1f} | {g('numpy'):.1f} | {g('torch'):.1f} | "
                     f"{r['copy'] / r['ours']:.0%} | {r['numpy'] / r['ours']:.1f}× | "
                     f"{(r['torch'] / r['ours']) if 'torch' in r else float('nan'):.1f}× |")
    sgemm = results.get("sgemm_gflops", float("nan"))
    lines += ["", "## Prefill attention with RoPE, causal, B=1, D=128", "",
              "GFLOP/s with the dense count 4·B·H·S²·D (causal work is half of it). `torch` is PyTorch 1.13 "
              "eager (explicit softmax); `SDPA` is PyTorch 2's `scaled_dot_product_attention` (flash-attention "
              "CPU kernel) with HF RoPE; `IREE` compiles that same PyTorch layer (torch.export, IREE's FX importer) "
              "for its `llvm-cpu` backend (host CPU; SDPA becomes its fused `iree_linalg_ext.attention`), checked "
              "against PyTorch (max error / max in `cpu.json`). Causal rate / SGEMM: ours at the causal count (half the dense one) "
              "over the SGEMM rate of the same run. Peak: extra resident memory of the call, fresh process.", "",
              "| Hq/Hkv | S | ours (fused) | ours (unfused) | numpy+OpenBLAS | torch | SDPA | IREE | fused vs numpy | fused vs torch | fused vs SDPA | fused vs IREE | causal rate / SGEMM | fused vs unfused | peak MiB fused / unfused |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results["prefill"]:
        g = lambda k: r["flops"] / r[k] / 1e9 if k in r else float("nan")
        vs = lambda k: (r[k] / r["ours"]) if k in r else float("nan")
        lines.append(f"| {r['Hq']}/{r['Hkv']} | {r['S']} | {g('ours'):.1f} | {g('ours_unfused'):.1f} | {g('numpy'):.1f} | "
                     f"{shown(g('torch'), '.1f')} | {shown(g('torch2_sdpa'), '.1f')} | {shown(g('iree'), '.1f')} | "
                     f"{vs('numpy'):.1f}× | {shown(vs('torch'), '.1f', '×')} | {shown(vs('torch2_sdpa'), '.2f', '×')} | "
                     f"{shown(vs('iree'), '.1f', '×')} | {g('ours') / 2 / sgemm:.0%} | "
                     f"{r['ours_unfused'] / r['ours']:.1f}× | {r['ours_peak_mib']:.0f} / {r['unfused_peak_mib']:.0f} |")
    if "matmul" in results:
        mm = results["matmul"]
        lines += ["", f"## A user's `linalg.matmul` ({mm['N']}³ f32) through `--rope-lower-to-cpu`", "",
                  "| ours GFLOP/s | SGEMM (numpy) GFLOP/s | ours / SGEMM | max error / max |",
                  "|---|---|---|---|",
                  f"| {mm['gflops']:.1f} | {sgemm:.1f} | {mm['gflops'] / sgemm:.0%} | {mm['rel_err']:.1e} |"]
    lines += ["", "## Decode: one query, Hq/Hkv = 32/8, un-rotated KV cache", "",
              "KV GB/s: the bytes of K and V read per second by our fused call (rotating K on load). "
              "Copy GB/s: a plain copy of the same K and V, bytes read + written per second. "
              "Ours / copy is the decode target's ratio.", "",
              "| cache | cached keys | KV MiB | copy GB/s | ours KV GB/s | ours / copy | rotate on load (fused) ms | re-rotate cache, then attend ms | numpy ms | on-load speed-up |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for r in results["decode"]:
        kv = r["kv_bytes"]
        lines.append(f"| {r['dtype']} | {r['N']} | {kv / 2**20:.0f} | {2 * kv / r['copy'] / 1e9:.1f} | "
                     f"{kv / r['rotate_on_load'] / 1e9:.1f} | {r['copy'] / 2 / r['rotate_on_load']:.0%} | "
                     f"{r['rotate_on_load'] * 1e3:.2f} | {r['rerotate_cache'] * 1e3:.2f} | {shown(r.get('numpy', float('nan')) * 1e3, '.2f')} | "
                     f"{r['rerotate_cache'] / r['rotate_on_load']:.2f}× |")
    path.write_text("\n".join(lines) + "\n")


def plot(results, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no plot")
        return
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.5))
    rot = results["rotary"]
    for key, label in (("copy", "copy (ceiling)"), ("ours", "rope-mlir"), ("numpy", "numpy"), ("torch", "PyTorch")):
        if all(key in r for r in rot):
            axes[0].plot([r["S"] for r in rot], [r["bytes"] / r[key] / 1e9 for r in rot], "o-", label=label)
    axes[0].set(title="Rotary application (Q+K)", xlabel="S", ylabel="GB/s moved", xscale="log")
    pre = [r for r in results["prefill"] if r["Hkv"] == 32]
    for key, label in (("ours", "rope-mlir fused"), ("ours_unfused", "rope-mlir unfused"),
                       ("numpy", "numpy+OpenBLAS"), ("torch", "PyTorch 1.13"),
                       ("torch2_sdpa", "PyTorch 2 SDPA")):
        if pre and all(key in r for r in pre):
            axes[1].plot([r["S"] for r in pre], [r["flops"] / r[key] / 1e9 for r in pre], "o-", label=label)
    axes[1].set(title="Causal prefill attention + RoPE, H=32", xlabel="S", ylabel="GFLOP/s (dense count)", xscale="log")
    for dtype, style in (("f32", "o-"), ("f16", "s--")):
        dec = [r for r in results["decode"] if r["dtype"] == dtype]
        if not dec:
            continue
        axes[2].plot([r["N"] for r in dec], [2 * r["kv_bytes"] / r["copy"] / 1e9 for r in dec], style,
                     color="grey", label=f"copy of K+V ({dtype})")
        axes[2].plot([r["N"] for r in dec], [r["kv_bytes"] / r["rotate_on_load"] / 1e9 for r in dec], style,
                     color="C0", label=f"rotate K on load ({dtype})")
        axes[2].plot([r["N"] for r in dec], [r["kv_bytes"] / r["rerotate_cache"] / 1e9 for r in dec], style,
                     color="C1", label=f"re-rotate cache ({dtype})")
    axes[2].set(title="Decode, 32/8 heads: KV bytes read", xlabel="cached keys", ylabel="GB/s", xscale="log")
    for ax in axes:
        ax.legend()
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plot_prefill_at_a_glance(results, path.with_name("prefill.png"), plt)


def plot_prefill_at_a_glance(results, path, plt):
    """One bar chart: causal prefill at S = 2048, every contender's real
    arithmetic rate (causal FLOPs) next to the SGEMM rate of the same run."""
    rows = [r for r in results["prefill"] if r["S"] == 2048]
    if not rows:
        return
    contenders = [("ours", "rope-mlir (fused)"), ("torch2_sdpa", "PyTorch 2 SDPA"), ("iree", "IREE llvm-cpu"),
                  ("torch", "PyTorch 1.13 eager"), ("numpy", "numpy+OpenBLAS"), ("ours_unfused", "rope-mlir unfused")]
    contenders = [c for c in contenders if any(c[0] in r for r in rows)]
    fig, ax = plt.subplots(figsize=(9, 4.5))
    width = 0.8 / len(contenders)
    for i, (key, label) in enumerate(contenders):
        xs = [j + i * width for j in range(len(rows))]
        ys = [r["flops"] / 2 / r[key] / 1e9 if key in r else 0 for r in rows]
        bars = ax.bar(xs, ys, width, label=label)
        ax.bar_label(bars, fmt="%.0f", fontsize=8)
    ax.axhline(results["sgemm_gflops"], color="black", linestyle="--",
               label=f"SGEMM (numpy 2048³) {results['sgemm_gflops']:.0f}")
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(rows))],
                  [f"H {r['Hq']}/{r['Hkv']}, S=2048" for r in rows])
    ax.set(title=f"Causal prefill with RoPE, D=128, {results['machine']['threads']} threads "
                 "(higher is better)", ylabel="GFLOP/s, causal count")
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def machine():
    cpu = platform.processor() or "unknown"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    blas = "unknown BLAS"
    try:
        blas = os.path.realpath("/usr/lib/x86_64-linux-gnu/libblas.so.3").split("/")[-2]
    except OSError:
        pass
    if "OPENBLAS_CORETYPE" in os.environ:
        blas += f" (core {os.environ['OPENBLAS_CORETYPE']})"
    info = {"cpu": cpu, "threads": THREADS, "numpy": np.__version__, "blas": blas,
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    try:
        import torch
        info["torch"] = torch.__version__
    except ImportError:
        pass
    return info


# Every contender returns fresh arrays. glibc serves large allocations with new
# mmaps by default, so each call would pay page faults for its output; like a
# framework's caching allocator, keep freed memory for reuse (applies to all
# contenders alike). The tunables are read at process start, hence re-exec.
MALLOC_ENV = {"MALLOC_MMAP_THRESHOLD_": str(1 << 40), "MALLOC_TRIM_THRESHOLD_": str(1 << 40),
              "MALLOC_TOP_PAD_": str(1 << 30)}


def main():
    if any(os.environ.get(k) != v for k, v in MALLOC_ENV.items()):
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, **MALLOC_ENV})
    quick = os.environ.get("ROPE_BENCH_QUICK") == "1"
    RESULTS.mkdir(parents=True, exist_ok=True)
    workdir = RESULTS / "tmp"
    workdir.mkdir(exist_ok=True)
    torch_parts = torch_fns()
    results = {"machine": machine(), "rotary": [], "prefill": [], "decode": []}
    results["sgemm_gflops"] = sgemm_gflops()
    print(f"SGEMM (numpy 2048^3, {THREADS} threads): {results['sgemm_gflops']:.1f} GFLOP/s", flush=True)
    bench_rotary(results, [512, 2048] if quick else [512, 1024, 2048, 4096], torch_parts)
    prefill = [(32, 32, 512), (32, 32, 2048)] if quick else \
        [(32, 32, 512), (32, 32, 1024), (32, 32, 2048), (32, 32, 4096), (32, 8, 2048)]
    bench_prefill(results, prefill, torch_parts, workdir)
    bench_decode(results, [4096, 32768] if quick else [4096, 8192, 16384, 32768])
    bench_matmul(results)
    (RESULTS / "cpu.json").write_text(json.dumps(results, indent=1))
    write_markdown(results, RESULTS / "cpu.md")
    plot(results, RESULTS / "cpu.png")
    print((RESULTS / "cpu.md").read_text())


if __name__ == "__main__":
    main()
