#!/usr/bin/env python3
"""Prints `N passed, N failed` from a lit log (lit's own summary lists the
counts per result kind; CI reads this plain line)."""
import re
import sys

counts = {}
with open(sys.argv[1], errors="replace") as log:
    for line in log:
        m = re.match(r"\s*(Passed|Failed|Unsupported|Expectedly Failed|Unexpectedly Passed"
                     r"|Unresolved|Timed Out|Skipped|Excluded)\s*:\s*(\d+)", line)
        if m:
            counts[m.group(1)] = int(m.group(2))
passed = counts.get("Passed", 0) + counts.get("Expectedly Failed", 0)
failed = sum(counts.get(k, 0) for k in ("Failed", "Unexpectedly Passed", "Unresolved", "Timed Out"))
skipped = counts.get("Unsupported", 0) + counts.get("Skipped", 0)
# CI reads the last line, which must be exactly `N passed, N failed`;
# tests skipped for a missing feature (a GPU) are reported on the line before.
if skipped:
    print(f"{skipped} skipped (they need what this machine lacks, e.g. a GPU or the frontend venv)")
print(f"{passed} passed, {failed} failed")
