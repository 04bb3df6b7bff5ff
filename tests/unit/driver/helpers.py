"""Shared pieces of the driver SDK tests: short socket dirs, claim YAML, and the tutorial of
docs/driver-sdk.md as a driver author's project."""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

DRIVER = "gpu.example.com"
DOC = Path(__file__).resolve().parents[3] / "docs" / "driver-sdk.md"


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A directory under /tmp: pytest's tmp_path can exceed the 107-byte socket path limit."""
    path = Path(tempfile.mkdtemp(dir="/tmp", prefix="drv-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def claim_yaml(
    uid: str,
    instances: list[str],
    *,
    name: str = "",
    node: str = "worker",
    driver: str = DRIVER,
    class_params: str = "null",
    claim_params: str = "null",
    request_params: str = "null",
) -> str:
    """A ResourceClaim allocated with structured parameters to ``instances`` on ``node``."""
    results = (
        "".join(
            f"""
        - vendorRequestParameters: {request_params}
          namedResources: {{name: {inst}}}"""
            for inst in instances
        )
        or " []"
    )
    return f"""
apiVersion: resource.k8s.io/v1alpha2
kind: ResourceClaim
metadata: {{name: {name or "claim-" + uid}, namespace: default, uid: {uid}}}
spec: {{resourceClassName: example}}
status:
  driverName: {driver}
  allocation:
    resourceHandles:
    - driverName: {driver}
      structuredData:
        vendorClassParameters: {class_params}
        vendorClaimParameters: {claim_params}
        nodeName: {node}
        results:{results}
"""


def blocks(lang: str) -> list[str]:
    """The doc's fenced blocks of ``lang``, in order."""
    return re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(), re.DOTALL)


def write_project(where: Path) -> None:
    """The driver author's project: ``mydriver.py``, ``test_mydriver.py``, ``pytest.ini``."""
    driver_src, test_src = blocks("python")[:2]
    (ini_src,) = blocks("ini")
    (where / "mydriver.py").write_text(driver_src)
    (where / "test_mydriver.py").write_text(test_src)
    (where / "pytest.ini").write_text(ini_src)
