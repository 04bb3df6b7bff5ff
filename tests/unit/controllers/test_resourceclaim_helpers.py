"""Pure parts of the ResourceClaim controller."""

from __future__ import annotations

from kubedra.api import codec
from kubedra.api.core import Pod
from kubedra.controllers.resourceclaim import is_pod_done


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
