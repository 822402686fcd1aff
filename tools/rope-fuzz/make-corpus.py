#!/usr/bin/env python3
"""Writes the seed corpus of rope-fuzz: every `.mlir` file under the given
directories (default: test/ and examples/ of the repository), split at
`// -----` like `--split-input-file`, with comment lines dropped, one file
per chunk, named by content hash (so reruns are idempotent); and, verbatim,
every file in a `fuzz/inputs/` directory among them (the inputs that once
crashed rope-fuzz).

    make-corpus.py [--max-seeds N] OUT_DIR [SRC_DIR ...]

--max-seeds N keeps N of the split chunks, evenly spread over them in path
order (the same N files on every run), and every `fuzz/inputs/` file: the
bounded lit run takes a sample, since libFuzzer runs every seed through every
pipeline before its time limit starts to count.
"""

import hashlib
import os
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def chunks(text: str):
    for part in re.split(r"^// -----.*$", text, flags=re.M):
        lines = [l for l in part.splitlines() if not l.lstrip().startswith("//")]
        body = "\n".join(lines).strip()
        if body:
            yield body + "\n"


def sample(items, n):
    """n of items, evenly spread (all of them when n is None or too large)."""
    if n is None or n >= len(items):
        return items
    return [items[i * len(items) // n] for i in range(n)]


def main(argv):
    args = argv[1:]
    max_seeds = None
    if args[:1] == ["--max-seeds"] and len(args) >= 2:
        max_seeds = int(args[1])
        args = args[2:]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(args[0])
    out.mkdir(parents=True, exist_ok=True)
    sources = [Path(a) for a in args[1:]] or [REPO / "test", REPO / "examples"]
    regressions, split = [], []
    for src in sources:
        for path in sorted(src.rglob("*")):
            if not path.is_file():
                continue
            if path.parent.name == "inputs" and path.parent.parent.name == "fuzz":
                regressions.append(path.read_bytes())
            elif path.suffix == ".mlir":
                split += [b.encode() for b in chunks(path.read_text(errors="replace"))]
    seeds = regressions + sample(split, max_seeds)
    for data in seeds:
        (out / hashlib.sha1(data).hexdigest()).write_bytes(data)
    print(f"make-corpus: {len(seeds)} seeds from {', '.join(map(str, sources))} in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
