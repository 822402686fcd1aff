# REQUIRES: amx || avx512bf16
# RUN: %if amx %{ %python %s host ROPE_CPU_TILES | FileCheck %s --check-prefix=TILES %}
# RUN: %if avx512bf16 %{ %python %s host,-amx-bf16,-amx-fp16 ROPE_CPU_DOT_PRODUCTS | FileCheck %s --check-prefix=DOT %}
"""A shared library compiled here for a matrix engine (AMX tiles, or AVX-512
BF16 dot products), loaded where the engine is missing, refuses to run with
a clear error (RuntimeCheckError) rather than an illegal instruction: each
function on an engine first calls its check (ropeRequireCpuTiles,
ropeRequireCpuDotProducts in libRopeRuntime.so). A machine without the
engine is stood in for by the variable that masks it (argv: cpu-features,
then ROPE_CPU_TILES or ROPE_CPU_DOT_PRODUCTS) set to 0 in a child process,
which the runtime reads at the first call; the same library then runs in a
child without it.
"""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import rope_testing as T
from rope_mlir import _abi

MODULE = """
func.func @projection(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>) -> tensor<?x64xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %s = tensor.dim %x, %c0 : tensor<?x64xbf16>
  %e = tensor.empty(%s) : tensor<?x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x64xf32>) -> tensor<?x64xf32>
  %r = linalg.matmul ins(%x, %w : tensor<?x64xbf16>, tensor<64x64xbf16>) outs(%z : tensor<?x64xf32>) -> tensor<?x64xf32>
  return %r : tensor<?x64xf32>
}"""

CHILD = """
import sys
import numpy as np
from rope_mlir.errors import RuntimeCheckError
from rope_mlir.module import SharedLibraryModule
from rope_mlir import _abi
from pathlib import Path
lib = SharedLibraryModule(Path(sys.argv[1]), _abi.parse_signatures(Path(sys.argv[2]).read_text()))
x = np.zeros((40, 64), np.uint16)
w = np.zeros((64, 64), np.uint16)
try:
    out = lib.call("projection", x, w)
    print("ran:", out.shape)
except RuntimeCheckError as e:
    print("refused:", e)
"""

FEATURES, MASK = sys.argv[1], sys.argv[2]

with tempfile.TemporaryDirectory() as folder:
    path = Path(folder) / "tiles.so"
    lib = T.compile(MODULE, output=path, pipeline_options={"cpu-features": FEATURES})
    signatures = Path(folder) / "tiles.json"
    signatures.write_text(_abi.signatures_json(lib.functions))
    for setting in ("0", None):
        env = dict(os.environ)
        env.pop(MASK, None)
        if setting is not None:
            env[MASK] = setting
        child = subprocess.run([sys.executable, "-c", CHILD, str(path), str(signatures)], env=env,
                               capture_output=True, text=True)
        print(f"{MASK}={setting}: exit {child.returncode}: {child.stdout.strip()}",
              child.stderr.strip()[-500:])

# TILES: ROPE_CPU_TILES=0: exit 0: refused: {{.*}}this function was compiled for AMX tiles (amx-tile, amx-bf16), which the host CPU lacks; compile it for this host
# TILES: ROPE_CPU_TILES=None: exit 0: ran: (40, 64)
# DOT: ROPE_CPU_DOT_PRODUCTS=0: exit 0: refused: {{.*}}this function was compiled for AVX-512 BF16 dot products (avx512f, avx512bf16), which the host CPU lacks; compile it for this host
# DOT: ROPE_CPU_DOT_PRODUCTS=None: exit 0: ran: (40, 64)
