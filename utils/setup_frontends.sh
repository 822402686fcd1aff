#!/usr/bin/env bash
# Creates the frontend test tier's Python environment: a virtual environment
# made from Debian's /usr/bin/python3, outside the checkout, holding exactly
# utils/requirements-frontends.txt (torch, torch-mlir, transformers, pinned).
#
#   ROPE_FRONTENDS_VENV   where (default ~/.cache/rope-mlir/venv-frontends)
#
# Idempotent: the environment records the sha256 of the requirements file it
# was installed from (.rope-requirements.sha256); when that matches, this
# does nothing and needs no network. Otherwise it installs (or updates) the
# pins from PyPI (~6 GB, a few minutes) and records the hash last, so an
# interrupted install is redone. Concurrent runs (two checkouts) take turns.
# Exits 1 with a message when the environment cannot be made (no network);
# the lit suite then reports the tests that need it as UNSUPPORTED.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
REQ="$ROOT/utils/requirements-frontends.txt"
VENV="${ROPE_FRONTENDS_VENV:-$HOME/.cache/rope-mlir/venv-frontends}"
BASE_PYTHON=/usr/bin/python3
STAMP="$VENV/.rope-requirements.sha256"
want="$(sha256sum "$REQ" | cut -d' ' -f1)"

ready() { [ -x "$VENV/bin/python" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; }
ready && exit 0

fail() {
  echo "setup: $1" >&2
  echo "setup: the frontend environment ($VENV) is not ready; the tests that need torch" \
       "(test/Frontends) will be reported UNSUPPORTED" >&2
  exit 1
}

mkdir -p "$(dirname "$VENV")"
exec 9> "$VENV.lock"
flock 9
ready && exit 0  # another checkout finished it while we waited

index="${PIP_INDEX_URL:-https://pypi.org/simple}"
"$BASE_PYTHON" - "$index" <<'PY' || fail "cannot reach the Python package index ($index)"
import sys, urllib.request
try:
    urllib.request.urlopen(sys.argv[1].rstrip("/") + "/pip/", timeout=20).read(1)
except Exception as e:
    print(f"setup: {e}", file=sys.stderr)
    sys.exit(1)
PY

echo "setup: installing the frontend test environment into $VENV"
echo "setup: (torch, torch-mlir, transformers from $REQ; ~6 GB, a few minutes the first time)"
if ! "$VENV/bin/python" -c "import sys" 2>/dev/null; then
  rm -rf "$VENV"
  "$BASE_PYTHON" -m venv "$VENV" || fail "'$BASE_PYTHON -m venv $VENV' failed (is python3-venv installed?)"
fi
rm -f "$STAMP"
log="$VENV.install.log"
if ! "$VENV/bin/python" -m pip install --disable-pip-version-check --no-input --timeout 60 \
    -r "$REQ" > "$log" 2>&1; then
  tail -20 "$log" >&2
  fail "pip could not install $REQ (full log: $log)"
fi
"$VENV/bin/python" -c "import torch, torch_mlir.fx, transformers" >> "$log" 2>&1 \
  || { tail -20 "$log" >&2; fail "the installed packages do not import (full log: $log)"; }
echo "$want" > "$STAMP"
echo "setup: frontend environment ready: $VENV"
