#!/usr/bin/env python3
"""Prints `N passed, N failed` from one or more lit logs, summed (lit's own
summary lists the counts per result kind; CI reads this plain line). A log
that is missing (its build failed before lit ran) counts as one failure."""
import re
import sys

KINDS = ("Passed", "Failed", "Unsupported", "Expectedly Failed", "Unexpectedly Passed",
         "Unresolved", "Timed Out", "Skipped", "Excluded")
totals = {k: 0 for k in KINDS}
for path in sys.argv[1:]:
    counts = {}
    try:
        with open(path, errors="replace") as log:
            for line in log:
                m = re.match(r"\s*(" + "|".join(KINDS) + r")\s*:\s*(\d+)", line)
                if m:
                    counts[m.group(1)] = int(m.group(2))
    except OSError:
        counts = {}
    if not counts:
        counts = {"Unresolved": 1}
    for k, n in counts.items():
        totals[k] += n
passed = totals["Passed"] + totals["Expectedly Failed"]
failed = sum(totals[k] for k in ("Failed", "Unexpectedly Passed", "Unresolved", "Timed Out"))
skipped = totals["Unsupported"] + totals["Skipped"]
# CI reads the last line, which must be exactly `N passed, N failed`;
# tests skipped for a missing feature (a GPU) are reported on the line before.
if skipped:
    print(f"{skipped} skipped (UNSUPPORTED here: they need what this machine lacks, e.g. a GPU or\n"
          "the frontend venv, or the sanitizer suite leaves them to make check)")
print(f"{passed} passed, {failed} failed")
