#!/usr/bin/env python3
"""Checks the #include lines of rope-mlir against its layering.

    check_layering.py [ROOT]

ROOT (default: the checkout this script is in) holds cmake/RopeLayering.cmake,
the table of layers and what each may use, which CMake also enforces on the
libraries' dependencies. This script enforces it on the sources:

  * a file of layer L includes headers of L or of a layer L may use only;
  * the table lists a layer's uses before the layer (so it has no cycle);
  * the folders' include graph has no cycle (e.g. the dialect's IR/ and its
    Transforms/ including each other), within a layer as across layers.

Prints each violation and exits 1, else prints a one-line summary.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

SOURCE_SUFFIXES = {".h", ".cpp", ".c", ".td"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"|^\s*include\s+"([^"]+)"', re.M)
LAYER_LINE = re.compile(r"^rope_layer\((\w+)(?:\s+USES\s+([\w\s]+))?\)", re.M)


def read_layers(root: Path) -> tuple[dict[str, list[str]], list[str]]:
    """The layers in declaration order with what each uses, and the table's
    own problems."""
    text = (root / "cmake" / "RopeLayering.cmake").read_text()
    uses: dict[str, list[str]] = {}
    problems = []
    for name, used in LAYER_LINE.findall(text):
        used = used.split()
        for u in used:
            if u not in uses:
                problems.append(f"cmake/RopeLayering.cmake: {name} uses {u}, "
                                "which is not declared before it")
        uses[name] = [name] + used
    return uses, problems


def layer_of_path(rel: str) -> str | None:
    """The layer of a source file or of an included header, by its folder."""
    parts = rel.split("/")
    if parts[0] == "test" and parts[1:2] == ["lib"]:
        return "Test"
    if parts[0] == "tools":
        return "Tools"
    if parts[0] in ("include", "lib") and len(parts) > 2:
        if parts[0] == "include" and parts[1] == "rope-c":
            return "CAPI"
        layer = parts[2] if parts[0] == "include" else parts[1]
        return layer if parts[0] == "lib" or parts[1] == "rope" else None
    return None


def header_path(root: Path, source: Path, include: str) -> str | None:
    """The repository path of a header `source` includes, when it is ours."""
    # A private header is included relative to the including file's folder
    # or to a folder above it in the same component (lib/Codegen/GPU's
    # subfolders include "common/KernelOperands.h").
    here = [source.parent, *[p for p in source.parent.parents if root in p.parents]]
    for base in (root / "include", *here, root / "test" / "lib"):
        candidate = base / include
        if candidate.is_file():
            return candidate.relative_to(root).as_posix()
    if include.startswith("rope/"):  # generated (.inc) next to its .td
        return "include/" + include
    return None


# How many folders deep a component is: lib/Dialect/Rope/IR (the dialect's
# IR and its transforms are two), lib/Codegen/CPU, else lib/<layer> (a
# layer's Passes.h may gather its subfolders' headers, as upstream's do).
COMPONENT_DEPTH = {"Dialect": 4, "Codegen": 3}


def folder(rel: str) -> str:
    """The component a file belongs to; a header belongs with its sources
    (include/rope/X/Y -> lib/X/Y) so that the graph is by component."""
    parent = rel.rsplit("/", 1)[0]
    if parent.startswith("include/rope/"):
        parent = "lib/" + parent[len("include/rope/"):]
    elif parent.startswith("include/rope-c"):
        parent = "lib/CAPI"
    parts = parent.split("/")
    if parts[0] != "lib" or len(parts) < 2:
        return parent
    return "/".join(parts[:COMPONENT_DEPTH.get(parts[1], 2)])


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of `graph` (a list of nodes, first == last), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for succ in sorted(graph.get(node, ())):
            if state.get(succ) == 1:
                return stack[stack.index(succ):] + [succ]
            if succ not in state:
                found = visit(succ)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def main(argv: list[str]) -> int:
    root = Path(argv[1]).resolve() if len(argv) > 1 else Path(__file__).resolve().parents[1]
    uses, problems = read_layers(root)
    files = [p for top in ("include", "lib", "test/lib", "tools")
             for p in sorted((root / top).rglob("*")) if p.suffix in SOURCE_SUFFIXES]
    folders: dict[str, set[str]] = {}
    includes = 0
    for path in files:
        rel = path.relative_to(root).as_posix()
        layer = layer_of_path(rel)
        if layer is None:
            continue
        if layer not in uses:
            problems.append(f"{rel}: layer {layer} is not in cmake/RopeLayering.cmake")
            continue
        for match in INCLUDE.finditer(path.read_text(errors="replace")):
            include = match.group(1) or match.group(2)
            target = header_path(root, path, include)
            if target is None:
                continue
            includes += 1
            target_layer = layer_of_path(target)
            if target_layer and target_layer not in uses[layer]:
                line = path.read_text(errors="replace")[:match.start()].count("\n") + 1
                problems.append(f"{rel}:{line}: {layer} may not include {include} "
                                f"({target_layer}); {layer} may use: "
                                + ", ".join(uses[layer]))
            if folder(target) != folder(rel):
                folders.setdefault(folder(rel), set()).add(folder(target))
    cycle = find_cycle(folders)
    if cycle:
        problems.append("include cycle between folders: " + " -> ".join(cycle))
    for problem in problems:
        print(problem)
    if problems:
        print(f"layering: {len(problems)} problem(s)")
        return 1
    print(f"layering: {len(files)} files, {includes} includes of our headers, "
          f"{len(uses)} layers, no violation, no cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
