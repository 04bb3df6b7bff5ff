"""What the container runtime reads from CDI spec files (github.com/container-device-interface
``pkg/cdi``): the environment a fully qualified device ``vendor/class=name`` injects, i.e. the
spec's own ``containerEdits.env`` followed by the device's. The simulated runtime reads the
specs the drivers wrote, from the directories a runtime would watch (``/etc/cdi``,
``/var/run/cdi``; here the node's ``ROOT/cdi``), when a container starts.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml

log = logging.getLogger(__name__)

_SUFFIXES = (".json", ".yaml", ".yml")


def _load(path: Path) -> Any:
    text = path.read_text()
    return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)


def _env(edits: Any) -> list[str]:
    env = edits.get("env") if isinstance(edits, dict) else None
    return [e for e in env if isinstance(e, str)] if isinstance(env, list) else []


class CDISpecs:
    """The specs of some directories, read again on every :meth:`env` (a container start):
    drivers write and remove them while the node runs."""

    def __init__(self, dirs: Sequence[Path]) -> None:
        self.dirs = tuple(dirs)

    def _devices(self) -> dict[str, list[str]]:
        """Every ``kind=name`` the specs define, with the env it injects; a later directory's
        spec wins, as the runtime's priority order says. Unreadable specs are skipped."""
        out: dict[str, list[str]] = {}
        for directory in self.dirs:
            for path in sorted(directory.glob("*")) if directory.is_dir() else ():
                if path.suffix not in _SUFFIXES:
                    continue
                try:
                    spec = _load(path)
                    kind = spec["kind"]
                    common = _env(spec.get("containerEdits"))
                    for dev in spec["devices"]:
                        out[f"{kind}={dev['name']}"] = common + _env(dev.get("containerEdits"))
                except (OSError, ValueError, yaml.YAMLError, KeyError, TypeError) as e:
                    log.info("skipping CDI spec %s: %s", path, e)
        return out

    def env(self, cdi_ids: Iterable[str]) -> list[str]:
        """The ``KEY=VALUE`` entries the devices inject, in order (a key set twice keeps the
        last value, as the runtime's merged edits do); unknown ids inject nothing."""
        devices = self._devices()
        merged: dict[str, str] = {}
        for cdi_id in cdi_ids:
            for entry in devices.get(cdi_id, ()):
                key, _, value = entry.partition("=")
                merged.pop(key, None)
                merged[key] = value
        return [f"{k}={v}" for k, v in merged.items()]
