"""A PEP 517 / PEP 660 build backend for rope-mlir's Python package.

In-tree and dependency-free, so that `pip install .` works offline: it does
not compile anything. The native libraries come from a CMake build of the
checkout (`build/` unless `--config-settings=build-dir=DIR`), whose
`python_packages/rope_mlir` is the package as it is installed (sources and
`_native/`, see python/CMakeLists.txt).

* build_wheel: copies that package (following its symlinks) into a wheel
  tagged for this platform (the libraries are native; the Python code is
  ABI-independent, hence py3-none).
* build_editable: a wheel holding only a .pth file that puts the staged
  package's folder on sys.path: edits to python/rope_mlir show at once, new
  libraries after a rebuild.
"""

from __future__ import annotations

import base64
import hashlib
import os
import sysconfig
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _staged(config_settings) -> Path:
    build = Path((config_settings or {}).get("build-dir", "build"))
    if not build.is_absolute():
        build = ROOT / build
    staged = build / "python_packages"
    if not (staged / "rope_mlir" / "_native" / "build_config.json").exists():
        raise RuntimeError(f"{staged / 'rope_mlir'} is not built: run `make build` first "
                           "(or pass --config-settings=build-dir=DIR of a configured build)")
    return staged


def _names():
    project = _project()
    name = project["name"].replace("-", "_")
    tag = "py3-none-" + sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return project, name, f"{name}-{project['version']}", tag


def _metadata(project) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}",
             f"Version: {project['version']}", f"Summary: {project['description']}",
             f"Requires-Python: {project['requires-python']}",
             f"License: {project['license']['text']}"]
    lines += [f"Requires-Dist: {d}" for d in project.get("dependencies", [])]
    for extra, deps in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f"Requires-Dist: {d}; extra == \"{extra}\"" for d in deps]
    readme = ROOT / project.get("readme", "README.md")
    lines += ["Description-Content-Type: text/markdown", "", readme.read_text()]
    return "\n".join(lines)


def _write_wheel(directory: str, files: dict[str, bytes], executable=()) -> str:
    project, name, stem, tag = _names()
    info = f"{stem}.dist-info"
    files = dict(files)
    files[f"{info}/METADATA"] = _metadata(project).encode()
    groups = project.get("entry-points", {})
    if groups:
        files[f"{info}/entry_points.txt"] = "".join(
            f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in entries.items()) + "\n"
            for group, entries in groups.items()).encode()
    files[f"{info}/WHEEL"] = (f"Wheel-Version: 1.0\nGenerator: rope_mlir_build\n"
                              f"Root-Is-Purelib: false\nTag: {tag}\n").encode()
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = f"{stem}-{tag}.whl"
    with zipfile.ZipFile(Path(directory) / wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, data in files.items():
            entry = zipfile.ZipInfo(path, date_time=(2026, 1, 1, 0, 0, 0))
            entry.external_attr = (0o755 if path in executable else 0o644) << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(entry, data)
    return wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    staged = _staged(config_settings)
    files, libraries = {}, set()
    for path in sorted((staged / "rope_mlir").rglob("*")):
        if path.is_dir() or "__pycache__" in path.parts:
            continue
        if not path.exists():
            # A staging link of a module since deleted from python/rope_mlir
            # (CMake stages new modules but does not remove old links).
            continue
        relative = path.relative_to(staged).as_posix()
        files[relative] = path.read_bytes()  # follows the staging symlinks
        if path.suffix == ".so":
            libraries.add(relative)
    return _write_wheel(wheel_directory, files, executable=libraries)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    staged = _staged(config_settings)
    return _write_wheel(wheel_directory, {"rope_mlir.pth": f"{staged}\n".encode()})


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_sdist(sdist_directory, config_settings=None):
    raise RuntimeError("rope-mlir has no source distribution: install from a checkout "
                       "after `make build`")
