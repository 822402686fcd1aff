"""Helpers for the numerical lit tests: inputs, dtype round-trips, tolerances,
and the lit configuration's choices.

    import rope_testing as T        # test/lib/python is on PYTHONPATH (test/lit.cfg.py)

Part of the test tree, not of the rope_mlir package (which never imports it).
The lit suite steers its tests with environment variables (test/lit.cfg.py,
`make gpu-bundle`, utils/run_gpu_bundle.sh); this module is the one place
that reads them, and turns them into `rope_mlir.compile` options:
* ROPE_PIPELINE: the CPU pipeline variant a RUN line asks for;
* ROPE_GPU_CHIP, ROPE_KERNEL_CACHE, ROPE_PREBUILT_ONLY, ROPE_GPU_COMPILE_ONLY,
  ROPE_GPU_EMULATE: how GPU test files compile (and whether they run);
* ROPE_BUILD_DIR: the build whose rope-opt (tests of the printer) and
  libRopeCAPITesting.so (the C API with the test passes) the tests use.

Tolerances are stated in ulps of the storage type at the magnitude that sets
the rounding error of each result, not of the (possibly cancelled) result:
* rotation: the norm of the element's pair (a rotation preserves it, and f32
  rounding of a·cos − b·sin is relative to it), times the attention factor;
* attention: the largest |value| (outputs are convex combinations of values).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import mmap
import os
import sys
import traceback
from pathlib import Path

import numpy as np

from rope_mlir import _capi, compiler, cuda, reference as ref
from rope_mlir.errors import RuntimeCheckError
from rope_mlir.options import CompileOptions


def build_dir() -> Path:
    """The build the tests run (ROPE_BUILD_DIR, else the checkout's build/)."""
    build = os.environ.get("ROPE_BUILD_DIR")
    return Path(build) if build else Path(__file__).resolve().parents[3] / "build"


# Test files compile through the build's libRopeCAPITesting.so: the C API
# with the test-only passes and pipelines of test/lib registered too (the
# GPU mapping on the CPU, `emulate=True` and %gpu_mapping). Without it (a GPU
# machine running a bundle has no build) they use the package's C API.
_TEST_CAPI = build_dir() / "lib" / "libRopeCAPITesting.so"
if _TEST_CAPI.exists():
    _capi.use_library(_TEST_CAPI)

# Storage types by MLIR name: numpy dtype used to hold them, and ulp dtype.
STORAGE = {"f32": np.float32, "f16": np.float16, "bf16": np.uint16}


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def to_storage(x: np.ndarray, dtype: str) -> np.ndarray:
    """f64 values -> the array a kernel takes for `dtype`."""
    if dtype == "bf16":
        return ref.to_bf16_bits(x)
    return np.asarray(x, dtype=STORAGE[dtype])


def from_storage(x: np.ndarray, dtype: str) -> np.ndarray:
    """A kernel's array -> f64 values."""
    if dtype == "bf16":
        return ref.from_bf16_bits(x).astype(np.float64)
    return np.asarray(x, dtype=np.float64)


def quantize(x: np.ndarray, dtype: str) -> np.ndarray:
    """Values exactly representable in `dtype` (so the reference sees the same
    inputs as the kernel)."""
    return from_storage(to_storage(x, dtype), dtype)


def ulp(magnitude: np.ndarray, dtype: str) -> np.ndarray:
    """Spacing of `dtype` at |magnitude| (normal range floor for tiny values)."""
    mag = np.abs(np.asarray(magnitude, dtype=np.float64))
    if dtype == "bf16":
        exp = np.floor(np.log2(np.maximum(mag, 2.0 ** -126)))
        return 2.0 ** (exp - 7)
    t = STORAGE[dtype]
    return np.spacing(np.maximum(mag, np.finfo(t).tiny).astype(t)).astype(np.float64)


def pair_norms(x: np.ndarray, spec: ref.RotarySpec) -> np.ndarray:
    """For every element of x (head dim last), the norm of its rotation pair;
    pass-through elements get their own magnitude."""
    d = x.shape[-1]
    r = spec.rotary_dims or d
    h, off = r // 2, spec.offset
    norms = np.abs(x).astype(np.float64)
    if spec.layout == "half":
        a, b = slice(off, off + h), slice(off + h, off + r)
    else:
        a, b = slice(off, off + r, 2), slice(off + 1, off + r, 2)
    n = np.hypot(x[..., a], x[..., b])
    norms[..., a] = n
    norms[..., b] = n
    return norms


def check_rotation(actual, expected, x, spec, dtype, ulps, name):
    """|actual − expected| <= ulps · ulp(m · pair norm) elementwise."""
    m = ref.attention_factor(spec)
    atol = ulps * ulp(m * pair_norms(x, spec), dtype)
    return check(actual, expected, atol, name)


def check(actual, expected, atol, name):
    """Elementwise |actual − expected| <= atol (array or scalar); prints the
    result and raises AssertionError on failure."""
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    if actual.shape != expected.shape:
        raise AssertionError(f"FAIL {name}: shape {actual.shape} != {expected.shape}")
    err = np.abs(actual - expected)
    atol = np.broadcast_to(np.asarray(atol, dtype=np.float64), err.shape)
    bad = ~(err <= atol)  # NaN counts as bad
    ratio = float(np.max(np.where(atol > 0, err / np.where(atol > 0, atol, 1), err > 0),
                         initial=0.0))
    if bad.any():
        idx = np.unravel_index(np.argmax(np.where(bad, err, -1)), err.shape)
        raise AssertionError(
            f"FAIL {name}: {int(bad.sum())}/{err.size} out of tolerance; worst at {idx}: "
            f"actual={actual[idx]!r} expected={expected[idx]!r} err={err[idx]:.3e} "
            f"tol={atol[idx]:.3e}")
    print(f"PASS {name}: max_abs_err={float(err.max()) if err.size else 0.0:.3e} "
          f"max_err/tol={ratio:.3f} n={err.size}")
    return float(err.max()) if err.size else 0.0


# ---------------------------------------------------------------------------
# Tolerances derived for the CPU numerical lit tests (test/Integration/CPU).
# u = 2^-24 is the f32 unit roundoff; ulp_f32(x) lies in (u·|x|, 2u·|x|].
# ---------------------------------------------------------------------------


def check_stored(out, expected, atol, dtype, name):
    """`check` for a kernel result held in storage `dtype` (bf16 bit patterns
    are decoded first)."""
    return check(from_storage(out, dtype), expected, atol, name)


def rotation_atol(x, spec, dtype="f32", f32_ulps=2):
    """Elementwise tolerance of a rotation of `x` stored as `dtype`:
    ``f32_ulps · ulp_f32(m·n) + [dtype != f32] · ulp_dtype(m·n)``, n the pair norm.

    The math is f32: the f32 result is within `f32_ulps` ulps of m·n (three
    roundings in a·cos − b·sin, ½ ulp each, plus the cos/sin table error times
    |a| + |b| <= sqrt(2)·n). The tests use 2 ulps when m = 1 and 3 when an
    attention factor m != 1 is folded into the tables (one more rounding of
    m·cos, m·sin). Storing it in f16/bf16 rounds once more, by <= ½ ulp
    of the storage type at |y| <= m·n; the f32 error can carry |y| just past a
    power of two, so a whole storage ulp is allowed.
    """
    norm = ref.attention_factor(spec) * pair_norms(x, spec)
    atol = f32_ulps * ulp(norm, "f32")
    if dtype != "f32":
        atol = atol + ulp(norm, dtype)
    return atol


def table_rotation_atol(x, cos, sin, dtype="f32", f32_ulps=2, **kw):
    """Elementwise tolerance of ``rope.rotate_with_tables`` (keywords as
    `reference.rotate_with_tables`): each element is x_j·c_j ± x_j'·s_j in
    f32, three roundings, so `f32_ulps` ulps of f32 at |x_j·c_j| + |x_j'·s_j|,
    plus one ulp of the storage type when it is not f32."""
    x, cos, sin = (np.abs(np.asarray(t, np.float64)) for t in (x, cos, sin))
    # rot(x) negates one member of each pair: with sin and −sin, one of the
    # two sums adds both products' magnitudes.
    bound = np.maximum(np.abs(ref.rotate_with_tables(x, cos, sin, **kw)),
                       np.abs(ref.rotate_with_tables(x, cos, -sin, **kw)))
    atol = f32_ulps * ulp(bound, "f32")
    if dtype != "f32":
        atol = atol + ulp(bound, dtype)
    return atol


def check_rotation_stored(out, expected, x, spec, dtype, f32_ulps, name):
    """`check` of a rotation result in storage `dtype` against the f64
    reference, within `rotation_atol`."""
    return check_stored(out, expected, rotation_atol(x, spec, dtype, f32_ulps), dtype, name)


def _rotated_mask(head_dim: int, spec: ref.RotarySpec) -> np.ndarray:
    """True for the head dims that `spec` rotates."""
    r = spec.rotary_dims or head_dim
    mask = np.zeros(head_dim, dtype=bool)
    mask[spec.offset:spec.offset + r] = True
    return mask


def _abs_features(x, spec):
    """|x| per element, or for rotated dims the pair norm times m/sqrt(2):
    then Σ_d over two such vectors bounds |Σ_d (R x)_d (R y)_d| termwise
    (each pair contributes at most m²·n_x·n_y, by Cauchy–Schwarz)."""
    x = np.asarray(x, dtype=np.float64)
    if spec is None:
        return np.abs(x)
    m = ref.attention_factor(spec)
    rot = _rotated_mask(x.shape[-1], spec)
    return np.where(rot, pair_norms(x, spec) * (m / np.sqrt(2.0)), np.abs(x))


def logit_bound(q, k, scale=None, rotary=None):
    """Per query row [B, Hq, Sq, 1]: max over keys of scale·Σ_d |q_d·k_d| (with
    Q, K rotated by `rotary` when given) — a bound on each logit and the
    magnitude its f32 rounding error is relative to."""
    q = np.asarray(q, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    if scale is None:
        scale = 1.0 / np.sqrt(q.shape[-1]) if q.shape[-1] else 1.0
    k = np.repeat(k, q.shape[1] // k.shape[1] if k.shape[1] else 1, axis=1)  # GQA/MQA
    terms = np.einsum("bhqd,bhkd->bhqk", _abs_features(q, rotary), _abs_features(k, rotary))
    return abs(scale) * terms.max(axis=-1, keepdims=True, initial=0.0)


def product_atol(x, w):
    """Tolerance of x·wᵀ (w stored [out, in]) accumulated in f32 over the K
    terms of each dot product: K·2⁻²⁴·(|x|·|w|ᵀ) per element (the standard
    bound for a recursive sum), plus one f32 ulp of the result."""
    x = np.asarray(x, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    k = x.shape[-1]
    return k * 2.0 ** -24 * (np.abs(x) @ np.abs(w).T) + ulp(np.abs(x @ w.T), "f32")


def attention_atol(q, k, v, *, scale=None, rotary=None, dtype="f32"):
    """Tolerance of softmax attention (math in f32, result stored as `dtype`),
    per query row: ``ulp_f32(V)·(L + 2·sqrt(Sk)) + [dtype != f32]·ulp_dtype(V)``
    with V = max|v| and L = `logit_bound` of the row.

    Derivation (first order): each logit carries an f32 error δ <= u·L up to a
    small factor (dot product of D terms, rotation inside the op); perturbing
    the logits by δ_j moves Σ_j p_j v_j by Σ_j p_j (δ_j − Σ p δ) v_j, at most
    2·max δ·V <= ulp_f32(V)·L. The P·V sum of Sk terms adds random-walk
    rounding of about sqrt(Sk)·ulp_f32(V) (2·sqrt(Sk) allowed), and the exp /
    normalisation a few more ulps of relative error. Results are convex
    combinations of values, so |out| <= V and storing it in f16/bf16 adds
    at most one storage ulp of V.
    """
    vmax = float(np.max(np.abs(v))) if np.size(v) else 0.0
    sk = np.shape(k)[2]
    atol = ulp(vmax, "f32") * (logit_bound(q, k, scale, rotary) + 2.0 * np.sqrt(sk))
    if dtype != "f32":
        atol = atol + ulp(vmax, dtype)
    return atol


def tensor_core_attention_atol(q, k, v, *, scale=None, rotary=None, dtype="f16"):
    """Tolerance of attention on tensor cores (f16/bf16 operands of mma.sync,
    f32 accumulation): ``attention_atol + ulp_dtype(V)·(1 + 2·L·[rotated])``.

    Beyond attention_atol, P is rounded to `dtype` as the A operand of P·V:
    each p_j carries a relative error <= u (half an ulp), which moves
    Σ p_j v_j / l by at most u·V. Q and K rotated inside the kernel are
    rounded to `dtype` once more (the CPU keeps them in f32): each logit
    then errs by <= 2u·L more, which moves the output by <= 2·(2u·L)·V =
    2·L·ulp_dtype(V), as in attention_atol's derivation.
    """
    vmax = float(np.max(np.abs(v))) if np.size(v) else 0.0
    extra = 1.0 + (2.0 * logit_bound(q, k, scale, rotary) if rotary is not None else 0.0)
    return attention_atol(q, k, v, scale=scale, rotary=rotary, dtype=dtype) + ulp(vmax, dtype) * extra


def linear_attention_atol(q, k, v, *, rotary=None, positions=None, causal=False, dtype="f32"):
    """Tolerance of RoFormer linear attention (f32 math), per output element:
    ``2·(sqrt(D) + sqrt(S) + 2)·u·N/den + [dtype != f32]·ulp_dtype(out)``.

    num_m = Σ_n (R_m φq_m)·(R_n φk_n) v_n can cancel, so its error is relative
    to N_m = Σ_n A_mn |v_n|, A_mn = Σ_d |(Rφq_m)_d (Rφk_n)_d| bounded pairwise
    (`_abs_features`); den_m = Σ_n φq_m·φk_n has only positive terms. Both
    sums (over D, then over S, in either order) round like random walks,
    <= (sqrt(D) + sqrt(S))·u relative to their term magnitudes, and φ itself
    is a few ulps off; out = num/den then errs by <= (err_num + |out|·err_den)/den
    <= 2·(sqrt(D) + sqrt(S) + 2)·u·N/den since |out|·den <= N.
    """
    q = np.asarray(q, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    S, D = q.shape[2], q.shape[3]
    fq = ref._elu_plus_one(q)
    fk = ref._elu_plus_one(k)
    a = np.einsum("bhmd,bhnd->bhmn", _abs_features(fq, rotary), _abs_features(fk, rotary))
    den = np.einsum("bhmd,bhnd->bhmn", fq, fk)
    if causal:
        keep = np.tril(np.ones((S, S), dtype=bool))
        a = np.where(keep, a, 0.0)
        den = np.where(keep, den, 0.0)
    n_abs = np.einsum("bhmn,bhne->bhme", a, np.abs(v))
    den = den.sum(axis=-1, keepdims=True)
    u = 2.0 ** -24
    atol = 2.0 * (np.sqrt(D) + np.sqrt(S) + 2.0) * u * n_abs / den
    if dtype != "f32":
        out = ref.linear_attention(q, k, v, rotary=rotary, positions=positions, causal=causal)
        atol = atol + ulp(out, dtype)
    return atol


# ---------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------


def rotate_module(spec_attr: str, x_type: str, pos_type: str, seq_dim: int | None = None,
                  name: str = "kernel") -> str:
    """MLIR text of one function `@name(%x, %p)` returning ``rope.rotate`` of x,
    e.g. ``rotate_module("#rope.spec<>", "tensor<2x4x?x16xf32>", "tensor<?xi64>")``."""
    sd = "" if seq_dim is None else f" seq_dim = {seq_dim}"
    return (f"func.func @{name}(%x: {x_type}, %p: {pos_type}) -> {x_type} {{\n"
            f"  %r = rope.rotate %x, %p rotary({spec_attr}){sd} : {x_type}, {pos_type}\n"
            f"  return %r : {x_type}\n}}\n")


def call(lib, name: str, *args: np.ndarray) -> np.ndarray:
    """``lib.call(name, *args)`` that also checks the kernel left its arguments
    untouched: they are tensors, with value semantics, so writing a result into
    an argument's buffer is a miscompile (and would corrupt the inputs of later
    cases). A clobbered argument is restored, then reported."""
    saved = [np.array(a, copy=True) for a in args]
    out = lib.call(name, *args)
    for i, (a, s) in enumerate(zip(args, saved)):
        if a.tobytes() != s.tobytes():
            np.copyto(a, s)
            raise AssertionError(f"@{name} overwrote its argument #{i} (shape {a.shape}, {a.dtype})")
    return out


# ---------------------------------------------------------------------------
# The lit configuration's choices
# ---------------------------------------------------------------------------


def _flag(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0")


def pipeline() -> str | None:
    """The CPU pipeline the RUN line asks for (ROPE_PIPELINE), or None."""
    return os.environ.get("ROPE_PIPELINE") or None


def compile(source, **options):
    """`rope_mlir.compile` for the CPU, through the pipeline variant of the
    RUN line unless `options` name a pipeline."""
    if "pipeline" not in options and not any(k not in _COMPILE_FIELDS for k in options):
        options["pipeline"] = pipeline()
    return compiler.compile(source, "cpu", **options)


_COMPILE_FIELDS = {"pipeline", "opt_level", "source_name", "output", "options"}


def gpu_compile_only() -> bool:
    """True when GPU test files should compile their cases but not run them
    (`make gpu-bundle` on a machine without a GPU)."""
    return _flag("ROPE_GPU_COMPILE_ONLY")


def gpu_options(**pipeline_options):
    """The CompileOptions of GPU test files: chip, kernel folder, prebuilt or
    emulated, from the lit configuration / the bundle scripts."""
    cache = os.environ.get("ROPE_KERNEL_CACHE")
    return CompileOptions(target="cuda", chip=os.environ.get("ROPE_GPU_CHIP", "sm_90"),
                          output=Path(cache) if cache else None,
                          prebuilt_only=_flag("ROPE_PREBUILT_ONLY"),
                          emulate=_flag("ROPE_GPU_EMULATE"),
                          pipeline_options=pipeline_options)


def gpu_compile(source, **pipeline_options):
    """Compiles a GPU test case as the configuration says: the GpuModule (or,
    emulated, the CPU module of the mapping); None in compile-only mode, after
    compiling it into the kernel folder.

    The same source with the same options again (a file that runs one module
    at several sizes) gets the module compiled the time before, and in
    compile-only mode the same ptxas report: compiling it again would give
    the same kernels."""
    global _last_gpu_compile
    options = gpu_options(**pipeline_options)
    key = (source, repr(options), gpu_compile_only(), _flag("ROPE_GPU_PTXAS_REPORT"))
    if _last_gpu_compile is not None and _last_gpu_compile[0] == key:
        module, report = _last_gpu_compile[1:]
        if report is not None:
            print(report)
        return module
    module = report = None
    if gpu_compile_only() and not options.emulate:
        cuda.build(source, options)
        if _flag("ROPE_GPU_PTXAS_REPORT"):
            report = ptxas_report(source, options)
            print(report)
    else:
        module = compiler.compile(source, options=options)
    _last_gpu_compile = (key, module, report)
    return module


_last_gpu_compile = None  # (key, module, ptxas report) of gpu_compile's last compile


def ptxas_report(source, options) -> str:
    """ptxas -v of every kernel of `source` compiled as `options` says, one
    `KERNEL <name> <chip>: <R> registers, ... bytes spill ...` line each
    (utils/gpu_kernels.py), for the GPU tests' static checks."""
    import subprocess

    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "utils"))
    import gpu_kernels

    pipeline = options.pass_pipeline().replace("rope-lower-to-nvvm{", "rope-lower-to-nvvm{format=isa ")
    if "{" not in pipeline:
        pipeline += "{format=isa}"
    run = subprocess.run([str(rope_opt()), f"--pass-pipeline=builtin.module({pipeline})"],
                         input=source, capture_output=True, text=True, env=tool_env(), check=True)
    lines = []
    for _, chip, ptx in gpu_kernels.modules(run.stdout):
        report, _ = gpu_kernels.ptxas(ptx, chip)
        lines += gpu_kernels.usage_lines(report)
    return "\n".join(lines)


# What a GPU test asks of the compiler (a spec's printed text, the structure
# of a compiled case), recorded in a kernel folder when a bundle is compiled
# (ROPE_GPU_COMPILE_ONLY with ROPE_KERNEL_CACHE) and read back on the GPU
# machine that runs it without the compiler (ROPE_PREBUILT_ONLY). Kept in
# `<kernel folder>/COMPILER_ANSWERS`, not *.json, which a compiler change
# clears before the first kernel is compiled.
COMPILER_ANSWERS = "compiler_answers.jsonl"


def compiler_answer(question: str, ask):
    """`ask()` (a JSON value the compiler gives), or, on a bundle's GPU
    machine, the answer recorded for `question` when the bundle was made."""
    cache = os.environ.get("ROPE_KERNEL_CACHE")
    table = Path(cache) / COMPILER_ANSWERS if cache else None
    if table is not None and _flag("ROPE_PREBUILT_ONLY"):
        answers = {}
        if table.exists():
            for line in table.read_text().splitlines():
                entry = json.loads(line)
                answers[entry["question"]] = entry["answer"]
        if question not in answers:
            raise KeyError(f"{question[:200]} is not answered in {table} "
                           "(rebuild the bundle: `make gpu-bundle`)")
        return answers[question]
    answer = ask()
    if table is not None and gpu_compile_only():
        table.parent.mkdir(parents=True, exist_ok=True)
        with table.open("a") as f:
            f.write(json.dumps({"question": question, "answer": answer}) + "\n")
    return answer


def spec_attr(spec, head_dim: int | None = None) -> str:
    """``spec.to_attr(head_dim)`` for GPU test files and benchmarks, whose
    module texts (the keys of their kernels) must also be made on a GPU
    machine that runs a bundle without the compiler: the dialect prints
    specs through the C API, which is not there."""
    return compiler_answer(repr(("spec_attr", spec, head_dim)),
                           lambda: spec.to_attr(head_dim))


def tool_env() -> dict:
    """The environment for a tool a test starts: this one without the
    sanitizer runtime that a sanitizer build preloads into Python (the tools
    link their own)."""
    return {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}


def rope_opt() -> Path:
    """The build's rope-opt (tests of its printer and parser run it)."""
    return build_dir() / "bin" / "rope-opt"


def rope_opt_run(args, source):
    """rope-opt `args` on `source` (stdin): the CompletedProcess, text."""
    import subprocess
    return subprocess.run([str(rope_opt()), *args], input=source, capture_output=True,
                          text=True, env=tool_env())


def takes_attention_kernel(source, dtype) -> bool:
    """Whether --rope-attention-to-tensor-cores (after the fold, as the GPU
    pipeline runs it) replaces every rope.attention of `source` with the
    FlashAttention-style kernel: tiles staged by cp.async, products by
    mma.sync (f16, bf16) or FMA (f32). GPU tests assert it, so that a case
    cannot pass on another lowering."""
    def ask():
        run = rope_opt_run(["--rope-fold-rotation-into-qk", "--rope-attention-to-tensor-cores"],
                           source)
        product = "math.fma" if dtype == "f32" else "nvvm.mma.sync"
        return (run.returncode == 0 and product in run.stdout
                and "nvgpu.device_async_copy" in run.stdout
                and "rope.attention" not in run.stdout)
    return compiler_answer(repr(("takes_attention_kernel", source, dtype)), ask)


# ---------------------------------------------------------------------------
# Guarded buffers and bad calls
# ---------------------------------------------------------------------------

_PAGE = mmap.PAGESIZE
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


def guarded(a: np.ndarray) -> np.ndarray:
    """A C-contiguous copy of `a` whose last byte is followed by an
    inaccessible page (and whose page is preceded by one): a kernel that
    reads or writes past its end, even by one element, dies with SIGSEGV
    instead of reading a neighbour's memory, and the test fails."""
    a = np.ascontiguousarray(a)
    data_pages = max(1, -(-a.nbytes // _PAGE))
    mapping = mmap.mmap(-1, (data_pages + 2) * _PAGE)
    view = ctypes.c_char.from_buffer(mapping)
    base = ctypes.addressof(view)
    del view  # the array's buffer keeps the mapping alive, and unmaps it
    for page in (0, data_pages + 1):
        if _libc.mprotect(base + page * _PAGE, _PAGE, 0) != 0:
            raise OSError(ctypes.get_errno(), "mprotect failed")
    end = (data_pages + 1) * _PAGE
    # Aligned to the element size at most: the end stays flush with the guard.
    out = np.frombuffer(mapping, dtype=a.dtype, count=a.size,
                        offset=end - a.nbytes).reshape(a.shape)
    out[...] = a
    return out


def call_with_bad_shapes(lib, name: str, args, expected: str) -> str:
    """Calls `name` with arguments that break one of its rope ops' shape
    relations. Returns the runtime check's message when the call raises it,
    contains `expected`, leaves every argument unchanged and touched nothing
    beyond them (each is a guarded buffer); raises AssertionError otherwise."""
    args = [guarded(a) for a in args]
    saved = [a.copy() for a in args]
    try:
        lib.call(name, *args)
    except RuntimeCheckError as e:
        message = str(e)
    else:
        raise AssertionError(f"@{name} returned instead of failing its runtime check")
    if expected not in message:
        raise AssertionError(f"expected {expected!r} in the error, got {message!r}")
    for i, (a, b) in enumerate(zip(args, saved)):
        if a.tobytes() != b.tobytes():
            raise AssertionError(f"argument #{i} changed before the check failed")
    return message


def expect_runtime_error(lib, name: str, args, expected: str, case: str):
    """`call_with_bad_shapes` as a case of a test file: prints
    ``PASS <case>: <the op's diagnostic>``."""
    with guard(case):
        message = call_with_bad_shapes(lib, name, args, expected)
        print(f"PASS {case}: {message.split(': error: ', 1)[-1]}")


# ---------------------------------------------------------------------------
# Independent cases within one test file
# ---------------------------------------------------------------------------

_FAILED: list[str] = []


@contextlib.contextmanager
def guard(name: str):
    """Runs one case of a test file: any exception (a compile error, a failed
    check) prints ``FAIL <name>`` with its cause and is recorded, so the other
    cases still run and report; `finish` then exits non-zero."""
    try:
        yield
    except Exception as e:  # noqa: BLE001 - every failure is reported, none hidden
        first = str(e).strip().splitlines()[:12]
        print(f"FAIL {name}: {type(e).__name__}: " + "\n  ".join(first))
        traceback.print_exc(file=sys.stderr)
        _FAILED.append(name)


def finish():
    """Ends a test file: exit status 1 if any `guard`ed case failed."""
    sys.stdout.flush()
    if _FAILED:
        print(f"{len(_FAILED)} case(s) failed: {', '.join(_FAILED)}")
        sys.exit(1)
