"""The official Python client of the 1.34 era, ``kubernetes==34.1.0``, beside the 30.1.0
the test extra pins: one interpreter imports one ``kubernetes``, so 34.1.0 lives in an
environment of its own inside the project's (``.venv/client-34``), and the e2e tests run
small scripts under its Python as subprocesses.

``make test`` (so ``.ci/run``) creates it with ``python -m tests.e2e.official_client``; a
test that finds it missing creates it the same way, and skips with the reason only when it
cannot be installed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import venv
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PIN = "kubernetes==34.1.0"
VERSION = PIN.partition("==")[2]
ENV = Path(sys.prefix) / "client-34"


class ClientUnavailable(Exception):
    """The 34.1.0 client cannot be installed here (tests skip with this message)."""


def _version(python: Path) -> str:
    proc = subprocess.run([str(python), "-c", "import kubernetes; print(kubernetes.__version__)"],
                          capture_output=True, text=True, timeout=120, check=False)
    return proc.stdout.strip() if proc.returncode == 0 else ""


def ensure_client() -> Path:
    """The Python of the environment holding ``kubernetes==34.1.0``, made once."""
    python = ENV / "bin" / "python"
    if python.exists() and _version(python) == VERSION:
        return python
    try:
        venv.create(ENV, with_pip=True, clear=True)
    except (OSError, subprocess.CalledProcessError) as err:
        raise ClientUnavailable(f"cannot create {ENV}: {err}") from None
    proc = subprocess.run([str(python), "-m", "pip", "install", "-q", PIN],
                          capture_output=True, text=True, timeout=900, check=False)
    if proc.returncode != 0 or _version(python) != VERSION:
        raise ClientUnavailable(f"pip install {PIN} into {ENV} failed: {proc.stderr[-500:]}")
    return python


@dataclass(frozen=True)
class OfficialClient:
    """Runs scripts under the 34.1.0 client's Python against one kubeconfig."""

    python: Path
    kubeconfig: Path

    def run(self, script: str, *args: str, timeout: float = 120) -> Any:
        """Run ``script`` (``sys.argv[1]`` is the kubeconfig, then ``args``); its stdout,
        parsed as JSON. A failing script fails the test with its output."""
        proc = subprocess.run([str(self.python), "-c", script, str(self.kubeconfig), *args],
                              capture_output=True, text=True, timeout=timeout, check=False)
        if proc.returncode != 0:
            raise AssertionError(f"client script failed ({proc.returncode}):\n"
                                 f"{proc.stdout}\n{proc.stderr}")
        return json.loads(proc.stdout)


if __name__ == "__main__":
    print(ensure_client())
