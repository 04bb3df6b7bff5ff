"""``Client.send_patch``: the patch of a caller that does not read the answer (the claim
controller's pod status, the Job controller's finalizer removal, the kubelet's pod status,
the scheduler's condition) is applied, and refused as :meth:`Client.patch` refuses it,
without decoding the patched object (in-process API server)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubedra.api.core import Pod
from kubedra.client.errors import ApiError, is_not_found
from tests.conformance.scheduler_support import api_client
from tests.e2e.dra_workload import kind

NS = "default"
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": NS},
       "spec": {"containers": [{"name": "c", "image": "busybox"}],
                "resourceClaims": [{"name": "gpu", "source": {
                    "resourceClaimTemplateName": "gpu-template"}}]}}


@pytest.mark.timeout(60)
async def test_the_patch_is_applied_and_nothing_is_returned(tmp_path: Path) -> None:
    async with api_client(tmp_path) as client:
        await client.create_raw(kind("pods"), POD, NS)
        claims = [{"name": "gpu", "resourceClaimName": "p-gpu-x7k2m"}]
        answer = await client.send_patch(Pod, "p", {"status": {"resourceClaimStatuses": claims}},
                                         namespace=NS, subresource="status")
        assert answer is None
        pod = await client.get(Pod, "p", NS)
        statuses = pod.status.resource_claim_statuses or []
        assert [(s.name, s.resource_claim_name) for s in statuses] == [("gpu", "p-gpu-x7k2m")]


@pytest.mark.timeout(60)
async def test_a_refused_patch_raises_and_changes_nothing(tmp_path: Path) -> None:
    async with api_client(tmp_path) as client:
        await client.create_raw(kind("pods"), POD, NS)
        before = await client.get(Pod, "p", NS)
        with pytest.raises(ApiError) as invalid:
            await client.send_patch(Pod, "p", {"metadata": {"labels": {"bad key!": "x"}}},
                                    namespace=NS)
        assert invalid.value.code == 422
        after = await client.get(Pod, "p", NS)
        assert after.metadata.resource_version == before.metadata.resource_version
        with pytest.raises(ApiError) as missing:
            await client.send_patch(Pod, "nobody", {"metadata": {"labels": {"a": "b"}}},
                                    namespace=NS, patch_type="strategic")
        assert is_not_found(missing.value)
