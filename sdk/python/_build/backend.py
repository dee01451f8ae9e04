"""The PEP 517 build backend of sdk/python, in the tree (pyproject.toml's backend-path).

pip builds a package in an isolated environment into which it installs the
backend named by [build-system] requires, from the package index. Where no
index can be reached (the machines this project runs on reach Debian's and
npm's registries only), a backend from the index, setuptools included, cannot
be installed, and Debian's python3-setuptools is not visible inside the
isolated environment. This backend needs nothing but the standard library
(and, before Python 3.11, tomli to read pyproject.toml, asked for through
get_requires_for_build_wheel), so `pip install sdk/python` works offline.

It builds one kind of project, this one: pure-Python packages under src/,
every file in them (generated code, .pyi stubs, py.typed) except caches, and
the core metadata from [project]. A [project] key it does not know is an
error rather than silently left out of the metadata.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import os
import re
import sys
import tarfile
import zipfile
from typing import Any, Dict, Iterator, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "src")

# Every file gets this time, so that a build is the same byte for byte
# whenever it runs (zip cannot hold times before 1980).
_EPOCH = (1980, 1, 1, 0, 0, 0)
_KNOWN_KEYS = {"name", "version", "description", "readme", "license", "requires-python", "dependencies"}
_SKIP_DIRS = {"__pycache__"}
_SKIP_SUFFIXES = (".pyc", ".pyo")

Config = Optional[Dict[str, Any]]


def _needs_tomli() -> List[str]:
    return [] if sys.version_info >= (3, 11) else ["tomli>=1.1"]


def get_requires_for_build_wheel(config_settings: Config = None) -> List[str]:
    return _needs_tomli()


def get_requires_for_build_editable(config_settings: Config = None) -> List[str]:
    return _needs_tomli()


def get_requires_for_build_sdist(config_settings: Config = None) -> List[str]:
    return _needs_tomli()


def _project() -> Dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # get_requires_for_build_* asked for it
        import tomli as tomllib
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return _checked(tomllib.load(f).get("project"))


def _checked(project: Any) -> Dict[str, Any]:
    """project, when it is a [project] table this backend can build from."""
    if not isinstance(project, dict):
        raise ValueError("pyproject.toml has no [project] table")
    unknown = set(project) - _KNOWN_KEYS
    if unknown:
        raise ValueError(f"pyproject.toml: [project] keys this backend does not handle: {', '.join(sorted(unknown))}")
    for key in ("name", "version"):
        if not isinstance(project.get(key), str):
            raise ValueError(f"pyproject.toml: [project] needs {key}")
    return project


def _dist_name(project: Dict[str, Any]) -> str:
    # The wheel file name's form of the name (PEP 427, PEP 503).
    return re.sub(r"[-_.]+", "_", project["name"]).lower()


def _metadata(project: Dict[str, Any]) -> str:
    """The core metadata (version 2.1) of [project]."""
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}", f"Version: {project['version']}"]
    if project.get("description"):
        lines.append(f"Summary: {project['description']}")
    lic = project.get("license")
    if isinstance(lic, dict) and "text" in lic:
        lines.append(f"License: {lic['text']}")
    elif lic is not None:
        raise ValueError("pyproject.toml: license must be {text = ...}")
    if project.get("requires-python"):
        lines.append(f"Requires-Python: {project['requires-python']}")
    for dep in project.get("dependencies", []):
        lines.append(f"Requires-Dist: {dep}")
    body = ""
    readme = project.get("readme")
    if readme is not None:
        if not isinstance(readme, str) or not readme.endswith(".md"):
            raise ValueError("pyproject.toml: readme must name a Markdown file")
        lines.append("Description-Content-Type: text/markdown")
        with open(os.path.join(ROOT, readme), encoding="utf-8") as f:
            body = "\n" + f.read()
    return "\n".join(lines) + "\n" + body


def _package_files() -> Iterator[Tuple[str, str]]:
    """(path in the wheel, path on disk) of every file of the packages under src/."""
    for top in sorted(os.listdir(SRC)):
        if not os.path.isfile(os.path.join(SRC, top, "__init__.py")):
            continue
        for dirpath, dirnames, filenames in os.walk(os.path.join(SRC, top)):
            dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
            for name in sorted(filenames):
                if name.endswith(_SKIP_SUFFIXES):
                    continue
                path = os.path.join(dirpath, name)
                yield os.path.relpath(path, SRC).replace(os.sep, "/"), path


class _Wheel:
    """A wheel being written, with its RECORD (PEP 427, PEP 376)."""

    def __init__(self, path: str, dist_info: str) -> None:
        self._zip = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED)
        self._dist_info = dist_info
        self._record: List[str] = []

    def add(self, arcname: str, data: bytes, executable: bool = False) -> None:
        info = zipfile.ZipInfo(arcname, date_time=_EPOCH)
        info.external_attr = (0o100755 if executable else 0o100644) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self._zip.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        self._record.append(f"{arcname},sha256={digest},{len(data)}")

    def close(self) -> None:
        record = f"{self._dist_info}/RECORD"
        self._record.append(f"{record},,")
        info = zipfile.ZipInfo(record, date_time=_EPOCH)
        info.external_attr = 0o100644 << 16
        self._zip.writestr(info, "\n".join(self._record) + "\n", compress_type=zipfile.ZIP_DEFLATED)
        self._zip.close()


def _dist_info_files(project: Dict[str, Any]) -> Dict[str, str]:
    return {
        "METADATA": _metadata(project),
        "WHEEL": "Wheel-Version: 1.0\nGenerator: agentcore in-tree backend\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }


def _dist_info_name(project: Dict[str, Any]) -> str:
    return f"{_dist_name(project)}-{project['version']}.dist-info"


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: Config = None) -> str:
    project = _project()
    name = _dist_info_name(project)
    os.makedirs(os.path.join(metadata_directory, name), exist_ok=True)
    for fname, text in _dist_info_files(project).items():
        with open(os.path.join(metadata_directory, name, fname), "w", encoding="utf-8") as f:
            f.write(text)
    return name


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def _build(wheel_directory: str, editable: bool) -> str:
    project = _project()
    dist_info = _dist_info_name(project)
    filename = f"{_dist_name(project)}-{project['version']}-py3-none-any.whl"
    wheel = _Wheel(os.path.join(wheel_directory, filename), dist_info)
    try:
        if editable:
            # PEP 660: the packages stay in src/, which a .pth file puts on sys.path.
            wheel.add(f"{_dist_name(project)}.pth", (SRC + "\n").encode())
        else:
            for arcname, path in _package_files():
                with open(path, "rb") as f:
                    wheel.add(arcname, f.read(), executable=os.access(path, os.X_OK))
        for fname, text in _dist_info_files(project).items():
            wheel.add(f"{dist_info}/{fname}", text.encode())
    finally:
        wheel.close()
    return filename


def build_wheel(wheel_directory: str, config_settings: Config = None, metadata_directory: Optional[str] = None) -> str:
    return _build(wheel_directory, editable=False)


def build_editable(wheel_directory: str, config_settings: Config = None, metadata_directory: Optional[str] = None) -> str:
    return _build(wheel_directory, editable=True)


def build_sdist(sdist_directory: str, config_settings: Config = None) -> str:
    """A source archive that builds the same wheel: pyproject.toml, the
    readme, this backend and src/, with PKG-INFO."""
    project = _project()
    base = f"{_dist_name(project)}-{project['version']}"
    filename = f"{base}.tar.gz"
    files = [("pyproject.toml", os.path.join(ROOT, "pyproject.toml")), ("_build/backend.py", os.path.abspath(__file__))]
    if project.get("readme"):
        files.append((project["readme"], os.path.join(ROOT, project["readme"])))
    files += [("src/" + arc, path) for arc, path in _package_files()]
    with gzip.GzipFile(os.path.join(sdist_directory, filename), "wb", mtime=0) as gz, \
            tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
        def add(arcname: str, data: bytes, mode: int = 0o644) -> None:
            info = tarfile.TarInfo(f"{base}/{arcname}")
            info.size, info.mode, info.mtime = len(data), mode, 315532800  # 1980-01-01
            tar.addfile(info, io.BytesIO(data))

        add("PKG-INFO", _metadata(project).encode())
        for arcname, path in files:
            with open(path, "rb") as f:
                add(arcname, f.read(), 0o755 if os.access(path, os.X_OK) else 0o644)
    return filename
