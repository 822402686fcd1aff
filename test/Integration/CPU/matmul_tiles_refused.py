# REQUIRES: amx
# RUN: %python %s | FileCheck %s
"""A shared library compiled here with AMX tiles, loaded where the tiles
are missing, refuses to run with a clear error (RuntimeCheckError) rather
than an illegal instruction: each function on tiles first calls
ropeRequireCpuTiles (libRopeRuntime.so). A machine without AMX is stood in
for by ROPE_CPU_TILES=0 in a child process, which the runtime reads at the
first call; the same library then runs in a child without it.
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

with tempfile.TemporaryDirectory() as folder:
    path = Path(folder) / "tiles.so"
    lib = T.compile(MODULE, output=path, pipeline_options={"cpu-features": "host"})
    signatures = Path(folder) / "tiles.json"
    signatures.write_text(_abi.signatures_json(lib.functions))
    for setting in ("0", None):
        env = dict(os.environ)
        env.pop("ROPE_CPU_TILES", None)
        if setting is not None:
            env["ROPE_CPU_TILES"] = setting
        child = subprocess.run([sys.executable, "-c", CHILD, str(path), str(signatures)], env=env,
                               capture_output=True, text=True)
        print(f"ROPE_CPU_TILES={setting}: exit {child.returncode}: {child.stdout.strip()}",
              child.stderr.strip()[-500:])

# CHECK: ROPE_CPU_TILES=0: exit 0: refused: {{.*}}this function was compiled for AMX tiles (amx-tile, amx-bf16), which the host CPU lacks; compile it for this host
# CHECK: ROPE_CPU_TILES=None: exit 0: ran: (40, 64)
