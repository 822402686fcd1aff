#!/usr/bin/env python3
"""Checks that every C++ line changed since the format base is clang-formatted
(test/Style/format-changed-lines.test).

    python3 utils/check_format.py [--fix] [--base REV] [REPO_ROOT]

The style is the checkout's .clang-format (LLVM's). The base is the commit in
utils/format-base unless --base gives another: the code before it keeps its
layout until a change touches it, and every line added or changed since (in
commits or in the working tree) must be formatted as clang-format would. The
files are the C++ sources and headers of include/, lib/, tools/ and test/lib.
--fix reformats those lines in place instead of reporting them.

Prints each file with unformatted changed lines (clang-format's own report)
and exits 1 if there was any.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

FOLDERS = ("include", "lib", "tools", "test/lib")
SUFFIXES = (".cpp", ".h", ".c")
HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.M)


def clang_format() -> str | None:
    for candidate in ("/usr/lib/llvm-22/bin/clang-format", "clang-format-22"):
        found = shutil.which(candidate) or (candidate if Path(candidate).exists() else None)
        if found:
            return found
    return None


def changed_lines(root: Path, base: str) -> dict[str, list[tuple[int, int]]]:
    """File -> line ranges (first, last) added or changed since base."""
    diff = subprocess.run(
        ["git", "-C", str(root), "diff", "-U0", "--no-color", "--no-ext-diff", base, "--",
         *FOLDERS], capture_output=True, text=True, check=True).stdout
    out: dict[str, list[tuple[int, int]]] = {}
    for part in re.split(r"^diff --git ", diff, flags=re.M)[1:]:
        target = re.search(r"^\+\+\+ b/(.+)$", part, re.M)
        if not target or not target.group(1).endswith(SUFFIXES):
            continue
        ranges = []
        for m in HUNK.finditer(part):
            first, count = int(m.group(1)), int(m.group(2) or 1)
            if count:
                ranges.append((first, first + count - 1))
        if ranges:
            out[target.group(1)] = ranges
    return out


def main(argv: list[str]) -> int:
    args = argv[1:]
    fix = "--fix" in args
    args = [a for a in args if a != "--fix"]
    base = None
    if "--base" in args:
        i = args.index("--base")
        base = args[i + 1]
        del args[i:i + 2]
    root = Path(args[0] if args else Path(__file__).resolve().parent.parent).resolve()
    base = base or (root / "utils" / "format-base").read_text().split()[0]
    tool = clang_format()
    if not tool:
        print("check_format: no clang-format (Debian: clang-format-22)", file=sys.stderr)
        return 2
    files = changed_lines(root, base)
    bad = 0
    for name, ranges in sorted(files.items()):
        lines = [f"--lines={a}:{b}" for a, b in ranges]
        cmd = [tool, f"--style=file:{root / '.clang-format'}", *lines]
        cmd += ["-i"] if fix else ["--dry-run", "-Werror"]
        run = subprocess.run(cmd + [str(root / name)], capture_output=True, text=True)
        if run.returncode != 0:
            bad += 1
            sys.stdout.write(run.stderr)
    count = sum(len(r) for r in files.values())
    verb = "reformatted" if fix else "checked"
    print(f"check_format: {count} changed ranges in {len(files)} files since {base[:12]} {verb}; "
          f"{0 if fix else bad} file(s) with unformatted lines")
    return 1 if bad and not fix else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
