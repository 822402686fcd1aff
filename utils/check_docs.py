#!/usr/bin/env python3
"""Checks the hand-written docs against the code (test/docs/docs-match-code.test).

    python3 utils/check_docs.py [REPO_ROOT]

The docs are README.md, docs/*.md (not the generated docs/Passes/ and
docs/Dialects/), benchmarks/README.md and test/Frontends/README.md.

  names     every pass or pipeline name in code (`rope-...` in backticks or in
            a fenced block, also `convert-rope-to-linalg`) is declared in a
            Passes.td (include/, test/lib/) or registered as a pipeline
            (PassPipelineRegistration in lib/, test/lib/); tools, CMake
            targets and the project's own name are also allowed.
  layers    docs/architecture.md names every layer of lib/ (each folder of
            lib/ that holds sources) as `lib/<folder>`, and every module of
            python/rope_mlir as `<module>.py`.
  defaults  docs/pipelines.md has a section per pipeline registered in lib/
            (a heading naming it in backticks) whose table gives each option
            of its options struct in include/rope/Pipelines/Pipelines.h with
            the default of its `llvm::cl::init(...)`, and no other option.
  passes    docs/pipelines.md's pass table (rows `| `name` | ...`) lists every
            pass declared in a Passes.td of include/ or test/lib, and no
            pass that is not declared.
  links     every relative link resolves to a file or folder of the checkout,
            and its #anchor, if any, to a heading of the target page.
  paths     every repository path written as code (`lib/...`, `test/...`,
            `python/...`, ...) exists.
  layering  the table of allowed dependencies in docs/architecture.md (the
            `| layer | may use |` table) is cmake/RopeLayering.cmake's.
  readme    README.md has at most 200 lines and no table cell over 300
            characters.

Prints each problem as FILE:LINE: message and exits 1 if there was any.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent).resolve()

problems: list[str] = []


def problem(path: Path, line: int, message: str) -> None:
    problems.append(f"{path.relative_to(ROOT)}:{line}: {message}")


def docs() -> list[Path]:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
             ROOT / "benchmarks" / "README.md", ROOT / "test" / "Frontends" / "README.md"]
    return [f for f in files if f.exists()]


def sources(*folders: str, pattern: str) -> list[Path]:
    out = []
    for folder in folders:
        base = ROOT / folder
        if base.exists():
            out += sorted(p for p in base.rglob(pattern) if p.is_file())
    return out


# --- What a doc holds: code (spans and fenced blocks) and prose, by line ---

FENCE = re.compile(r"^\s*(```|~~~)")
SPAN = re.compile(r"(`+)(.+?)\1")


def code_and_prose(path: Path):
    """Yields (line number, code pieces, prose) for each line: the code spans
    (or the whole line inside a fenced block) and the line without them."""
    fenced = False
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            yield n, [], ""
            continue
        if fenced:
            yield n, [line], ""
            continue
        spans = [m.group(2) for m in SPAN.finditer(line)]
        yield n, spans, SPAN.sub("", line)


# --- names ---

NAME = re.compile(r"(?<![\w./-])-{0,2}((?:[a-z0-9]+-)*rope-[a-z0-9]+(?:-[a-z0-9]+)*)")


def known_names() -> tuple[set[str], set[str]]:
    """(pass and pipeline names, other names: tools, targets, the project)."""
    passes = set()
    for td in sources("include", "test/lib", pattern="*.td"):
        passes |= set(re.findall(r'Pass<\s*"([^"]+)"', td.read_text(encoding="utf-8")))
    for cpp in sources("lib", "test/lib", "tools", pattern="*.cpp"):
        text = cpp.read_text(encoding="utf-8", errors="replace")
        passes |= set(re.findall(r'PassPipelineRegistration<[^>]*>\s*(?:\w+\s*)?\(\s*"([^"]+)"', text))
        passes |= set(re.findall(r'getArgument\(\)[^{;]*\{\s*return\s*"([^"]+)"', text))
    other = {p.name for p in (ROOT / "tools").iterdir() if p.is_dir()}
    cmake = sources(".", pattern="CMakeLists.txt") + sources("cmake", pattern="*.cmake")
    for f in cmake:
        if "build" in f.relative_to(ROOT).parts[:1]:
            continue
        other |= set(re.findall(
            r"\b(?:add_custom_target|add_executable|add_llvm_executable|add_mlir_tool|"
            r"add_llvm_tool|add_lit_testsuite)\(\s*([\w-]+)", f.read_text(encoding="utf-8")))
    project = re.search(r'^name\s*=\s*"([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M)
    if project:
        other.add(project.group(1))
    return passes, other


def check_names(passes: set[str], other: set[str]) -> int:
    count = 0
    for doc in docs():
        for n, code, _ in code_and_prose(doc):
            for piece in code:
                for m in NAME.finditer(piece):
                    name = m.group(1)
                    count += 1
                    if name not in passes and name not in other:
                        problem(doc, n, f"`{name}` is no pass or pipeline of the code "
                                        "(nor a tool, CMake target or the project)")
    return count


# --- layers ---

def check_layers() -> int:
    arch = ROOT / "docs" / "architecture.md"
    if not arch.exists():
        problem(ROOT / "docs", 0, "docs/architecture.md is missing")
        return 0
    text = arch.read_text(encoding="utf-8")
    layers = sorted({p.parent.relative_to(ROOT).as_posix()
                     for p in (ROOT / "lib").rglob("*") if p.suffix in (".cpp", ".c")
                     and p.parent != ROOT / "lib"})
    for layer in layers:
        if not re.search(re.escape(layer) + r"(?![\w])", text):
            problem(arch, 0, f"does not mention the layer `{layer}`")
    modules = sorted(p.name for p in (ROOT / "python" / "rope_mlir").glob("*.py"))
    for module in modules:
        if f"`{module}`" not in text:
            problem(arch, 0, f"does not mention the Python module `{module}`")
    return len(layers) + len(modules)


# --- defaults ---

def balanced(text: str, start: int, open_="(", close=")") -> str:
    """The text inside the bracket that opens at `start`."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == open_:
            depth += 1
        elif text[i] == close:
            depth -= 1
            if depth == 0:
                return text[start + 1:i]
    return text[start + 1:]


def pipeline_options() -> dict[str, dict[str, str]]:
    """Options struct name -> {option: default}, from Pipelines.h."""
    header = ROOT / "include" / "rope" / "Pipelines" / "Pipelines.h"
    text = re.sub(r"//[^\n]*", "", header.read_text(encoding="utf-8"))
    structs: dict[str, tuple[list[str], dict[str, str]]] = {}
    for m in re.finditer(r"\bstruct\s+(\w+)\s*(?:final\s*)?:\s*([^{;]+)\{", text):
        body = balanced(text, m.end() - 1, "{", "}")
        bases = [re.sub(r"\b(public|private|protected|virtual)\b", "", b).strip()
                 for b in re.split(r",(?![^<]*>)", m.group(2))]
        options = {}
        decls = list(re.finditer(r"\b(?:PassOptions::)?Option<([^;{]*?)>\s+\w+\s*\{\s*\*this\s*,"
                                 r"\s*\"([^\"]+)\"", body))
        for k, d in enumerate(decls):
            segment = body[d.end():decls[k + 1].start() if k + 1 < len(decls) else len(body)]
            init = re.search(r"(?:llvm::)?cl::init\(", segment)
            if init:
                value = balanced(segment, init.end() - 1).strip()
            else:
                kind = d.group(1).strip()
                value = "false" if kind == "bool" else '""' if "string" in kind else "0"
            options[d.group(2)] = value.strip('"')
        structs[m.group(1)] = (bases, options)

    def resolve(name, seen=()):
        bases, options = structs[name]
        out = {}
        for base in bases:
            base_name = re.sub(r"<.*", "", base).split("::")[-1]
            if base_name in structs and base_name not in seen:
                out.update(resolve(base_name, seen + (name,)))
        out.update(options)
        return out

    return {name: resolve(name) for name in structs if "PassPipelineOptions" in "".join(structs[name][0])
            or any(re.sub(r"<.*", "", b).split("::")[-1] in structs for b in structs[name][0])}


def registered_pipelines(*folders: str) -> dict[str, str]:
    """Pipeline name -> options struct."""
    out = {}
    for cpp in sources(*folders, pattern="*.cpp"):
        for m in re.finditer(r'PassPipelineRegistration<\s*(?:[\w:]*::)?(\w*)\s*>\s*(?:\w+\s*)?\(\s*"([^"]+)"',
                             cpp.read_text(encoding="utf-8", errors="replace")):
            out[m.group(2)] = m.group(1)
    return out


def normalise(value: str) -> str:
    value = value.strip().strip("`").strip().strip('"').strip()
    value = value.replace("\u2212", "-")  # a typographic minus
    return {"on": "true", "off": "false", "1": "1", "0": "0"}.get(value.lower(), value)


def check_defaults() -> int:
    doc = ROOT / "docs" / "pipelines.md"
    if not doc.exists():
        problem(ROOT / "docs", 0, "docs/pipelines.md is missing")
        return 0
    structs = pipeline_options()
    public = registered_pipelines("lib")
    every = {**registered_pipelines("test/lib", "tools"), **public}
    # Sections: a heading that names a pipeline in backticks, until the next
    # heading of the same or a higher level.
    sections: dict[str, dict[str, tuple[int, str]]] = {}
    current, level = None, 0
    fenced = False
    for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
        if fenced:
            continue
        heading = re.match(r"^(#+)\s+(.*)", line)
        if heading:
            names = [s for s in re.findall(r"`-{0,2}([^`]+)`", heading.group(2)) if s in every]
            if names:
                current, level = names[0], len(heading.group(1))
                sections.setdefault(current, {})
            elif current and len(heading.group(1)) <= level:
                current = None
            continue
        row = re.match(r"^\|\s*`([a-z0-9-]+)`\s*\|([^|]*)\|", line)
        if current and row:
            sections[current][row.group(1)] = (n, row.group(2))
    count = 0
    for pipeline, struct in sorted(every.items()):
        if struct not in structs:
            continue
        if pipeline not in sections:
            if pipeline in public:
                problem(doc, 0, f"no section (a heading with `{pipeline}`) gives the options of "
                                f"the pipeline `{pipeline}`")
            continue
        options, documented = structs[struct], sections[pipeline]
        for option, value in options.items():
            count += 1
            if option not in documented:
                problem(doc, 0, f"`{pipeline}`: option `{option}` (default {value}) is not in its table")
                continue
            n, cell = documented[option]
            shown = re.search(r"`([^`]*)`", cell)
            shown = shown.group(1) if shown else cell
            if normalise(shown) != normalise(value):
                problem(doc, n, f"`{pipeline}`: option `{option}` defaults to {value} in "
                                f"Pipelines.h, the table says {cell.strip()}")
        for option, (n, _) in documented.items():
            if option not in options:
                problem(doc, n, f"`{pipeline}` has no option `{option}`")
    return count


# --- passes ---

def declared_passes() -> set[str]:
    out = set()
    for td in sources("include", "test/lib", pattern="*.td"):
        out |= set(re.findall(r'Pass<\s*"([^"]+)"', td.read_text(encoding="utf-8")))
    return out


def check_pass_table() -> int:
    doc = ROOT / "docs" / "pipelines.md"
    if not doc.exists():
        return 0
    declared = declared_passes()
    listed: dict[str, int] = {}
    fenced = False
    for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
        row = re.match(r"^\|\s*`([a-z0-9-]+)`\s*\|", line)
        # Option tables have rows of the same shape; a pass row's name is a
        # pass (or claims to be one: it starts with `rope-` or `convert-`).
        if row and not fenced and re.match(r"^(rope|convert)-", row.group(1)):
            listed.setdefault(row.group(1), n)
    for name in sorted(declared - listed.keys()):
        problem(doc, 0, f"the pass `{name}` is declared in a Passes.td but not in the pass table")
    for name, n in sorted(listed.items()):
        if name not in declared:
            problem(doc, n, f"the pass table lists `{name}`, which no Passes.td declares")
    return len(declared)


# --- links and paths ---

LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s*\[[^\]]+\]:\s*(\S+)")
REPO_PATH = re.compile(r"(?<![\w./~$-])((?:lib|include|test|tools|utils|python|docs|examples|benchmarks|cmake)"
                       r"/[A-Za-z0-9_./+-]*[A-Za-z0-9_+]/?)(?![\w*<{$./-])")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links: their text
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    out, seen = set(), {}
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
        m = re.match(r"^#+\s+(.*?)\s*#*\s*$", line)
        if m and not fenced:
            s = slug(m.group(1))
            k = seen.get(s, 0)
            seen[s] = k + 1
            out.add(s if k == 0 else f"{s}-{k}")
    out |= set(re.findall(r'<a\s+(?:name|id)="([^"]+)"', path.read_text(encoding="utf-8")))
    return out


def check_links() -> tuple[int, int]:
    links = paths = 0
    for doc in docs():
        for n, code, prose in code_and_prose(doc):
            targets = [m.group(1) for m in LINK.finditer(prose)]
            ref = REFERENCE.match(prose)
            if ref:
                targets.append(ref.group(1))
            for target in targets:
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, mailto:, ...
                    continue
                links += 1
                file, _, anchor = target.partition("#")
                dest = (doc.parent / file).resolve() if file else doc
                if not dest.exists():
                    problem(doc, n, f"link to {target}: no such file")
                elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                    problem(doc, n, f"link to {target}: {dest.relative_to(ROOT)} has no heading "
                                    f"#{anchor}")
            for piece in code:
                for m in REPO_PATH.finditer(piece):
                    paths += 1
                    if not (ROOT / m.group(1)).exists():
                        problem(doc, n, f"`{m.group(1)}` does not exist")
    return links, paths


# --- layering ---

def check_layering() -> int:
    cmake = ROOT / "cmake" / "RopeLayering.cmake"
    arch = ROOT / "docs" / "architecture.md"
    if not cmake.exists() or not arch.exists():
        return 0
    text = re.sub(r"#[^\n]*", "", cmake.read_text(encoding="utf-8"))
    table = {m.group(1): set(m.group(2).split()) if m.group(2) else set()
             for m in re.finditer(r"rope_layer\(\s*(\w+)(?:\s+USES\s+([^)]*))?\)", text)}
    documented: dict[str, tuple[int, set[str]]] = {}
    rows = False
    for n, line in enumerate(arch.read_text(encoding="utf-8").splitlines(), 1):
        if re.match(r"^\|\s*layer\s*\|\s*may use\s*\|\s*$", line):
            rows = True
            continue
        if rows and line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) == 2 and not set(cells[0]) <= set("-: "):
                documented[cells[0]] = (n, {u.strip() for u in cells[1].split(",") if u.strip()})
        elif rows:
            break
    if not documented:
        problem(arch, 0, "no `| layer | may use |` table (cmake/RopeLayering.cmake has one)")
        return 0
    for layer, uses in table.items():
        if layer not in documented:
            problem(arch, 0, f"the layer {layer} of cmake/RopeLayering.cmake is not in the table "
                             "of allowed dependencies")
        elif documented[layer][1] != uses:
            n, shown = documented[layer]
            problem(arch, n, f"{layer} may use {', '.join(sorted(uses)) or 'nothing'} in "
                             f"cmake/RopeLayering.cmake, the table says "
                             f"{', '.join(sorted(shown)) or 'nothing'}")
    for layer, (n, _) in documented.items():
        if layer not in table:
            problem(arch, n, f"cmake/RopeLayering.cmake has no layer {layer}")
    return len(table)


# --- readme ---

def check_readme() -> None:
    readme = ROOT / "README.md"
    lines = readme.read_text(encoding="utf-8").splitlines()
    if len(lines) > 200:
        problem(readme, len(lines), f"{len(lines)} lines, more than 200")
    for n, line in enumerate(lines, 1):
        if line.lstrip().startswith("|"):
            for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]:
                if len(cell.strip()) > 300:
                    problem(readme, n, f"a table cell of {len(cell.strip())} characters "
                                       "(at most 300)")


def main() -> int:
    passes, other = known_names()
    names = check_names(passes, other)
    layers = check_layers()
    defaults = check_defaults()
    pass_rows = check_pass_table()
    links, paths = check_links()
    layering = check_layering()
    check_readme()
    for p in problems:
        print(p)
    print(f"check_docs: {len(docs())} docs; {names} pass/pipeline names, {layers} layers and modules, "
          f"{defaults} pipeline defaults, {pass_rows} passes in the pass table, {layering} layering rows, {links} links, {paths} paths checked; "
          f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
