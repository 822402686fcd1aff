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
  K on load (fused) against re-rotating the cache and then attending;
* beside them, in the same run: the machine's limits (FMA peak, copy
  bandwidth), SGEMM, PyTorch 2's SDPA, IREE and llama.cpp's ggml (ROPE and
  FLASH_ATTN_EXT, benchmarks/ggml/), and each target of the CPU speed issue
  marked met or missed.

Writes benchmarks/results/cpu-<vendor>.{json,md,png} (one file per kind of
CPU: intel, amd). Never part of `make check`.
"""

from __future__ import annotations

import ctypes
import json
import os
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

from cpu_name import cpu_fields, cpu_name  # noqa: E402  (benchmarks/, beside this script)

HERE = Path(__file__).resolve().parent
LLVM_BIN = Path("/usr/lib/llvm-22/bin")
RESULTS = HERE / "results"
THREADS = os.cpu_count() or 1
LLAMA3_SPEC = ref.RotarySpec(base=500000.0, scaling=ref.Scaling(
    "llama3", factor=8.0, original_max_position_embeddings=8192))
LLAMA3 = LLAMA3_SPEC.to_attr()
PLAIN = "--rope-lower-to-cpu=fold-rotation=false decompose-attention=false"


def best_time(fn, reps=3, warmup=1, min_seconds=0.3, max_reps=200):
    """The fastest of at least `reps` calls, and of as many more (up to
    `max_reps`) as fit in `min_seconds`: a call of a millisecond on a shared
    2-core VM varies by tens of percent from call to call, and the best of 3
    or 5 of them still does; every contender is timed alike."""
    for _ in range(warmup):
        fn()
    best, count, start = float("inf"), 0, time.perf_counter()
    while count < reps or (count < max_reps and time.perf_counter() - start < min_seconds):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
        count += 1
    return best


# ---------------------------------------------------------------------------
# Baseline implementations (what a numpy / PyTorch user writes)
# ---------------------------------------------------------------------------

def tables(positions, head_dim):
    inv = ref.inv_freq(LLAMA3_SPEC, head_dim)
    freqs = np.outer(positions, inv)
    emb = np.concatenate([freqs, freqs], axis=-1)
    return np.cos(emb).astype(np.float32), np.sin(emb).astype(np.float32)


def np_rotate(x, cos, sin, out=None):
    """HF's rotate_half rotation; with `out`, the result goes there (numpy's
    out=, as the rotary benchmark gives every contender that has one)."""
    h = x.shape[-1] // 2
    rot = np.concatenate([-x[..., h:], x[..., :h]], axis=-1)
    if out is None:
        return x * cos + rot * sin
    np.multiply(x, cos, out=out)
    rot *= sin
    out += rot
    return out


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

    def rotate(x, cos, sin, out=None):
        h = x.shape[-1] // 2
        rot = torch.cat([-x[..., h:], x[..., :h]], dim=-1)
        if out is None:
            return x * cos + rot * sin
        torch.mul(x, cos, out=out)
        return out.addcmul_(rot, sin)

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

def rotate_module(hq, hkv, s, d, layout="half"):
    spec = ref.RotarySpec(base=LLAMA3_SPEC.base, layout=layout, scaling=LLAMA3_SPEC.scaling).to_attr()
    return f"""
func.func @rotate_q(%q: tensor<1x{hq}x{s}x{d}xf32>, %p: tensor<{s}xi64>) -> tensor<1x{hq}x{s}x{d}xf32> {{
  %qr = rope.rotate %q, %p rotary({spec}) : tensor<1x{hq}x{s}x{d}xf32>, tensor<{s}xi64>
  return %qr : tensor<1x{hq}x{s}x{d}xf32>
}}
func.func @rotate_k(%k: tensor<1x{hkv}x{s}x{d}xf32>, %p: tensor<{s}xi64>) -> tensor<1x{hkv}x{s}x{d}xf32> {{
  %kr = rope.rotate %k, %p rotary({spec}) : tensor<1x{hkv}x{s}x{d}xf32>, tensor<{s}xi64>
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


def attention_file(hq, hkv, s, d, workdir) -> Path:
    """Our attention module for one prefill config, written into `workdir`."""
    text = Path(workdir) / f"attention_{hq}_{hkv}_{s}.mlir"
    text.write_text(attention_module(hq, hkv, s, d))
    return text


def isolated_attention(pipeline, hq, hkv, s, d, workdir, threads=THREADS):
    """Time and peak extra memory (MiB) of our attention in a fresh process
    on `threads` threads (OpenMP's)."""
    text = attention_file(hq, hkv, s, d, workdir)
    out = subprocess.run([sys.executable, "-c", _ISOLATED, str(text), pipeline,
                          str(hq), str(hkv), str(s), str(d)],
                         check=True, capture_output=True, text=True,
                         env={**os.environ, "OMP_NUM_THREADS": str(threads)}).stdout
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


def config_key(config) -> str:
    """(Hq, Hkv, S) as the venv scripts key their replies: "Hq/Hkv/S"."""
    return "/".join(map(str, config))


def by_config(reply: dict) -> dict:
    """A venv script's {"Hq/Hkv/S": value} keyed by (Hq, Hkv, S)."""
    return {tuple(map(int, k.split("/"))): v for k, v in reply.items()}


def venv_baseline(script, configs, threads=THREADS, ours=None):
    """Runs benchmarks/SCRIPT (torch2_sdpa.py or iree_attention.py) in the
    frontend venv on the prefill configs: {(Hq, Hkv, S): seconds}, the
    baseline's version and its reply (empty and None without the venv or when
    the baseline fails, which the run reports). `ours` ({(Hq, Hkv, S): path
    of our module's MLIR}, torch2_sdpa.py only): the script times our
    attention too, alternating with its own (the reply's "ours")."""
    python = frontend_python()
    if python is None:
        return {}, None, {}
    inv = ref.inv_freq(LLAMA3_SPEC, 128).tolist()
    argv = [str(python), str(HERE / script), str(threads), json.dumps(inv),
            json.dumps([list(c) for c in configs])]
    env = {**os.environ, "PYTHONPATH": "", "OMP_NUM_THREADS": str(threads)}
    if ours:
        argv.append(json.dumps({config_key(c): str(path) for c, path in ours.items()}))
        env["PYTHONPATH"] = str(Path(compiler.__file__).resolve().parent.parent)
    out = subprocess.run(argv, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        print(f"{script} failed: {out.stderr[-2000:]}", flush=True)
        return {}, None, {}
    data = json.loads(out.stdout)
    return by_config(data["times"]), data["version"], data


def sgemm_gflops(n=2048):
    """The machine's SGEMM rate on THREADS threads: numpy (OpenBLAS) n×n×n f32."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    return 2 * n ** 3 / best_time(lambda: a @ b, reps=5, warmup=1) / 1e9


def build_limit(name, opt):
    """benchmarks/limits/<name>.c built with the toolchain's clang for this
    CPU (OpenMP, FMA contraction) and loaded; None where it cannot build."""
    lib = RESULTS / "tmp" / f"{name}.so"
    cmd = [str(LLVM_BIN / "clang"), opt, "-march=native", "-ffp-contract=fast", "-fopenmp=libomp",
           "-shared", "-fPIC", str(HERE / "limits" / f"{name}.c"), "-o", str(lib)]
    if subprocess.run(cmd, capture_output=True).returncode != 0:
        return None
    return ctypes.CDLL(str(lib))


def limit_gflops(name, threads, iterations):
    """GFLOP/s of benchmarks/limits/<name>.c's `<name>_gflops(threads,
    iterations)`, best of three; None where the toolchain's clang cannot
    build it or it reports the host lacks its engine (a result <= 0)."""
    so = build_limit(name, "-O2")
    if so is None:
        return None
    fn = getattr(so, f"{name}_gflops")
    fn.restype, fn.argtypes = ctypes.c_double, [ctypes.c_int, ctypes.c_long]
    best = max(fn(threads, iterations) for _ in range(3))
    return best if best > 0 else None


def fma_peak_gflops(threads):
    """The machine's FMA peak on `threads` threads (fma_peak.c:
    register-resident FMAs at the widest vector width); NaN where it
    cannot be built."""
    peak = limit_gflops("fma_peak", threads, 50_000_000)
    return float("nan") if peak is None else peak


def amx_peak_gflops(threads):
    """The machine's AMX bf16 peak on `threads` threads (amx_peak.c:
    tile-resident tdpbf16ps); None on a host without AMX."""
    return limit_gflops("amx_peak", threads, 5_000_000)


def dot_bf16_peak_gflops(threads):
    """The machine's AVX-512 BF16 peak on `threads` threads
    (dot_bf16_peak.c: register-resident vdpbf16ps); None on a host without
    AVX-512 BF16."""
    return limit_gflops("dot_bf16_peak", threads, 50_000_000)


def bench_matmul_bf16(results, sizes=(2048, 4096)):
    """bf16 matmuls (f32 accumulation, bf16 result) through --rope-lower-to-cpu
    against torch.matmul in bf16 and our own f32 matmul, alternating in the
    frontend venv (benchmarks/matmul_bf16.py); on the host's bf16 engine
    (AMX tiles, else AVX-512 BF16 dot products, else FMAs)."""
    python = frontend_python()
    if python is None:
        return
    env = {**os.environ, "OMP_NUM_THREADS": str(THREADS),
           "PYTHONPATH": str(Path(compiler.__file__).resolve().parent.parent)}
    out = subprocess.run([str(python), str(HERE / "matmul_bf16.py"), str(THREADS),
                          json.dumps(list(sizes))], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        print(f"matmul_bf16.py failed: {out.stderr[-2000:]}", flush=True)
        return
    data = json.loads(out.stdout)
    results["matmul_bf16"] = {"torch_version": data["version"], "engine": data["engine"], "sizes": {
        n: {**t, "gflops": 2 * int(n) ** 3 / t["ours"] / 1e9,
            "f32_gflops": 2 * int(n) ** 3 / t["ours_f32"] / 1e9,
            "torch_gflops": 2 * int(n) ** 3 / t["torch"] / 1e9}
        for n, t in data["times"].items()}}


# Max error / max of the hand-written kernel against numpy's f32 attention
# (5e-7 measured at S = 1024); a wrong kernel is off by orders of magnitude.
HAND_FUSED_TOLERANCE = 1e-4


def hand_fused_attention():
    """The hand-written fused attention of benchmarks/limits/
    fused_attention.c (the design the CPU speed issue asks the compiler
    for), as a function of (q, k, v, cos, sin, out) that returns whether it
    ran; None where clang cannot build it or the CPU lacks AVX-512."""
    so = build_limit("fused_attention", "-O3")
    if so is None or not so.fused_attention_available():
        return None
    so.fused_attention.argtypes = [ctypes.c_void_p] * 6 + [ctypes.c_int] * 3

    def run(q, k, v, cos, sin, out):
        arrays = [np.ascontiguousarray(a, dtype=np.float32) for a in (q, k, v, cos, sin)]
        return so.fused_attention(*(a.ctypes.data for a in arrays), out.ctypes.data,
                                  q.shape[1], k.shape[1], q.shape[2]) == 0
    return run


def copy_gbps(mib=512):
    """A plain copy's bandwidth, bytes read + written per second (GB/s),
    of arrays far larger than the caches."""
    src = np.ones(mib << 18, np.float32)
    dst = np.empty_like(src)
    return 2 * src.nbytes / best_time(lambda: np.copyto(dst, src), reps=5) / 1e9


def ggml_baseline():
    """ggml_baseline's path (benchmarks/ggml/build.sh builds llama.cpp's
    ggml from its pinned PyPI sdist) and its version, or (None, None) where
    that fails, which the run reports."""
    out = subprocess.run(["bash", str(HERE / "ggml" / "build.sh")], capture_output=True, text=True)
    if out.returncode != 0:
        print(f"ggml baseline unavailable: {out.stderr[-2000:]}", flush=True)
        return None, None
    binary = Path(out.stdout.strip().splitlines()[-1])
    # build.sh builds under <root>/<llama-cpp-python version>/build.
    return str(binary), f"llama-cpp-python {binary.parent.parent.name} (its vendored ggml)"


def ggml_seconds(binary, *args, threads=THREADS):
    """The best time of one ggml_baseline case (see ggml_baseline.cpp), or
    NaN without the baseline."""
    if binary is None:
        return float("nan")
    out = subprocess.run([binary, str(threads), *map(str, args)], capture_output=True, text=True)
    if out.returncode != 0:
        print(f"ggml_baseline {' '.join(map(str, args))} failed: {out.stderr[-500:]}", flush=True)
        return float("nan")
    return float(out.stdout)


# ---------------------------------------------------------------------------
# Benchmarks
# ---------------------------------------------------------------------------

def bench_rotary(results, seqs, torch_parts, ggml=None):
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
        # Every contender writes into the same preallocated destinations
        # (out=), as the copy does: a fresh result would cost its page
        # faults, which measure the allocator, not the rotation.
        row["ours"] = best_time(lambda: (lib.call("rotate_q", q, p, out=dst_q),
                                         lib.call("rotate_k", k, p, out=dst_k)), reps=reps)
        row["numpy"] = best_time(lambda: (np_rotate(q, cos, sin, dst_q),
                                          np_rotate(k, cos, sin, dst_k)), reps=reps)
        if torch_parts:
            torch, t_rotate, _ = torch_parts
            tq, tk = torch.from_numpy(q), torch.from_numpy(k)
            tc, ts = torch.from_numpy(cos), torch.from_numpy(sin)
            tdq, tdk = torch.from_numpy(dst_q), torch.from_numpy(dst_k)
            row["torch"] = best_time(lambda: (t_rotate(tq, tc, ts, tdq), t_rotate(tk, tc, ts, tdk)),
                                     reps=reps)
        # ggml's ROPE of the same tensors ([S, H, D], its layout), into its
        # preallocated result.
        row["ggml"] = ggml_seconds(ggml, "rope", "half", s, 32, 8, 128)
        # The interleaved layout (GPT-J, ggml's default mode), ours and ggml's.
        inter = compiler.compile(rotate_module(32, 8, s, 128, "interleaved"))
        row["ours_interleaved"] = best_time(lambda: (inter.call("rotate_q", q, p, out=dst_q),
                                                     inter.call("rotate_k", k, p, out=dst_k)), reps=reps)
        row["ggml_interleaved"] = ggml_seconds(ggml, "rope", "interleaved", s, 32, 8, 128)
        results["rotary"].append(row)
        print(f"rotary S={s}: " + ", ".join(
            f"{k} {moved / v / 1e9:.1f} GB/s" for k, v in row.items() if k not in ("S", "bytes")
            and v == v), flush=True)


def bench_prefill(results, configs, torch_parts, workdir, ggml=None):
    rng = np.random.default_rng(1)
    hand_fused = hand_fused_attention()
    # Ours is timed beside SDPA in its process, the calls alternating, so
    # that their ratio does not carry the machine's drift between the two.
    modules = {c: attention_file(*c, 128, workdir) for c in configs}
    sdpa, results["machine"]["torch2"], paired = venv_baseline("torch2_sdpa.py", configs,
                                                                ours=modules)
    paired = by_config(paired.get("ours", {}))
    # IREE's CPU attention runs at a few GFLOP/s (see benchmarks/README.md):
    # S = 4096 would take minutes per call, so it runs up to the target's S.
    iree, results["machine"]["iree"], reply = venv_baseline(
        "iree_attention.py", [c for c in configs if c[2] <= 2048])
    iree_errors = reply.get("errors", {})
    for hq, hkv, s in configs:
        d = 128
        flops = 4 * hq * s * s * d
        row = {"Hq": hq, "Hkv": hkv, "S": s, "flops": flops}
        row["ours_isolated"], row["ours_peak_mib"] = isolated_attention("--rope-lower-to-cpu", hq, hkv, s,
                                                                         d, workdir)
        row["ours"] = paired.get((hq, hkv, s), row["ours_isolated"])
        row["ours_unfused"], row["unfused_peak_mib"] = isolated_attention(PLAIN, hq, hkv, s, d, workdir)
        q = rng.standard_normal((1, hq, s, d), dtype=np.float32)
        k = rng.standard_normal((1, hkv, s, d), dtype=np.float32)
        v = rng.standard_normal((1, hkv, s, d), dtype=np.float32)
        cos, sin = tables(np.arange(s), d)
        reps = 1 if s >= 2048 else 2
        expected = np_attention(q, k, v, cos, sin)  # numpy's warm-up and the reference's check
        row["numpy"] = best_time(lambda: np_attention(q, k, v, cos, sin), reps=reps, warmup=0)
        out = np.empty_like(q)
        if hand_fused and hand_fused(q, k, v, cos, sin, out):
            # The hand-written kernel is a yardstick only while it computes
            # the same attention: a wrong one would pass for a fast one.
            row["hand_fused_rel_err"] = float(np.abs(out - expected).max() / np.abs(expected).max())
            if row["hand_fused_rel_err"] <= HAND_FUSED_TOLERANCE:
                row["hand_fused"] = best_time(lambda: hand_fused(q, k, v, cos, sin, out), reps=3, warmup=0)
            else:
                print(f"hand-fused C at Hq={hq} Hkv={hkv} S={s}: max error / max "
                      f"{row['hand_fused_rel_err']:.1e} > {HAND_FUSED_TOLERANCE:.0e}, not timed", flush=True)
        if torch_parts:
            torch, _, t_attention = torch_parts
            args = [torch.from_numpy(a) for a in (q, k, v, cos, sin)]
            row["torch"] = best_time(lambda: t_attention(*args), reps=reps, warmup=1)
        if (hq, hkv, s) in sdpa:
            row["torch2_sdpa"] = sdpa[(hq, hkv, s)]
        if (hq, hkv, s) in iree:
            row["iree"] = iree[(hq, hkv, s)]
            row["iree_rel_err"] = iree_errors[f"{hq}/{hkv}/{s}"]
        # ggml's CPU FLASH_ATTN_EXT (one dot product per key and query row)
        # with ROPE of Q and K: minutes beyond the target's S, as IREE.
        if s <= 2048:
            row["ggml"] = ggml_seconds(ggml, "attention", "f32", hq, hkv, s, s, d, 1)
        results["prefill"].append(row)
        print(f"prefill Hq={hq} Hkv={hkv} S={s}: " + ", ".join(
            f"{k} {flops / row[k] / 1e9:.1f} GFLOP/s" for k in ("ours", "ours_unfused", "numpy", "torch", "torch2_sdpa",
                                                               "iree", "ggml", "hand_fused")
            if k in row and row[k] == row[k])
            + f"; peak MiB fused {row['ours_peak_mib']:.0f} unfused {row['unfused_peak_mib']:.0f}", flush=True)


def bench_decode(results, lengths, dtypes=("f32", "f16"), ggml=None):
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
            dst_o = np.empty_like(q)
            row = {"dtype": dtype, "N": n, "kv_bytes": k.nbytes + v.nbytes}
            row["copy"] = best_time(lambda: (np.copyto(dst_k, k), np.copyto(dst_v, v)), reps=5)
            row["rotate_on_load"] = best_time(
                lambda: lib.call("rotate_on_load", q, k, v, qp, kp, out=dst_o), reps=5)
            row["rerotate_cache"] = best_time(lambda: unfolded.call("rerotate_cache", q, k, v, qp, kp), reps=5)
            # ggml's FLASH_ATTN_EXT over a cache of rotated keys, as
            # llama.cpp decodes (the query row rotated in the same graph).
            row["ggml"] = ggml_seconds(ggml, "attention", dtype, 32, 8, 1, n, 128, 0)
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
                      f"{k} {row[k] * 1e3:.2f} ms" for k in ("rotate_on_load", "rerotate_cache", "numpy", "ggml")
                      if k in row and row[k] == row[k]), flush=True)


def bench_scaling(results, workdir, ggml=None):
    """Prefill at S = 2048 (MHA and GQA 32/8) on one thread and on all of
    them, ours against SDPA and ggml: the efficiency of the other cores."""
    if THREADS < 2:
        return
    full_rows = {(r["Hq"], r["Hkv"], r["S"]): r for r in results["prefill"]}
    configs = [c for c in [(32, 32, 2048), (32, 8, 2048)] if c in full_rows]
    # One thread timed as all of them were: ours beside SDPA, alternating
    # (a fresh process of ours alone where the frontend venv is missing).
    modules = {c: attention_file(*c, 128, workdir) for c in configs}
    sdpa, _, paired = venv_baseline("torch2_sdpa.py", configs, threads=1, ours=modules)
    paired = by_config(paired.get("ours", {}))
    for hq, hkv, s in configs:
        full = full_rows[(hq, hkv, s)]
        ours_1 = paired.get((hq, hkv, s))
        if ours_1 is None:
            ours_1 = isolated_attention("--rope-lower-to-cpu", hq, hkv, s, 128, workdir, 1)[0]
        row = {"Hq": hq, "Hkv": hkv, "S": s, "threads": THREADS, "ours_1": ours_1,
               "ours_n": full["ours"], "torch2_sdpa_1": sdpa.get((hq, hkv, s), float("nan")),
               "torch2_sdpa_n": full.get("torch2_sdpa", float("nan")),
               "ggml_1": ggml_seconds(ggml, "attention", "f32", hq, hkv, s, s, 128, 1, threads=1),
               "ggml_n": full.get("ggml", float("nan"))}
        results["scaling"].append(row)
        print(f"scaling Hq={hq} Hkv={hkv} S={s}: " + ", ".join(
            f"{k} {row[k + '_1'] / row[k + '_n'] / THREADS:.0%}" for k in ("ours", "torch2_sdpa", "ggml")),
            flush=True)


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


def amx_peak_text(results):
    """The AMX peak as the machine line states it."""
    peak = results.get("amx_peak_gflops")
    return ("none (no AMX on this host)" if peak is None else
            f"{peak:.0f} GFLOP/s (benchmarks/limits/amx_peak.c, tile-resident tdpbf16ps)")


def dot_peak_text(results):
    """The AVX-512 BF16 peak as the machine line states it."""
    if "dot_bf16_peak_gflops" not in results:  # a run before it was measured
        return "not measured"
    peak = results["dot_bf16_peak_gflops"]
    return ("none (no AVX-512 BF16 on this host)" if peak is None else
            f"{peak:.0f} GFLOP/s (benchmarks/limits/dot_bf16_peak.c, register-resident vdpbf16ps)")


def write_markdown(results, path):
    m = results["machine"]
    lines = [f"# CPU benchmarks", "",
             f"Machine: {m['cpu']}, {m['threads']} threads; numpy {m['numpy']} on {m['blas']}; "
             f"PyTorch {m.get('torch', 'absent')} (Debian) and {m.get('torch2') or 'no PyTorch 2'} "
             f"(PyPI, the frontend venv); IREE {m.get('iree') or 'absent'} (PyPI, the frontend venv); "
             f"ggml: {m.get('ggml') or 'absent'}, CPU backend, native flags (benchmarks/ggml/). "
             f"Limits: FMA peak {results.get('fma_peak_gflops', float('nan')):.1f} GFLOP/s "
             f"({results.get('fma_peak_1thread_gflops', float('nan')):.1f} on one thread; benchmarks/limits/fma_peak.c), "
             f"copy {results.get('copy_gbps', float('nan')):.1f} GB/s (512 MiB, read + write); "
             f"SGEMM (numpy 2048³) {results.get('sgemm_gflops', float('nan')):.1f} GFLOP/s; "
             f"AMX bf16 peak {amx_peak_text(results)}; AVX-512 BF16 peak {dot_peak_text(results)}. "
             f"All figures from one run of `make bench` "
             f"({m['date']}). Best of several repetitions; glibc keeps freed memory for reuse "
             f"(no page faults on fresh outputs), for every contender.", "",
             "## Rotary application (Q [1,32,S,128] + K [1,8,S,128], f32, llama3)", "",
             "Bytes moved (read + write) per second; ratio to a plain copy of the same bytes, and speed-up over "
             "numpy / PyTorch / ggml's ROPE (same tensors in its token-major layout). Every contender writes into "
             "preallocated destinations (our `out=`, numpy's and PyTorch's `out=`, ggml's graph buffer).", "",
             "The half layout (rotate_half, NeoX) throughout, and the interleaved one (GPT-J) for ours and ggml.", "",
             "| S | copy GB/s | ours GB/s | numpy GB/s | torch GB/s | ggml GB/s | ours / copy | ours vs numpy | ours vs torch | ours vs ggml | interleaved: ours GB/s | ggml GB/s | ours vs ggml |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results["rotary"]:
        g = lambda k: r["bytes"] / r[k] / 1e9 if k in r else float("nan")
        vs = lambda k, ours="ours": r[k] / r[ours] if k in r else float("nan")
        lines.append(f"| {r['S']} | {g('copy'):.1f} | {g('ours'):.1f} | {g('numpy'):.1f} | {shown(g('torch'), '.1f')} | "
                     f"{shown(g('ggml'), '.1f')} | {r['copy'] / r['ours']:.0%} | {vs('numpy'):.1f}× | "
                     f"{shown(vs('torch'), '.1f', '×')} | {shown(vs('ggml'), '.2f', '×')} | "
                     f"{shown(g('ours_interleaved'), '.1f')} | {shown(g('ggml_interleaved'), '.1f')} | "
                     f"{shown(vs('ggml_interleaved', 'ours_interleaved'), '.2f', '×')} |")
    sgemm = results.get("sgemm_gflops", float("nan"))
    lines += ["", "## Prefill attention with RoPE, causal, B=1, D=128", "",
              "GFLOP/s with the dense count 4·B·H·S²·D (causal work is half of it). `torch` is PyTorch 1.13 "
              "eager (explicit softmax); `SDPA` is PyTorch 2's `scaled_dot_product_attention` (flash-attention "
              "CPU kernel) with HF RoPE; `IREE` compiles that same PyTorch layer (torch.export, IREE's FX importer) "
              "for its `llvm-cpu` backend (host CPU; SDPA becomes its fused `iree_linalg_ext.attention`), checked "
              "against PyTorch (max error / max in the json); `ggml` is llama.cpp's CPU `FLASH_ATTN_EXT` with `ROPE` of Q "
              "and K. Causal rate / SGEMM and / FMA peak: ours at the causal count (half the dense one) "
              "over the SGEMM rate and the FMA peak of the same run. `ours (fused)` and `SDPA` are timed in one process "
              "(the frontend venv's), their calls alternating, so that their ratio does not carry the machine's drift; "
              "`ours (isolated)` in the json is a fresh process of its own, which also gives the peak: extra "
              "resident memory of the call. `hand-fused C` is not a peer but a measure of what is attainable: "
              "benchmarks/limits/fused_attention.c, the fused design written by hand (K rotated and packed once "
              "per kv head, the scores kept in registers through the softmax), the same work as ours, checked against "
              f"numpy's attention (max error / max in the json; not timed beyond {HAND_FUSED_TOLERANCE:.0e}) and timed in the run's own "
              "process; its causal rate / FMA peak beside ours.", "",
              "| Hq/Hkv | S | ours (fused) | ours (unfused) | numpy+OpenBLAS | torch | SDPA | IREE | ggml | hand-fused C | fused vs numpy | fused vs torch | fused vs SDPA | fused vs IREE | fused vs ggml | fused vs hand-fused C | causal rate / SGEMM | causal rate / FMA peak | hand-fused C / FMA peak | fused vs unfused | peak MiB fused / unfused |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    peak = results.get("fma_peak_gflops", float("nan"))
    for r in results["prefill"]:
        g = lambda k: r["flops"] / r[k] / 1e9 if k in r else float("nan")
        vs = lambda k: (r[k] / r["ours"]) if k in r else float("nan")
        lines.append(f"| {r['Hq']}/{r['Hkv']} | {r['S']} | {g('ours'):.1f} | {g('ours_unfused'):.1f} | {g('numpy'):.1f} | "
                     f"{shown(g('torch'), '.1f')} | {shown(g('torch2_sdpa'), '.1f')} | {shown(g('iree'), '.1f')} | "
                     f"{shown(g('ggml'), '.1f')} | {shown(g('hand_fused'), '.1f')} | "
                     f"{vs('numpy'):.1f}× | {shown(vs('torch'), '.1f', '×')} | {shown(vs('torch2_sdpa'), '.2f', '×')} | "
                     f"{shown(vs('iree'), '.1f', '×')} | {shown(vs('ggml'), '.1f', '×')} | "
                     f"{shown(vs('hand_fused'), '.2f', '×')} | {g('ours') / 2 / sgemm:.0%} | "
                     f"{shown(g('ours') / 2 / peak, '.0%')} | {shown(g('hand_fused') / 2 / peak, '.0%')} | "
                     f"{r['ours_unfused'] / r['ours']:.1f}× | {r['ours_peak_mib']:.0f} / {r['unfused_peak_mib']:.0f} |")
    if "matmul_bf16" in results:
        # Runs before the dot products recorded no engine: AMX's tiles where
        # the host had them.
        engine = results["matmul_bf16"].get("engine") or \
            ("amx" if results.get("amx_peak_gflops") else "unknown")
        peak = {"amx": results.get("amx_peak_gflops"),
                "avx512bf16": results.get("dot_bf16_peak_gflops")}.get(engine)
        lines += ["", "## bf16 matmuls (f32 accumulation, bf16 result) against `torch.matmul` in bf16", "",
                  f"Ours: `linalg.matmul` on bf16 through `--rope-lower-to-cpu` on the host's bf16 engine "
                  f"(`rope-pack-tile-products`: AMX tiles, else AVX-512 BF16 dot products, else FMAs after "
                  f"widening; here: {engine}), the f32 product rounded to bf16 by its consumer; "
                  f"ours f32: the same matmul on f32 operands (register blocks of FMAs); "
                  f"torch: `torch.matmul` on bf16 tensors (oneDNN). Engine peak: AMX {amx_peak_text(results)}; "
                  f"AVX-512 BF16 {dot_peak_text(results)}; "
                  f"PyTorch {results['matmul_bf16']['torch_version']}, calls alternating "
                  f"(benchmarks/matmul_bf16.py).", "",
                  "| N | ours ms | GFLOP/s | of engine peak | ours f32 GFLOP/s | bf16 / f32 (speed) | torch ms | torch GFLOP/s | ours / torch (speed) | max rel err |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for n, t in results["matmul_bf16"]["sizes"].items():
            share = "" if peak is None else f"{t['gflops'] / peak:.0%}"
            f32 = t.get("f32_gflops", float("nan"))
            lines.append(f"| {n} | {t['ours'] * 1e3:.1f} | {t['gflops']:.0f} | {share} | {shown(f32, '.0f')} | "
                         f"{shown(t['gflops'] / f32, '.2f', '×')} | {t['torch'] * 1e3:.1f} "
                         f"| {t['torch_gflops']:.0f} | {t['torch'] / t['ours']:.2f}× | {t['rel_err']:.1e} |")
        lines += ["", *matrix_engine_target_lines(results)]
    if "matmul" in results:
        mm = results["matmul"]
        lines += ["", f"## A user's `linalg.matmul` ({mm['N']}³ f32) through `--rope-lower-to-cpu`", "",
                  "| ours GFLOP/s | SGEMM (numpy) GFLOP/s | ours / SGEMM | max error / max |",
                  "|---|---|---|---|",
                  f"| {mm['gflops']:.1f} | {sgemm:.1f} | {mm['gflops'] / sgemm:.0%} | {mm['rel_err']:.1e} |"]
    lines += ["", "## Decode: one query, Hq/Hkv = 32/8, un-rotated KV cache", "",
              "KV GB/s: the bytes of K and V read per second by our fused call (rotating K on load). "
              "Copy GB/s: a plain copy of the same K and V, bytes read + written per second. "
              "Ours / copy is the decode target's ratio. `ggml`: llama.cpp's `FLASH_ATTN_EXT` over a cache of "
              "rotated keys of the same dtype (how llama.cpp decodes), the query row rotated in the same graph.", "",
              "| cache | cached keys | KV MiB | copy GB/s | ours KV GB/s | ours / copy | rotate on load (fused) ms | re-rotate cache, then attend ms | numpy ms | ggml ms | on-load speed-up | ours vs ggml |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results["decode"]:
        kv = r["kv_bytes"]
        lines.append(f"| {r['dtype']} | {r['N']} | {kv / 2**20:.0f} | {2 * kv / r['copy'] / 1e9:.1f} | "
                     f"{kv / r['rotate_on_load'] / 1e9:.1f} | {r['copy'] / 2 / r['rotate_on_load']:.0%} | "
                     f"{r['rotate_on_load'] * 1e3:.2f} | {r['rerotate_cache'] * 1e3:.2f} | {shown(r.get('numpy', float('nan')) * 1e3, '.2f')} | "
                     f"{shown(r.get('ggml', float('nan')) * 1e3, '.2f')} | "
                     f"{r['rerotate_cache'] / r['rotate_on_load']:.2f}× | "
                     f"{shown(r.get('ggml', float('nan')) / r['rotate_on_load'], '.2f', '×')} |")
    if results.get("scaling"):
        n = m["threads"]
        lines += ["", f"## Scaling: prefill S = 2048 on 1 and {n} threads", "",
                  f"Efficiency of the other cores: time on one thread / ({n} × time on {n}); 100% is linear.", "",
                  f"| Hq/Hkv | ours 1 thread GFLOP/s | ours {n} threads | ours efficiency | SDPA efficiency | ggml efficiency |",
                  "|---|---|---|---|---|---|"]
        for r in results["scaling"]:
            flops = 4 * r["Hq"] * r["S"] ** 2 * 128
            eff = lambda k: r[k + "_1"] / r[k + "_n"] / n
            lines.append(f"| {r['Hq']}/{r['Hkv']} | {flops / r['ours_1'] / 1e9:.1f} | {flops / r['ours_n'] / 1e9:.1f} | "
                         f"{eff('ours'):.0%} | {shown(eff('torch2_sdpa'), '.0%')} | {shown(eff('ggml'), '.0%')} |")
    lines += ["", *target_lines(results)]
    path.write_text("\n".join(lines) + "\n")


def bf16_backend_results(results):
    """The bf16 torch.compile run of this machine kind (benchmarks/
    torch_backend.py, its own file: it takes the better part of an hour
    beside the f32 models): torch-backend-amx-bf16 on an AMX host, else
    torch-backend-<vendor>-bf16."""
    kind = "amx" if results.get("amx_peak_gflops") else results["machine"]["vendor"]
    return RESULTS / f"torch-backend-{kind}-bf16.json"


def matrix_engine_target_lines(results):
    """The matrix-engine issue's bf16 targets in this run, met or missed.
    On the AMX kind: 4096³ ≥ 1.0× torch.matmul in bf16 and ≥ 50% of the
    AMX peak, torch.compile ≥ 1.0× Inductor. Without AMX: bf16 never slower
    than our f32 path, and faster with AVX-512 BF16 (4096³ and the
    torch.compile prefill). The attention targets are in the notes."""
    amx = results.get("amx_peak_gflops")
    t = results.get("matmul_bf16", {}).get("sizes", {}).get("4096")
    rows = []

    def mark(target, ratio, goal, strict=False):
        met = ratio and (ratio > goal if strict else ratio >= goal)
        status = "unmeasured" if not ratio else "met" if met else "missed"
        rows.append(f"| {target} | {shown(ratio or float('nan'), '.2f')} | "
                    f"{'>' if strict else '≥'} {goal:g} | {status} |")

    if amx:
        mark("bf16 matmul 4096³ vs torch.matmul (bf16)", t and t["torch"] / t["ours"], 1.0)
        mark("bf16 matmul 4096³ / AMX peak", t and t["gflops"] / amx, 0.5)
    else:
        # The strict goal where the products ran on the dot products (the
        # engine the measured library called), not where a peak was built.
        dots = results.get("matmul_bf16", {}).get("engine") == "avx512bf16"
        mark("bf16 matmul 4096³ vs ours in f32" + (" (AVX-512 BF16: faster)" if dots else " (never slower)"),
             t and t.get("f32_gflops") and t["gflops"] / t["f32_gflops"], 1.0, strict=dots)
    backend = bf16_backend_results(results)
    if backend.exists():
        data = json.loads(backend.read_text())
        f32 = {r["model"]: r for r in data["rows"]
               if r["dtype"] == "float32" and r.get("cpu_features", "host") == "host"}
        for row in data["rows"]:
            if row["dtype"] != "bfloat16" or row.get("cpu_features", "host") != "host":
                continue
            ours, inductor = row["rope_mlir"], row["inductor"]
            for s_len, rate in ours["prefill"].items():
                if amx:
                    mark(f"torch.compile bf16 prefill vs Inductor, {row['model']} S={s_len} "
                         f"({backend.stem}.md)", rate / inductor["prefill"][s_len], 1.0)
                elif s_len in f32.get(row["model"], {}).get("rope_mlir", {}).get("prefill", {}):
                    mark(f"torch.compile bf16 prefill vs ours in f32, {row['model']} S={s_len} "
                         f"({backend.stem}.md)", rate / f32[row["model"]]["rope_mlir"]["prefill"][s_len],
                         1.0, strict=dots)
            if amx:
                mark(f"torch.compile bf16 decode vs Inductor, {row['model']} ({backend.stem}.md)",
                     ours["decode"] / inductor["decode"], 1.0)
    if amx:
        rows.append("| bf16 causal prefill attention with RoPE vs PyTorch SDPA (bf16) | – | ≥ 1.5 | "
                    "missed: attention on tiles not built (bf16 attention runs widened to f32 FMAs) |")
    kind = "the AMX machine kind" if amx else "a machine without AMX"
    return [f"Targets of the matrix-engine issue ({kind}):", "",
            "| target | ratio | goal | status |", "|---|---|---|---|", *rows]


def target_lines(results):
    """The CPU speed issue's targets (prefill, decode, rotary) in this run,
    each marked met or missed with its ratio; a target whose baseline is
    missing is marked unmeasured."""
    rows = []

    def mark(target, case, ratio, goal):
        status = "unmeasured" if ratio != ratio else "met" if ratio >= goal else "missed"
        rows.append(f"| {target} | {case} | {shown(ratio, '.2f')} | ≥ {goal:g} | {status} |")

    peak = results.get("fma_peak_gflops", float("nan"))
    for r in results["prefill"]:
        if not 1024 <= r["S"] <= 8192:
            continue
        case = f"Hq/Hkv {r['Hq']}/{r['Hkv']}, S={r['S']}"
        mark("prefill causal rate / FMA peak", case, r["flops"] / 2 / r["ours"] / 1e9 / peak, 0.7)
        mark("prefill vs PyTorch 2 SDPA", case, r.get("torch2_sdpa", float("nan")) / r["ours"], 1.3)
    for r in results["decode"]:
        case = f"{r['dtype']} cache, {r['N']} keys"
        mark("decode KV read / copy", case, r["copy"] / 2 / r["rotate_on_load"], 0.8)
        mark("decode vs ggml FLASH_ATTN_EXT", case, r.get("ggml", float("nan")) / r["rotate_on_load"], 1.2)
    for r in results["rotary"]:
        case = f"S={r['S']}"
        for layout, ours, ggml in (("half", "ours", "ggml"),
                                   ("interleaved", "ours_interleaved", "ggml_interleaved")):
            if ours not in r:
                continue
            mark(f"rotary ({layout}) / copy", case, r["copy"] / r[ours], 0.8)
            mark(f"rotary ({layout}) vs ggml ROPE", case, r.get(ggml, float("nan")) / r[ours], 1.0)
    met = sum(" met |" in row for row in rows)
    return ["## Targets of the CPU speed issue in this run", "",
            f"{met} of {len(rows)} met.", "",
            "| target | case | ratio | goal | status |", "|---|---|---|---|---|", *rows]


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
    for key, label in (("copy", "copy (ceiling)"), ("ours", "rope-mlir"), ("numpy", "numpy"), ("torch", "PyTorch"),
                       ("ggml", "ggml ROPE")):
        if all(key in r and r[key] == r[key] for r in rot):
            axes[0].plot([r["S"] for r in rot], [r["bytes"] / r[key] / 1e9 for r in rot], "o-", label=label)
    axes[0].set(title="Rotary application (Q+K)", xlabel="S", ylabel="GB/s moved", xscale="log")
    pre = [r for r in results["prefill"] if r["Hkv"] == 32]
    for key, label in (("ours", "rope-mlir fused"), ("ours_unfused", "rope-mlir unfused"),
                       ("numpy", "numpy+OpenBLAS"), ("torch", "PyTorch 1.13"),
                       ("torch2_sdpa", "PyTorch 2 SDPA"), ("hand_fused", "hand-fused C (attainable)")):
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
        if all(r.get("ggml", float("nan")) == r.get("ggml", float("nan")) and "ggml" in r for r in dec):
            axes[2].plot([r["N"] for r in dec], [r["kv_bytes"] / r["ggml"] / 1e9 for r in dec], style,
                         color="C2", label=f"ggml FLASH_ATTN_EXT ({dtype})")
    axes[2].set(title="Decode, 32/8 heads: KV bytes read", xlabel="cached keys", ylabel="GB/s", xscale="log")
    for ax in axes:
        ax.legend()
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plot_prefill_at_a_glance(results, path.with_name(path.name.replace("cpu", "prefill", 1)), plt)


def plot_prefill_at_a_glance(results, path, plt):
    """One bar chart: causal prefill at S = 2048, every contender's real
    arithmetic rate (causal FLOPs) next to the SGEMM rate of the same run."""
    rows = [r for r in results["prefill"] if r["S"] == 2048]
    if not rows:
        return
    contenders = [("ours", "rope-mlir (fused)"), ("torch2_sdpa", "PyTorch 2 SDPA"), ("iree", "IREE llvm-cpu"),
                  ("ggml", "llama.cpp ggml"), ("torch", "PyTorch 1.13 eager"), ("numpy", "numpy+OpenBLAS"),
                  ("ours_unfused", "rope-mlir unfused")]
    contenders = [c for c in contenders if any(c[0] in r and r[c[0]] == r[c[0]] for r in rows)]
    fig, ax = plt.subplots(figsize=(9, 4.5))
    width = 0.8 / len(contenders)
    for i, (key, label) in enumerate(contenders):
        xs = [j + i * width for j in range(len(rows))]
        ys = [r["flops"] / 2 / r[key] / 1e9 if key in r and r[key] == r[key] else 0 for r in rows]
        bars = ax.bar(xs, ys, width, label=label)
        ax.bar_label(bars, fmt="%.0f", fontsize=8)
    ax.axhline(results["sgemm_gflops"], color="black", linestyle="--",
               label=f"SGEMM (numpy 2048³) {results['sgemm_gflops']:.0f}")
    if results.get("fma_peak_gflops", float("nan")) == results.get("fma_peak_gflops"):
        ax.axhline(results["fma_peak_gflops"], color="red", linestyle=":",
                   label=f"FMA peak {results['fma_peak_gflops']:.0f}")
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(rows))],
                  [f"H {r['Hq']}/{r['Hkv']}, S=2048" for r in rows])
    ax.set(title=f"Causal prefill with RoPE, D=128, {results['machine']['threads']} threads "
                 "(higher is better)", ylabel="GFLOP/s, causal count")
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def machine():
    fields = cpu_fields()
    cpu = cpu_name(fields)
    vendor = {"GenuineIntel": "intel", "AuthenticAMD": "amd"}.get(
        fields.get("vendor_id"), "other" if "vendor_id" in fields else "unknown")
    blas = "unknown BLAS"
    try:
        blas = os.path.realpath("/usr/lib/x86_64-linux-gnu/libblas.so.3").split("/")[-2]
    except OSError:
        pass
    if "OPENBLAS_CORETYPE" in os.environ:
        blas += f" (core {os.environ['OPENBLAS_CORETYPE']})"
    info = {"cpu": cpu, "vendor": vendor, "threads": THREADS, "numpy": np.__version__, "blas": blas,
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
    ggml, results["machine"]["ggml"] = ggml_baseline()
    results["fma_peak_gflops"] = fma_peak_gflops(THREADS)
    results["fma_peak_1thread_gflops"] = fma_peak_gflops(1)
    results["copy_gbps"] = copy_gbps()
    results["sgemm_gflops"] = sgemm_gflops()
    results["amx_peak_gflops"] = amx_peak_gflops(THREADS)
    results["dot_bf16_peak_gflops"] = dot_bf16_peak_gflops(THREADS)
    print(f"FMA peak {results['fma_peak_gflops']:.1f} GFLOP/s ({THREADS} threads; 1 thread "
          f"{results['fma_peak_1thread_gflops']:.1f}), copy {results['copy_gbps']:.1f} GB/s, "
          f"SGEMM (numpy 2048^3) {results['sgemm_gflops']:.1f} GFLOP/s", flush=True)
    bench_rotary(results, [512, 2048] if quick else [512, 1024, 2048, 4096], torch_parts, ggml)
    prefill = [(32, 32, 512), (32, 32, 2048)] if quick else \
        [(32, 32, 512), (32, 32, 1024), (32, 32, 2048), (32, 32, 4096), (32, 8, 2048)]
    bench_prefill(results, prefill, torch_parts, workdir, ggml)
    bench_decode(results, [4096, 32768] if quick else [4096, 8192, 16384, 32768], ggml=ggml)
    results["scaling"] = []
    bench_scaling(results, workdir, ggml)
    bench_matmul(results)
    bench_matmul_bf16(results)
    stem = f"cpu-{results['machine']['vendor']}"
    (RESULTS / f"{stem}.json").write_text(json.dumps(results, indent=1))
    write_markdown(results, RESULTS / f"{stem}.md")
    plot(results, RESULTS / f"{stem}.png")
    print((RESULTS / f"{stem}.md").read_text())


if __name__ == "__main__":
    main()
