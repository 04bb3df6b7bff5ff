"""Container Device Interface helpers: names, spec validation, atomic spec files.

The naming rules are those of github.com/container-device-interface (pkg/parser): a kind is
``vendor/class``, a fully qualified device ``vendor/class=name``. Spec files are written to a
temporary file in the same directory and renamed, so a container runtime watching the CDI
directory never reads half a file. There is no fsync (as upstream's test driver): the specs are
derived state, and the usual directory ``/var/run/cdi`` does not survive a reboot anyway.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

CDI_VERSION = "0.3.0"
KNOWN_VERSIONS = ("0.3.0", "0.4.0", "0.5.0", "0.6.0", "0.7.0", "0.8.0")
_VENDOR = re.compile(r"[A-Za-z](?:[A-Za-z0-9_.-]*[A-Za-z0-9])?")
_CLASS = re.compile(r"[A-Za-z](?:[A-Za-z0-9_-]*[A-Za-z0-9])?")
_DEVICE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9_.:-]*[A-Za-z0-9])?")


class CDIError(ValueError):
    """An invalid CDI name or spec (the text says what and where)."""


def _check(pattern: re.Pattern[str], what: str, value: str, rule: str) -> None:
    if not pattern.fullmatch(value):
        raise CDIError(f"invalid {what} {value!r}: {rule}")


def check_kind(kind: str) -> tuple[str, str]:
    """``vendor/class`` -> (vendor, class), or :class:`CDIError`."""
    vendor, sep, cls = kind.partition("/")
    if not sep:
        raise CDIError(f"invalid kind {kind!r}: must be vendor/class")
    _check(
        _VENDOR,
        "vendor",
        vendor,
        "letters, digits, '-', '_', '.'; start with a letter, end with a letter or digit",
    )
    _check(
        _CLASS,
        "class",
        cls,
        "letters, digits, '-', '_'; start with a letter, end with a letter or digit",
    )
    return vendor, cls


def check_device_name(name: str) -> None:
    _check(
        _DEVICE,
        "device name",
        name,
        "letters, digits, '-', '_', '.', ':'; start and end with a letter or digit",
    )


def qualified_name(kind: str, device: str) -> str:
    """The fully qualified device name ``vendor/class=name`` the kubelet passes to the runtime."""
    check_kind(kind)
    check_device_name(device)
    return f"{kind}={device}"


def parse_qualified_name(qualified: str) -> tuple[str, str, str]:
    """``vendor/class=name`` -> (vendor, class, name), or :class:`CDIError`."""
    kind, sep, device = qualified.partition("=")
    if not sep:
        raise CDIError(f"invalid CDI device name {qualified!r}: must be vendor/class=name")
    vendor, cls = check_kind(kind)
    check_device_name(device)
    return vendor, cls, device


def make_spec(kind: str, devices: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """A spec of ``kind`` with one device per entry of ``devices`` (name -> ``K=V`` env edits;
    an empty list leaves ``env`` out, as Go's omitempty does)."""
    spec: dict[str, Any] = {
        "cdiVersion": CDI_VERSION,
        "kind": kind,
        "devices": [
            {"name": name, "containerEdits": {"env": list(env)} if env else {}}
            for name, env in devices.items()
        ],
    }
    validate_spec(spec)
    return spec


def validate_spec(spec: Any) -> None:
    """Raise :class:`CDIError` unless ``spec`` is a CDI spec a runtime would accept."""
    if not isinstance(spec, dict):
        raise CDIError("spec: must be an object")
    version = spec.get("cdiVersion")
    if version not in KNOWN_VERSIONS:
        raise CDIError(f"cdiVersion: unsupported version {version!r}, known {list(KNOWN_VERSIONS)}")
    kind = spec.get("kind")
    if not isinstance(kind, str):
        raise CDIError("kind: must be a string vendor/class")
    check_kind(kind)
    devices = spec.get("devices")
    if not isinstance(devices, list) or not devices:
        raise CDIError("devices: must be a non-empty list")
    seen: set[str] = set()
    for i, dev in enumerate(devices):
        name = dev.get("name") if isinstance(dev, dict) else None
        if not isinstance(name, str):
            raise CDIError(f"devices[{i}].name: must be a string")
        check_device_name(name)
        if name in seen:
            raise CDIError(f"devices[{i}].name: duplicate device name {name!r}")
        seen.add(name)
        _validate_edits(dev.get("containerEdits"), f"devices[{i}].containerEdits")
    if "containerEdits" in spec:
        _validate_edits(spec["containerEdits"], "containerEdits")


def _validate_edits(edits: Any, path: str) -> None:
    if edits is None:
        return
    if not isinstance(edits, dict):
        raise CDIError(f"{path}: must be an object")
    env = edits.get("env", [])
    if not isinstance(env, list):
        raise CDIError(f"{path}.env: must be a list")
    for j, entry in enumerate(env):
        if not isinstance(entry, str) or "=" not in entry or entry.startswith("="):
            raise CDIError(f"{path}.env[{j}]: invalid environment variable {entry!r}, want K=V")


def write_spec(path: Path, spec: Mapping[str, Any]) -> None:
    """Validate ``spec`` and write it to ``path`` atomically (temporary file + rename)."""
    validate_spec(dict(spec))
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(spec, separators=(",", ":")).encode()
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def remove_spec(path: Path) -> None:
    """Remove a spec file; a missing one is fine (unprepare is idempotent)."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
