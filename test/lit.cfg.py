# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "ROPE"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".py", ".test", ".c"]
# test/lib: what tests use (test-only passes, the Python helpers), no tests.
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "CMakeLists.txt", "lib"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.rope_obj_root, "test")

llvm_config.use_default_substitutions()

# A test that hangs fails after half an hour (the slowest, a random draw of
# model configs, takes eight to fifteen on two cores) instead of holding the
# suite, and CI with it, to its overall limit. lit kills it with psutil
# (python3-psutil, utils/setup.sh); without psutil there is no limit.
if lit_config.maxIndividualTestTime == 0 and lit_config.maxIndividualTestTimeIsSupported[0]:
    lit_config.maxIndividualTestTime = 1800

# Numerical tests run on Debian's python3 (numpy comes from python3-numpy) and
# import the package as this build staged it (python/CMakeLists.txt), with its
# native libraries, and the test helpers (`import rope_testing`) from
# test/lib/python. ROPE_BUILD_DIR: tests of rope-opt's printer run the build's.
python = "/usr/bin/python3"
config.environment["PYTHONPATH"] = os.pathsep.join(
    [os.path.join(config.rope_obj_root, "python_packages"),
     os.path.join(config.rope_src_root, "test", "lib", "python")])
config.environment["ROPE_BUILD_DIR"] = config.rope_obj_root
config.environment["PYTHONDONTWRITEBYTECODE"] = "1"
config.substitutions.append(("%python", python))
config.substitutions.append(("%rope_src_root", config.rope_src_root))
config.substitutions.append(
    ("%rope_capi_test", os.path.join(config.rope_tools_dir, "rope-capi-test")))
config.substitutions.append(("%rope_obj_root", config.rope_obj_root))
# Attention tests run once per CPU pipeline variant: the default (rotation
# folded into attention, online-softmax tiles), the plain lowering that
# materialises rotated Q/K and the S×S scores, and tiles so small that every
# test shape has many tiles, remainders and skipped causal tiles; and, with
# %gpu_mapping below, through the GPU pipeline's mapping run on the CPU.
config.substitutions.append(
    ("%plain_attention",
     'env ROPE_PIPELINE="--rope-lower-to-cpu=fold-rotation=false decompose-attention=false"'))
config.substitutions.append(
    ("%tiny_attention_tiles", 'env ROPE_PIPELINE="--rope-lower-to-cpu=query-tile=3 key-tile=5"'))
# Split-K: the keys split into partial states computed in parallel and merged
# exactly (PartialReductionOpInterface), with two and with five splits (the
# latter with key tiles of 3, so splits have several uneven tiles).
config.substitutions.append(
    ("%split_keys_2", 'env ROPE_PIPELINE="--rope-lower-to-cpu=split-keys=2"'))
config.substitutions.append(
    ("%split_keys_5", 'env ROPE_PIPELINE="--rope-lower-to-cpu=split-keys=5 key-tile=3"'))
# The GPU pipeline's mapping (streamed attention rows, one kernel per linalg
# op, buffers on the device) with its kernels run on the CPU (docs/gpu.md).
config.substitutions.append(
    ("%gpu_mapping", 'env ROPE_PIPELINE="--rope-test-gpu-mapping-on-cpu"'))


# Frontend tests (test/Frontends, docs/frontends.md) need torch, torch-mlir and
# transformers, which live in their own venv outside the checkout
# (utils/setup_frontends.sh; `make check` installs it). `torch`: that venv holds
# exactly utils/requirements-frontends.txt (its recorded hash matches) and
# imports; then %torch_python is its interpreter. Every other test keeps
# %python. Without it the tests that REQUIRE torch are UNSUPPORTED.
def _frontends_python():
    import hashlib
    import subprocess
    venv = os.environ.get("ROPE_FRONTENDS_VENV") or os.path.expanduser(
        "~/.cache/rope-mlir/venv-frontends")
    py = os.path.join(venv, "bin", "python")
    req = os.path.join(config.rope_src_root, "utils", "requirements-frontends.txt")
    try:
        with open(req, "rb") as f:
            want = hashlib.sha256(f.read()).hexdigest()
        with open(os.path.join(venv, ".rope-requirements.sha256")) as f:
            have = f.read().strip()
    except OSError:
        return None, f"no frontend environment at {venv} (run: bash utils/setup.sh --frontends)"
    if have != want:
        return None, (f"the frontend environment at {venv} was installed from another "
                      "utils/requirements-frontends.txt (run: bash utils/setup.sh --frontends)")
    probe = subprocess.run([py, "-c", "import torch, torch_mlir.fx, transformers"],
                           capture_output=True, text=True, timeout=600)
    if probe.returncode != 0:
        return None, f"{py} cannot import torch, torch_mlir, transformers: {probe.stderr[-300:]}"
    return py, None


torch_python, why_not = _frontends_python()
if torch_python:
    config.available_features.add("torch")
    config.substitutions.append(("%torch_python", torch_python))
else:
    lit_config.note(f"frontend tests (REQUIRES: torch) are UNSUPPORTED: {why_not}")
    config.substitutions.append(("%torch_python", "false"))
config.substitutions.append(("%mlir_lib_dir", config.mlir_lib_dir))


def _cpu_flags():
    """The host CPU's feature flags as Linux names them (amx_bf16, ...)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


# `amx`: the host multiplies bf16 on AMX tiles, so the tile-product tests run
# their compiled code (the rest of their RUN lines force other features).
if {"amx_tile", "amx_bf16"} <= _cpu_flags():
    config.available_features.add("amx")
# `avx512bf16`: the host has AVX-512 BF16 dot products (vdpbf16ps), the
# bf16 products' engine where it has no AMX tiles.
if {"avx512f", "avx512_bf16"} <= _cpu_flags():
    config.available_features.add("avx512bf16")
config.substitutions.append(("%rope_src_root", config.rope_src_root))
config.substitutions.append(
    ("%rope_capi_test", os.path.join(config.rope_tools_dir, "rope-capi-test")))
config.substitutions.append(("%rope_obj_root", config.rope_obj_root))
config.substitutions.append(
    ("%rope_plugin", os.path.join(config.rope_lib_dir, "libRopePlugin.so")))
# mlir-runner's -shared-libs for lowered code: MLIR's runner utils, OpenMP,
# our runtime (where failed runtime checks report) and the GPU emulator.
config.substitutions.append(
    ("%mlir_runner_utils",
     ",".join([os.path.join(config.mlir_lib_dir, lib)
               for lib in ("libmlir_runner_utils.so", "libmlir_c_runner_utils.so", "libomp.so")]
              + [os.path.join(config.rope_lib_dir, lib)
                 for lib in ("libRopeRuntime.so", "libRopeGpuEmulator.so")])))

tool_dirs = [config.rope_tools_dir, config.llvm_tools_dir]
tools = [
    "rope-opt",
    "rope-gpu-emulator-test",
    "rope-gpu-emulator-hopper-test",
    "not",
    ToolSubst("%mlir_opt", os.path.join(config.llvm_tools_dir, "mlir-opt")),
    "mlir-runner",
    "mlir-translate",
]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# GPU (docs/gpu.md). `cuda-toolkit`: the CUDA toolkit was found at configure
# time, so ptxas turns kernels into cubins and libRopeCudaRuntime.so is built.
# `cuda-device`: besides, an NVIDIA GPU answers through that runtime; the
# GPU numerical tests need it. Without one, the same test files still run
# compile-only (cubins for sm_90 and sm_80) and on the CPU through the
# emulated GPU mapping (test/Integration/GPU/*.test).
if config.rope_cuda_root:
    import subprocess
    config.available_features.add("cuda-toolkit")
    config.environment["CUDA_ROOT"] = config.rope_cuda_root
    # The recording stub of the driver (test/Runtime/CudaStub): on
    # LD_LIBRARY_PATH, GPU modules run their host side without a GPU.
    config.substitutions.append(
        ("%cuda_stub_dir", os.path.join(config.rope_obj_root, "test", "cuda-stub")))
    config.environment["PATH"] = os.pathsep.join(
        [os.path.join(config.rope_cuda_root, "bin"), config.environment.get("PATH", os.environ["PATH"])])
    probe = subprocess.run(
        [python, "-c", "from rope_mlir import cuda; print(cuda.device_count())"],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": config.environment["PYTHONPATH"],
             "ROPE_BUILD_DIR": config.rope_obj_root})
    if probe.returncode == 0 and probe.stdout.strip() not in ("", "0"):
        config.available_features.add("cuda-device")

# `cuda-sass`: the CUDA binary utilities (cuobjdump, nvdisasm) of the frontend
# environment, which disassemble our cubins for the SASS checks.
if torch_python and config.rope_cuda_root:
    binutils = subprocess.run(
        [torch_python, "-c", "import nvidia, os; print(os.path.join(nvidia.__path__[0], 'cu13', 'bin'))"],
        capture_output=True, text=True, timeout=120).stdout.strip()
    if binutils and all(os.access(os.path.join(binutils, t), os.X_OK) for t in ("cuobjdump", "nvdisasm")):
        config.available_features.add("cuda-sass")
        config.environment["ROPE_CUDA_BINUTILS"] = binutils
    else:
        lit_config.note("SASS checks (REQUIRES: cuda-sass) are UNSUPPORTED: no cuobjdump/nvdisasm "
                        "in the frontend environment")

# Reliability (docs/reliability.md).
# `format-check`: clang-format 22 (Debian's clang-format-22) and the git history
# back to utils/format-base, which test/Style's check of changed lines needs
# (a checkout without history, e.g. a source tarball, has nothing to compare).
def _format_check_possible():
    import shutil
    import subprocess
    if not os.path.exists("/usr/lib/llvm-22/bin/clang-format") and not shutil.which("clang-format-22"):
        return "no clang-format 22 (Debian: clang-format-22)"
    try:
        with open(os.path.join(config.rope_src_root, "utils", "format-base")) as f:
            base = f.read().split()[0]
        found = subprocess.run(["git", "-C", config.rope_src_root, "cat-file", "-e", base + "^{commit}"],
                               capture_output=True, timeout=60).returncode == 0
    except (OSError, IndexError, subprocess.SubprocessError):
        found = False
    return None if found else "no git history back to utils/format-base"


why_no_format_check = _format_check_possible()
if why_no_format_check:
    lit_config.note(f"the format check (REQUIRES: format-check) is UNSUPPORTED: {why_no_format_check}")
else:
    config.available_features.add("format-check")

# `fuzzer`: the build has tools/rope-fuzz (-DROPE_ENABLE_FUZZER=ON); the
# bounded run in test/fuzz/ lasts %fuzz_seconds (ROPE_FUZZ_SECONDS, 60).
rope_fuzz = os.path.join(config.rope_tools_dir, "rope-fuzz")
if os.path.exists(rope_fuzz):
    config.available_features.add("fuzzer")
    config.substitutions.append(("%rope_fuzz", rope_fuzz))
config.substitutions.append(("%fuzz_seconds", os.environ.get("ROPE_FUZZ_SECONDS", "60")))

# `asan`: our code is built with ASan+UBSan (-DROPE_ENABLE_SANITIZERS=ON,
# `make check-sanitize`). Sanitizer options default to stopping at the first
# report; allow_user_poisoning=0 because LLVM's BumpPtrAllocator, inline in
# headers, poisons slabs in our (instrumented) copies of it but not in the
# uninstrumented libMLIR.so, which would give false use-after-poison reports.
# The stock mlir-opt is not instrumented, so it loads the (instrumented)
# plugin with the ASan runtime preloaded.
def _cmake_cache_flag(name):
    try:
        with open(os.path.join(config.rope_obj_root, "CMakeCache.txt")) as cache:
            return any(line.strip().upper() in (f"{name}:BOOL=ON", f"{name}:BOOL=TRUE")
                       for line in cache)
    except OSError:
        return False


if _cmake_cache_flag("ROPE_ENABLE_SANITIZERS"):
    import subprocess
    config.available_features.add("asan")
    config.environment.setdefault(
        "ASAN_OPTIONS", "allow_user_poisoning=0:halt_on_error=1:print_stacktrace=1:detect_leaks=1")
    config.environment.setdefault("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1")
    asan_rt = subprocess.run(
        [os.path.join(config.llvm_tools_dir, "clang"), "-print-file-name=libclang_rt.asan-x86_64.so"],
        capture_output=True, text=True).stdout.strip()
    config.substitutions.insert(
        0, ("%mlir_opt", f"env LD_PRELOAD={asan_rt} {os.path.join(config.llvm_tools_dir, 'mlir-opt')}"))
    # Python compiles in process through the (instrumented) libRopeCAPI.so:
    # it runs with the runtime preloaded too, without leak checks (CPython
    # keeps its objects at exit). rope_testing.tool_env() drops the
    # preload for the tools a test starts (rope-opt has its own runtime).
    python_options = config.environment["ASAN_OPTIONS"].replace("detect_leaks=1", "detect_leaks=0")
    for name in ("%torch_python", "%python"):
        for i, (pattern, value) in enumerate(config.substitutions):
            if pattern == name and value != "false":
                config.substitutions[i] = (
                    pattern, f"env LD_PRELOAD={asan_rt} ASAN_OPTIONS={python_options} {value}")
