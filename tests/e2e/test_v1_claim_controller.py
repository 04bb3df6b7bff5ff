"""The ResourceClaim controller of ``kubedra controller-manager`` on a 1.34 cluster (real
processes: LocalCluster with ``--emulated-version 1.34``): a pod in 1.34's shape naming a v1
ResourceClaimTemplate gets its claim (1.34's generated name, the
``resource.kubernetes.io/pod-claim-name`` annotation, the pod as controller owner) and
``status.resourceClaimStatuses``; claims allocated and reserved for the pod as the 1.34
scheduler writes them (the ``resource.kubernetes.io/delete-protection`` finalizer by an
update, then allocation and ``reservedFor`` by a status update) are deallocated by the
controller once the pod is gone — the allocation cleared in the status update that empties
``reservedFor``, then the finalizer dropped by an update — and the generated claim is
deleted."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from kubedra.api import codec, kinds
from kubedra.api.core import Pod
from kubedra.api.release import R1_34
from kubedra.api.resource import v1
from kubedra.api.resourceclaim import POD_CLAIM_NAME_ANNOTATION
from kubedra.cli.localcluster import LocalCluster
from kubedra.client import kubeconfig
from kubedra.client.errors import ApiError, is_not_found
from kubedra.client.informer import Informer
from kubedra.client.rest import Client
from kubedra.testing import WITHOUT_NODE_LIFECYCLE

NS = "claims134"
REQUESTS = [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]
ALLOCATION = {"devices": {"results": [
    {"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}]},
    "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]}}


def kind(name: str) -> kinds.Kind:
    found = kinds.lookup(name, R1_34)
    assert found is not None, name
    return found


async def eventually(what: str, check: Callable[[], Awaitable[Any]],
                     timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = await check()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        await asyncio.sleep(0.1)


async def claim_or_none(client: Client, name: str) -> v1.ResourceClaim | None:
    try:
        return await client.get(v1.ResourceClaim, name, NS)
    except ApiError as e:
        if is_not_found(e):
            return None
        raise


async def allocate_as_the_scheduler(client: Client, name: str, pod: Pod) -> None:
    """PreBind of 1.34: the finalizer with an update, then allocation and reservation with
    a status update."""
    body: dict[str, Any] = codec.to_builtins(await client.get(v1.ResourceClaim, name, NS))
    body["metadata"]["finalizers"] = [v1.FINALIZER]
    claim = await client.update(codec.decode(body, v1.ResourceClaim))
    body = codec.to_builtins(claim)
    body["status"] = {"allocation": ALLOCATION, "reservedFor": [
        {"resource": "pods", "name": pod.metadata.name, "uid": pod.metadata.uid}]}
    await client.update_status(codec.decode(body, v1.ResourceClaim))


@pytest.mark.timeout(240)
async def test_claims_of_a_1_34_pod_are_made_and_released(tmp_path: Path) -> None:
    cluster = LocalCluster(tmp_path, emulated_version="1.34",
                           controller_manager_args=WITHOUT_NODE_LIFECYCLE)
    async with cluster, Client(kubeconfig.load(cluster.kubeconfig_path)) as client:
        await client.create_raw(kind("namespaces"), {
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        await client.create_raw(kind("resourceclaimtemplates"), {
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "gpu-template", "namespace": NS},
            "spec": {"metadata": {"labels": {"team": "ml"}},
                     "spec": {"devices": {"requests": REQUESTS}}}}, NS)
        await client.create_raw(kind("resourceclaims"), {
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": "shared", "namespace": NS},
            "spec": {"devices": {"requests": REQUESTS}}}, NS)
        # a long pod name: the generated name's base is cut to 57 characters, both parts
        # in proportion to their length
        pod_name = "a-training-pod-with-a-rather-long-name-x"
        await client.create_raw(kind("pods"), {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": pod_name, "namespace": NS},
            "spec": {"containers": [{"name": "c", "image": "busybox"}],
                     "resourceClaims": [
                         {"name": "accelerator-claim",
                          "resourceClaimTemplateName": "gpu-template"},
                         {"name": "shared", "resourceClaimName": "shared"}]}}, NS)
        pod = await client.get(Pod, pod_name, NS)

        async def recorded() -> Any:
            live = await client.get(Pod, pod_name, NS)
            return live.status.resource_claim_statuses
        (status,) = await eventually("pod.status.resourceClaimStatuses", recorded)
        assert status.name == "accelerator-claim"
        generated = status.resource_claim_name
        assert generated is not None
        base = "a-training-pod-with-a-rather-long-name-accelerator-clai"
        assert generated.startswith(base) and len(generated) == len(base) + 5
        claim = await client.get(v1.ResourceClaim, generated, NS)
        assert claim.api_version == "resource.k8s.io/v1"
        assert claim.metadata.generate_name == base
        assert claim.metadata.annotations == {POD_CLAIM_NAME_ANNOTATION: "accelerator-claim"}
        assert claim.metadata.labels == {"team": "ml"}
        assert codec.to_builtins(claim.metadata.owner_references) == [{
            "apiVersion": "v1", "kind": "Pod", "name": pod_name, "uid": pod.metadata.uid,
            "controller": True, "blockOwnerDeletion": True}]
        assert codec.to_builtins(claim.spec)["devices"]["requests"][0]["name"] == "gpu"

        seen: list[tuple[bool, int, tuple[str, ...]]] = []
        claims = Informer(client, v1.ResourceClaim, namespace=NS)
        claims.add_handler(on_update=lambda _old, new: seen.append(
            (new.status.allocation is not None, len(new.status.reserved_for or ()),
             tuple(new.metadata.finalizers or ()))) if new.metadata.name == "shared" else None)
        claims.start()
        try:
            await claims.wait_synced(30)
            for name in (generated, "shared"):
                await allocate_as_the_scheduler(client, name, pod)
            await asyncio.sleep(1)  # the pod is there: nothing is released
            for name in (generated, "shared"):
                kept = await client.get(v1.ResourceClaim, name, NS)
                assert kept.status.allocation is not None and kept.status.reserved_for
                assert kept.metadata.finalizers == [v1.FINALIZER]

            await client.delete(Pod, pod_name, NS)

            async def released() -> Any:
                shared = await client.get(v1.ResourceClaim, "shared", NS)
                return shared if not shared.metadata.finalizers else None
            shared = await eventually("the shared claim released", released)
            assert shared.status.allocation is None and not shared.status.reserved_for
            # allocated and reserved; the status update that empties reservedFor clears the
            # allocation; then the update that drops the finalizer
            fin = (v1.FINALIZER,)
            assert seen[-3:] == [(True, 1, fin), (False, 0, fin), (False, 0, ())], seen

            async def generated_gone() -> bool:
                return await claim_or_none(client, generated) is None
            await eventually("the generated claim deleted", generated_gone)
        finally:
            await claims.stop()
    log = (tmp_path / "logs" / "controller-manager.log").read_text(errors="replace")
    assert "does not serve" not in log, log[-3000:]
    assert "Traceback" not in log, log[-3000:]
