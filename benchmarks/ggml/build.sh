#!/usr/bin/env bash
# Builds ggml's CPU backend (llama.cpp's, native flags) and ggml_baseline.cpp
# against it, once, outside the checkout: `make bench` puts llama.cpp's ROPE
# and FLASH_ATTN_EXT beside our kernels. ggml comes from a pinned source
# distribution that PyPI carries: llama-cpp-python's sdist vendors
# llama.cpp. Idempotent; prints the path of the ggml_baseline binary.
#
#   benchmarks/ggml/build.sh      (ROPE_GGML_DIR: where; default ~/.cache/rope-mlir/ggml)
set -euo pipefail

VERSION=0.3.16
SHA256=34ed0f9bd9431af045bb63d9324ae620ad0536653740e9bb163a2e1fcb973be6
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="${ROPE_GGML_DIR:-$HOME/.cache/rope-mlir/ggml}/$VERSION"
SRC="$ROOT/llama_cpp_python-$VERSION/vendor/llama.cpp/ggml"
BUILD="$ROOT/build"
BIN="$BUILD/ggml_baseline"
LLVM=/usr/lib/llvm-22/bin

mkdir -p "$ROOT"
if [ ! -d "$SRC" ]; then
  # pip download of an sdist would build its metadata (and its build
  # dependencies); PyPI's JSON API gives the file itself.
  python3 - "$ROOT" "$VERSION" "$SHA256" <<'PY' >&2
import hashlib, json, sys, tarfile, urllib.parse, urllib.request
root, version, sha256 = sys.argv[1:]
api = "https://pypi.org/pypi/llama-cpp-python/json"
releases = json.load(urllib.request.urlopen(api))["releases"]
sdist = next(f for f in releases[version] if f["packagetype"] == "sdist")
data = urllib.request.urlopen(urllib.parse.urljoin(api, sdist["url"])).read()
if hashlib.sha256(data).hexdigest() != sha256:
    sys.exit(f"llama-cpp-python {version}: sha256 mismatch")
path = f"{root}/llama_cpp_python-{version}.tar.gz"
open(path, "wb").write(data)
with tarfile.open(path) as tar:
    tar.extractall(root, filter="data")
print(f"ggml: unpacked llama-cpp-python {version} in {root}")
PY
  # The sdist leaves out a template that ggml's CMakeLists configures.
  touch "$SRC/ggml.pc.in"
fi
if [ ! -f "$BUILD/src/libggml.so" ]; then
  cmake -S "$SRC" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER="$LLVM/clang" -DCMAKE_CXX_COMPILER="$LLVM/clang++" \
    -DGGML_NATIVE=ON -DGGML_OPENMP=ON -DBUILD_SHARED_LIBS=ON \
    -DGGML_BUILD_TESTS=OFF -DGGML_BUILD_EXAMPLES=OFF >&2
  ninja -C "$BUILD" >&2
fi
if [ ! -x "$BIN" ] || [ "$HERE/ggml_baseline.cpp" -nt "$BIN" ]; then
  "$LLVM/clang++" -O2 -std=c++17 -I"$SRC/include" "$HERE/ggml_baseline.cpp" \
    -L"$BUILD/src" -lggml -lggml-base -lggml-cpu -Wl,-rpath,"$BUILD/src" -o "$BIN"
fi
echo "$BIN"
