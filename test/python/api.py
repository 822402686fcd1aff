# RUN: rm -rf %t && mkdir -p %t && %python %s %t | FileCheck %s
"""The package's public API: rope_mlir.compile and what it returns.

* a module's functions are attributes and `call`s, with their signatures
  (argument names from the source);
* options as keywords or a CompileOptions: pipeline options of the target
  (query_tile), an explicit pipeline (textual or rope-opt's flags), opt_level;
  bad options are ValueErrors naming the option;
* compile errors raise CompileError with MLIR's diagnostics at their
  locations (the source's name and line:col);
* ahead of time into a shared library where the caller says (output=);
* `lower` runs a pipeline in process and returns text.
Results are checked against the f64 reference (2 ulps of f32 at the pair
norm, rope_testing.rotation_atol).
"""

import sys
from pathlib import Path

import numpy as np

import rope_mlir
from rope_mlir import reference as ref
import rope_testing as T

out_dir = Path(sys.argv[1])
spec = rope_mlir.RotarySpec(scaling=rope_mlir.Scaling("linear", factor=2.0))
text = T.rotate_module(spec.to_attr(), "tensor<1x2x?x16xf32>", "tensor<?xi64>", name="rot")
x = T.rng(0).standard_normal((1, 2, 5, 16)).astype(np.float32)
p = np.arange(5) * 37
expected = ref.rotate(x.astype(np.float64), p, spec)
atol = T.rotation_atol(x, spec)


def check(name, out):
    T.check(out, expected, atol, name)


module = rope_mlir.compile(text)
print("FUNCTIONS", {n: (list(map(str, f.inputs)), [a.name for a in f.inputs])
                    for n, f in module.functions.items()})
check("attribute call", module.rot(x, p))
check("call", module.call("rot", x, p))
assert "rot" in dir(module)
try:
    module.missing
except AttributeError as e:
    print("NO ATTRIBUTE", e)

# Options.
check("query_tile keyword", rope_mlir.compile(text, query_tile=3, runtime_checks=False).rot(x, p))
check("textual pipeline", rope_mlir.compile(text, pipeline="rope-lower-to-cpu{key-tile=4}").rot(x, p))
check("flag pipeline", rope_mlir.compile(text, pipeline="--rope-lower-to-cpu=key-tile=4").rot(x, p))
options = rope_mlir.CompileOptions(opt_level=0)
check("CompileOptions", rope_mlir.compile(text, options=options).rot(x, p))
for bad in [dict(target="tpu"), dict(opt_level=7),
            dict(pipeline="rope-lower-to-cpu", query_tile=3)]:
    try:
        rope_mlir.compile(text, **bad)
        print("ACCEPTED", bad)
    except ValueError as e:
        print("BAD OPTION", str(e).split(":")[0])

# Compile errors: diagnostics with locations.
broken = """func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %p = arith.constant dense<0> : tensor<3xi64>
  %r = rope.rotate %x, %p rotary(#rope.spec<>) : tensor<4xf32>, tensor<3xi64>
  return %r : tensor<4xf32>
}
"""
try:
    rope_mlir.compile(broken, source_name="broken.mlir")
    print("COMPILED the broken module")
except rope_mlir.CompileError as e:
    d = e.diagnostics[0]
    print("DIAGNOSTIC", d.severity, d.location)
    print(str(e).splitlines()[1])
path = out_dir / "unknown_op.mlir"
path.write_text("func.func @f() {\n  rope.bogus\n  return\n}\n")
try:
    rope_mlir.compile(path)
except rope_mlir.CompileError as e:
    print("FROM FILE", str(e.diagnostics[0]).replace(str(out_dir), "DIR"))
try:
    rope_mlir.compile(text, pipeline="no-such-pass")
except rope_mlir.CompileError as e:
    print("PIPELINE", e.diagnostics[0].message.splitlines()[0].split(":")[0])

# Ahead of time, where the caller says.
library = out_dir / "rot.so"
aot = rope_mlir.compile(text, output=library)
check("ahead of time", aot.rot(x, p))
print("AOT", sorted(f.name for f in out_dir.iterdir()))

# lower(): text back.
lowered = rope_mlir.lower(text, "--rope-lower-to-cpu=runtime-checks=false")
print("LOWERED", "llvm.func @_mlir_ciface_rot" in lowered)

# lower() hands back the passes' remarks: the raise's near miss says why.
masks = (Path(__file__).parent.parent / "Raising" / "raise-attention-masks.mlir").read_text()
near_miss = next(c for c in masks.split("// -----") if "@no_raise_transposed_mask" in c)
remarks = []
rope_mlir.lower(near_miss, "--rope-raise=report=true", remarks=remarks)
print("REMARKS", [(r.severity, r.message) for r in remarks])
T.finish()
print("DONE")

# CHECK: FUNCTIONS {'rot': (['tensor<1x2x?x16xf32>', 'tensor<?xi64>'], ['%x', '%p'])}
# CHECK: NO ATTRIBUTE
# CHECK-NOT: ACCEPTED
# CHECK: BAD OPTION target
# CHECK: BAD OPTION opt_level
# CHECK: BAD OPTION pipeline_options
# CHECK: DIAGNOSTIC error broken.mlir:3:8
# CHECK: broken.mlir:3:8: error: 'rope.rotate' op
# CHECK: FROM FILE DIR/unknown_op.mlir:2:3: error: custom op 'rope.bogus' is unknown
# CHECK: PIPELINE invalid pass pipeline 'no-such-pass'
# CHECK: AOT ['rot.so', 'unknown_op.mlir']
# CHECK: LOWERED True
# CHECK: REMARKS [('remark', 'rope-raise: attention not raised: the mask is not read as [B, H, Sq, Sk]')]
# CHECK: DONE
