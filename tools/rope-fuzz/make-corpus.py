#!/usr/bin/env python3
"""Writes the seed corpus of rope-fuzz: every `.mlir` file under the given
directories (default: test/ and examples/ of the repository), split at
`// -----` like `--split-input-file`, with comment lines dropped, one file
per chunk, named by content hash (so reruns are idempotent); and, verbatim,
every file in a `fuzz/inputs/` directory among them (the inputs that once
crashed rope-fuzz).

    make-corpus.py OUT_DIR [SRC_DIR ...]
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


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    sources = [Path(a) for a in argv[2:]] or [REPO / "test", REPO / "examples"]
    count = 0
    for src in sources:
        for path in sorted(src.rglob("*")):
            if not path.is_file():
                continue
            if path.parent.name == "inputs" and path.parent.parent.name == "fuzz":
                bodies = [path.read_bytes()]
            elif path.suffix == ".mlir":
                bodies = [b.encode() for b in chunks(path.read_text(errors="replace"))]
            else:
                continue
            for data in bodies:
                (out / hashlib.sha1(data).hexdigest()).write_bytes(data)
                count += 1
    print(f"make-corpus: {count} seeds from {', '.join(map(str, sources))} in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
