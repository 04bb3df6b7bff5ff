"""Pure parts of the ResourceClaim controller."""

from __future__ import annotations

from kubedra.allocation.podclaims import generate_name
from kubedra.api import codec
from kubedra.api.core import Pod
from kubedra.controllers.resourceclaim import is_pod_done


def test_generate_name_short_and_truncated_proportionally() -> None:
    assert generate_name("my-pod", "gpu") == "my-pod-gpu-"
    pod, claim = "p" * 60, "c" * 30
    name = generate_name(pod, claim)
    total = len(pod) + len(claim) + 2
    assert name == "p" * (60 * 57 // total) + "-" + "c" * (30 * 57 // total)
    assert len(name) <= 58


def test_pod_done() -> None:
    def pod(**kw: object) -> Pod:
        return codec.decode({"metadata": {"name": "p", **kw.get("meta", {})},  # type: ignore[dict-item]
                             "spec": kw.get("spec", {}), "status": kw.get("status", {})}, Pod)

    assert is_pod_done(pod(status={"phase": "Succeeded"}))
    assert is_pod_done(pod(status={"phase": "Failed"}))
    assert not is_pod_done(pod(status={"phase": "Running"}))
    deleted = {"deletionTimestamp": "2024-01-01T00:00:00Z"}
    assert is_pod_done(pod(meta=deleted))
    assert not is_pod_done(pod(meta=deleted, spec={"nodeName": "n"}))
