# REQUIRES: cuda-toolkit
# RUN: %python %s | FileCheck %s
"""rope_mlir.cuda without a GPU: the ahead-of-time kernel folder that GPU
machines (no LLVM) load from, and the errors a machine without a GPU gets.

* compiling for target="cuda" with output=FOLDER puts `<key>.so`, its
  signatures `<key>.json`, a copy of the runtimes and the compiler's stamp
  there; the key changes with the module text and with the chip;
* with prebuilt_only a module is found without compiling (the compiler is
  made unreachable to prove it) and a missing one is a clear error naming
  `make gpu-bundle`; signatures come from the folder;
* a different compiler build compiling into the folder removes the kernels
  of the old one (the key cannot tell builds apart);
* the cached library links only the runtime (no LLVM library), and the
  bundle's runtime depends on nothing of LLVM either;
* without a GPU (or on a machine with a GPU: with one, this part is skipped)
  device_count() is 0 and loading a module raises instead of aborting.
"""

import dataclasses
import subprocess
import sys
import tempfile
from pathlib import Path

from rope_mlir import _abi, _capi, compiler, cuda
import rope_testing as T

cache = Path(tempfile.mkdtemp(prefix="rope-kernel-cache-"))
options = compiler.CompileOptions(target="cuda", output=cache)
text = T.rotate_module("#rope.spec<>", "tensor<1x2x4x8xf32>", "tensor<4xi64>")

first = cuda.build(text, options)
assert first.parent == cache and first.suffix == ".so", first
print("CACHED", sorted(p.name if p.name.startswith(("lib", "compiler")) else "<key>" + p.suffix
                       for p in cache.iterdir()))
assert cuda.build(text, options) == first, "same text, same key"
other_chip = cuda.build(text, dataclasses.replace(options, chip="sm_80"))
other_text = cuda.build(text.replace("#rope.spec<>", "#rope.spec<base = 500.0>"), options)
assert len({first, other_chip, other_text}) == 3, "chip and text are part of the key"
print("KEYS distinct")

# Prebuilt only: the compiler must not be needed.
prebuilt = dataclasses.replace(options, prebuilt_only=True)
real_capi = _capi.capi
_capi.capi = lambda: (_ for _ in ()).throw(AssertionError("the compiler was used"))
assert cuda.build(text, prebuilt) == first
functions = _abi.parse_signatures(first.with_suffix(".json").read_text())
assert str(functions["kernel"].inputs[0]) == "tensor<1x2x4x8xf32>", functions
print("PREBUILT found without compiling:", functions["kernel"].inputs[0].name)
try:
    cuda.build(text.replace("1x2x4x8", "1x2x4x16"), prebuilt)
    raise AssertionError("a missing module must be an error")
except compiler.CompileError as e:
    assert "make gpu-bundle" in str(e), e
    print("PREBUILT missing:", str(e).split(" (")[0].split(" is ")[1])
_capi.capi = real_capi

# Another compiler build: the old kernels go.
(cache / "compiler").write_text("another build")
cuda.build(text, options)
assert not other_text.exists() and not other_chip.exists() and first.exists()
print("STALE kernels removed")

needed = subprocess.run(["readelf", "-d", str(first)], capture_output=True, text=True).stdout
libs = sorted(l.split("[")[1].rstrip("]") for l in needed.splitlines() if "(NEEDED)" in l)
print("NEEDED", libs)
rt_needed = subprocess.run(["readelf", "-d", str(cache / "libRopeCudaRuntime.so")],
                           capture_output=True, text=True).stdout
assert "LLVM" not in rt_needed and "MLIR" not in rt_needed, rt_needed
assert "libcuda.so.1" in rt_needed
errors_needed = subprocess.run(["readelf", "-d", str(cache / "libRopeRuntime.so")],
                               capture_output=True, text=True).stdout
errors_libs = sorted(l.split("[")[1].rstrip("]") for l in errors_needed.splitlines()
                     if "(NEEDED)" in l)
assert all(l.startswith(("libc.so", "ld-linux")) for l in errors_libs), errors_libs
print("RUNTIME needs the driver only")

if cuda.device_count() == 0:
    try:
        cuda.load(first)
        raise AssertionError("loading without a GPU must raise")
    except RuntimeError as e:
        print("NO GPU:", str(e).split(":")[0])
else:
    print("NO GPU: no CUDA device")  # a GPU answered; nothing to check here
sys.stdout.flush()

# CHECK: CACHED ['<key>.json', '<key>.so', 'compiler', 'libRopeCudaRuntime.so', 'libRopeRuntime.so']
# CHECK: KEYS distinct
# CHECK: PREBUILT found without compiling: %x
# CHECK: PREBUILT missing: not in the kernel folder {{.*}}rope-kernel-cache-
# CHECK: STALE kernels removed
# CHECK: NEEDED ['libRopeCudaRuntime.so', 'libRopeRuntime.so', 'libc.so.6', 'libm.so.6']
# CHECK: RUNTIME needs the driver only
# CHECK: NO GPU: no CUDA device
