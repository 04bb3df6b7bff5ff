"""Shared pieces of the driver SDK tests: short socket dirs and claim YAML."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

DRIVER = "gpu.example.com"


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
