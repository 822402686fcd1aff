# RUN: %python %s %rope_src_root/python/rope_mlir | FileCheck %s
"""The layering of the rope_mlir package.

(a) Its modules import each other without a cycle. Every module is parsed
    (ast) and each import in it is an edge, wherever it is: at the top, inside
    a function (a lazy import is still a dependency) or under a condition.
    `from . import name` is an edge to the submodule `name`, or to the
    package's __init__ when `name` is not a module. A cycle fails the test
    and is printed. The checker first proves itself on a small package with
    a lazy import cycle.
(b) `import rope_mlir` in a fresh interpreter imports no test code (neither
    rope_testing, on PYTHONPATH in the lit suite, nor any module under
    test/) and loads no native library (none of libRope*, libMLIR, MLIR's
    runner utils or OpenMP in /proc/self/maps): the C API is loaded by the
    first call that needs it.
"""

import ast
import json
import subprocess
import sys
import tempfile
from pathlib import Path

PACKAGE = "rope_mlir"


def module_name(path: Path, package: str) -> str:
    return package if path.stem == "__init__" else f"{package}.{path.stem}"


def imports(path: Path, package: str, modules: set) -> set:
    """The modules of `package` that the module at `path` imports."""
    name = module_name(path, package)
    # The package a relative import starts from (for a flat package: itself).
    here = name if path.stem == "__init__" else name.rpartition(".")[0]
    found = set()

    def add(target: str):
        if target in modules and target != name:
            found.add(target)

    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                # `import rope_mlir.a.b` runs rope_mlir.a and rope_mlir.a.b.
                for i in range(2, len(parts) + 1):
                    add(".".join(parts[:i]))
                if alias.name == package:
                    add(package)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")
                base = base[:len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source != package and not source.startswith(package + "."):
                continue
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                add(submodule if submodule in modules else source)
    return found


def graph(folder: Path, package: str) -> dict:
    files = sorted(folder.glob("*.py"))
    modules = {module_name(f, package) for f in files}
    return {module_name(f, package): imports(f, package, modules) for f in files}


def find_cycle(edges: dict) -> list | None:
    """A cycle of `edges` as [a, b, ..., a], or None."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for succ in sorted(edges.get(node, ())):
            if state.get(succ) == "open":
                return stack[stack.index(succ):] + [succ]
            if succ not in state:
                cycle = visit(succ)
                if cycle:
                    return cycle
        state[node] = "done"
        stack.pop()
        return None

    for node in sorted(edges):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


# The checker on a package with a lazy cycle: a -> b at the top, b -> a in a
# function (through `from . import a`), c -> the __init__, which imports a.
with tempfile.TemporaryDirectory() as tmp:
    demo = Path(tmp)
    (demo / "__init__.py").write_text("from .a import f\n")
    (demo / "a.py").write_text("from . import b\n\ndef f():\n    return b.g()\n")
    (demo / "b.py").write_text("def g():\n    from .a import f\n    return f\n")
    (demo / "c.py").write_text("import numpy\nfrom demo import f\n")
    demo_edges = graph(demo, "demo")
    assert demo_edges == {"demo": {"demo.a"}, "demo.a": {"demo.b"}, "demo.b": {"demo.a"},
                          "demo.c": {"demo"}}, demo_edges
    assert find_cycle(demo_edges) == ["demo.a", "demo.b", "demo.a"], find_cycle(demo_edges)
    (demo / "b.py").write_text("def g():\n    return 1\n")
    assert find_cycle(graph(demo, "demo")) is None
print("CHECKER finds a lazy import cycle")
# CHECK: CHECKER finds a lazy import cycle

# (a) The package itself.
folder = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "python" / PACKAGE
edges = graph(folder, PACKAGE)
assert len(edges) > 5, f"no package at {folder}: {sorted(edges)}"
for module in sorted(edges):
    short = sorted(m.removeprefix(PACKAGE + ".") for m in edges[module])
    print(f"  {module.removeprefix(PACKAGE + '.')} -> {', '.join(short) or '-'}")
cycle = find_cycle(edges)
if cycle:
    print("CYCLE " + " -> ".join(cycle))
    sys.exit(1)
print(f"ACYCLIC {len(edges)} modules")
# CHECK-NOT: CYCLE
# CHECK: ACYCLIC {{[0-9]+}} modules

# Nor does any module of the package name the test helpers.
for path in sorted(folder.glob("*.py")):
    for node in ast.walk(ast.parse(path.read_text())):
        names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                 else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
        assert not any(n.split(".")[0] in ("rope_testing", "test") for n in names), (path, names)
print("NO TEST IMPORTS in the sources")
# CHECK: NO TEST IMPORTS in the sources

# (b) What `import rope_mlir` does, in a fresh interpreter.
PROBE = r"""
import json, sys
from pathlib import Path
import rope_mlir
test_root = Path(sys.argv[1]).resolve()
test_modules = sorted(
    name for name, m in list(sys.modules.items())
    if name == "rope_testing" or name.startswith("rope_testing.")
    or test_root in Path(getattr(m, "__file__", None) or "/").resolve().parents)
native = sorted({line.split()[-1].rsplit("/", 1)[-1]
                 for line in Path("/proc/self/maps").read_text().splitlines()
                 if any(lib in line for lib in ("libRope", "libMLIR", "mlir_c_runner_utils",
                                                "mlir_runner_utils", "libomp"))})
from rope_mlir import _capi, _native
print(json.dumps({"test_modules": test_modules, "native": native,
                  "loaded": _native.load_global.cache_info().currsize
                            + _capi.capi.cache_info().currsize}))
"""
test_root = Path(__file__).resolve().parents[1]
probe = subprocess.run([sys.executable, "-c", PROBE, str(test_root)], capture_output=True,
                       text=True, cwd=tempfile.gettempdir())
assert probe.returncode == 0, probe.stderr
result = json.loads(probe.stdout)
assert result == {"test_modules": [], "native": [], "loaded": 0}, result
print("IMPORT rope_mlir: no test code, no native library")
# CHECK: IMPORT rope_mlir: no test code, no native library
