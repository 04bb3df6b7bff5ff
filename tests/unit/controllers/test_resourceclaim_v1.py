"""The ResourceClaim controller on a 1.34 server (in-process, SQLite, ``resource.k8s.io/v1``):
claims from v1 templates named in 1.34's pod shape, deallocation by the controller once
``reservedFor`` is empty (allocation cleared in the status update, then the
``resource.kubernetes.io/delete-protection`` finalizer dropped), deleted claims released,
unused generated claims deleted, non-pod consumers kept with upstream's text logged, admin
access refused when its gate is off. The pure rules are tested beside them."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from kubedra.api import codec, kinds
from kubedra.api.core import Event, Pod
from kubedra.api.features import FeatureGates
from kubedra.api.release import R1_30, R1_34
from kubedra.api.resource import v1, v1alpha2
from kubedra.api.resourceclaim import POD_CLAIM_NAME_ANNOTATION, V1_CLAIMS, claim_api
from kubedra.apiserver.app import Options
from kubedra.client.errors import ApiError, is_not_found
from kubedra.client.rest import Client
from kubedra.controllers.resourceclaim import (
    ResourceClaimController,
    deallocates,
    refused_template,
    unsupported_entry,
)
from kubedra.tasks import cancel_and_wait
from tests.conformance.scheduler_support import api_client

NS = "dra"
GATES = FeatureGates.for_release(R1_34)
REQUESTS = [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]
ALLOCATION = {"devices": {"results": [
    {"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}]}}


def kind(name: str) -> kinds.Kind:
    found = kinds.lookup(name, R1_34)
    assert found is not None, name
    return found


@contextlib.asynccontextmanager
async def cluster(tmp_path: Path, gates: FeatureGates = GATES,
                  ns_labels: dict[str, str] | None = None,
                  ) -> AsyncIterator[tuple[Client, ResourceClaimController]]:
    """A 1.34 API server, a namespace and a running claim controller of that release."""
    async with api_client(tmp_path, Options(gates=GATES, gc=False)) as client:
        await client.create_raw(kind("namespaces"), {
            "apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": NS, "labels": ns_labels or {}}})
        controller = ResourceClaimController(client, release=R1_34, gates=gates)
        task = asyncio.create_task(controller.run())
        try:
            for informer in controller.informers:
                await informer.wait_synced(20)
            yield client, controller
        finally:
            await cancel_and_wait(task)
            await controller.stop()


async def eventually(what: str, check: Callable[[], Any], timeout: float = 20) -> Any:
    """Poll ``await check()`` until it is truthy."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        got = await check()
        if got:
            return got
        assert asyncio.get_running_loop().time() < deadline, f"timed out: {what}"
        await asyncio.sleep(0.05)


async def create_pod(client: Client, name: str, claims: list[dict[str, Any]],
                     **spec: Any) -> Pod:
    await client.create_raw(kind("pods"), {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
        "spec": {"containers": [{"name": "c", "image": "busybox"}],
                 "resourceClaims": claims, **spec}}, NS)
    return await client.get(Pod, name, NS)


async def create_template(client: Client, name: str,
                          requests: list[dict[str, Any]] = REQUESTS) -> None:
    await client.create_raw(kind("resourceclaimtemplates"), {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"metadata": {"labels": {"app": "demo"}, "annotations": {"note": "kept"}},
                 "spec": {"devices": {"requests": requests}}}}, NS)


async def allocated_claim(client: Client, name: str, reserved_for: list[dict[str, Any]],
                          owner: Pod | None = None) -> v1.ResourceClaim:
    """A claim as the 1.34 scheduler leaves it: the finalizer added by an update, then the
    allocation and the reservation by a status update."""
    meta: dict[str, Any] = {"name": name, "namespace": NS}
    if owner is not None:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod",
                                    "name": owner.metadata.name, "uid": owner.metadata.uid,
                                    "controller": True, "blockOwnerDeletion": True}]
    await client.create_raw(kind("resourceclaims"), {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": meta,
        "spec": {"devices": {"requests": REQUESTS}}}, NS)
    body: dict[str, Any] = codec.to_builtins(await client.get(v1.ResourceClaim, name, NS))
    body["metadata"]["finalizers"] = [v1.FINALIZER]
    claim = await client.update(codec.decode(body, v1.ResourceClaim))
    body = codec.to_builtins(claim)
    body["status"] = {"allocation": ALLOCATION, "reservedFor": reserved_for}
    return await client.update_status(codec.decode(body, v1.ResourceClaim))


def ref(pod: Pod) -> dict[str, Any]:
    return {"resource": "pods", "name": pod.metadata.name, "uid": pod.metadata.uid}


async def get_claim(client: Client, name: str) -> v1.ResourceClaim | None:
    try:
        return await client.get(v1.ResourceClaim, name, NS)
    except ApiError as e:
        if is_not_found(e):
            return None
        raise


# --- against a 1.34 server ---------------------------------------------------------------------


@pytest.mark.timeout(60)
async def test_a_pod_gets_its_claim_from_a_v1_template(tmp_path: Path) -> None:
    async with cluster(tmp_path) as (client, _):
        await create_template(client, "gpu-template")
        pod = await create_pod(client, "trainer", [
            {"name": "gpu", "resourceClaimTemplateName": "gpu-template"}])

        async def recorded() -> Any:
            live = await client.get(Pod, "trainer", NS)
            return live.status.resource_claim_statuses
        (status,) = await eventually("resourceClaimStatuses", recorded)
        assert status.name == "gpu" and status.resource_claim_name.startswith("trainer-gpu-")
        assert len(status.resource_claim_name) == len("trainer-gpu-") + 5
        claim = await client.get(v1.ResourceClaim, status.resource_claim_name, NS)
        assert claim.api_version == "resource.k8s.io/v1"
        assert claim.metadata.generate_name == "trainer-gpu-"
        assert claim.metadata.annotations == {"note": "kept", POD_CLAIM_NAME_ANNOTATION: "gpu"}
        assert claim.metadata.labels == {"app": "demo"}
        (owner,) = claim.metadata.owner_references or ()
        assert (owner.api_version, owner.kind, owner.name, owner.uid, owner.controller,
                owner.block_owner_deletion) == ("v1", "Pod", "trainer", pod.metadata.uid,
                                                True, True)
        assert codec.to_builtins(claim.spec)["devices"]["requests"][0]["exactly"][
            "deviceClassName"] == "gpu.example.com"
        await asyncio.sleep(0.5)  # no second claim for the same entry
        claims = (await client.list(v1.ResourceClaim, NS)).items
        assert [c.metadata.name for c in claims] == [claim.metadata.name]


@pytest.mark.timeout(60)
async def test_the_last_consumer_gone_deallocates_and_drops_the_finalizer(
        tmp_path: Path) -> None:
    async with cluster(tmp_path) as (client, _):
        pod = await create_pod(client, "user", [
            {"name": "gpu", "resourceClaimName": "shared"}], nodeName="n1")
        await allocated_claim(client, "shared", [ref(pod)])
        await asyncio.sleep(0.3)
        kept = await client.get(v1.ResourceClaim, "shared", NS)
        assert kept.status.allocation is not None and kept.metadata.finalizers == [v1.FINALIZER]
        await client.delete(Pod, "user", NS, grace_period_seconds=0)

        async def released() -> Any:
            claim = await client.get(v1.ResourceClaim, "shared", NS)
            return claim if not claim.metadata.finalizers else None
        claim = await eventually("finalizer removed", released)
        assert claim.status.allocation is None and not claim.status.reserved_for
        # not generated for a pod: the claim stays
        assert await get_claim(client, "shared") is not None


@pytest.mark.timeout(60)
async def test_one_consumer_left_keeps_the_allocation(tmp_path: Path) -> None:
    async with cluster(tmp_path) as (client, _):
        stays = await create_pod(client, "stays", [
            {"name": "gpu", "resourceClaimName": "shared"}], nodeName="n1")
        goes = await create_pod(client, "goes", [
            {"name": "gpu", "resourceClaimName": "shared"}], nodeName="n1")
        await allocated_claim(client, "shared", [ref(stays), ref(goes)])
        await client.delete(Pod, "goes", NS, grace_period_seconds=0)

        async def one_left() -> Any:
            claim = await client.get(v1.ResourceClaim, "shared", NS)
            return claim if len(claim.status.reserved_for or ()) == 1 else None
        claim = await eventually("one reservation left", one_left)
        assert codec.to_builtins(claim.status.reserved_for) == [ref(stays)]
        assert claim.status.allocation is not None
        assert claim.metadata.finalizers == [v1.FINALIZER]


@pytest.mark.timeout(60)
async def test_a_deleted_unused_claim_is_deallocated_and_released(tmp_path: Path) -> None:
    async with cluster(tmp_path) as (client, _):
        await allocated_claim(client, "orphan", [])
        await client.delete(v1.ResourceClaim, "orphan", NS)
        await eventually("claim gone", lambda: _gone(client, "orphan"))


async def _gone(client: Client, name: str) -> bool:
    return await get_claim(client, name) is None


@pytest.mark.timeout(60)
async def test_a_generated_claim_of_a_finished_pod_is_deleted(tmp_path: Path) -> None:
    async with cluster(tmp_path) as (client, _):
        await create_template(client, "tpl")
        pod = await create_pod(client, "job-pod", [
            {"name": "gpu", "resourceClaimTemplateName": "tpl"}], nodeName="n1")

        async def generated() -> Any:
            live = await client.get(Pod, "job-pod", NS)
            return live.status.resource_claim_statuses
        (status,) = await eventually("claim created", generated)
        name = status.resource_claim_name
        claim = await client.get(v1.ResourceClaim, name, NS)
        body: dict[str, Any] = codec.to_builtins(claim)
        body["metadata"]["finalizers"] = [v1.FINALIZER]
        claim = await client.update(codec.decode(body, v1.ResourceClaim))
        body = codec.to_builtins(claim)
        body["status"] = {"allocation": ALLOCATION, "reservedFor": [ref(pod)]}
        await client.update_status(codec.decode(body, v1.ResourceClaim))
        live = codec.to_builtins(await client.get(Pod, "job-pod", NS))
        live["status"]["phase"] = "Succeeded"
        await client.update_status(codec.decode(live, Pod))
        await eventually("generated claim deleted", lambda: _gone(client, name))


@pytest.mark.timeout(60)
async def test_a_consumer_that_is_not_a_pod_is_kept_and_logged(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    foreign = {"apiGroup": "example.com", "resource": "widgets", "name": "w", "uid": "uid-w"}
    caplog.set_level(logging.WARNING, "kubedra.controllers.resourceclaim")
    async with cluster(tmp_path) as (client, _):
        gone = {"resource": "pods", "name": "gone", "uid": "uid-gone"}
        await allocated_claim(client, "c", [gone, foreign])

        async def pruned() -> Any:
            claim = await client.get(v1.ResourceClaim, "c", NS)
            return claim if len(claim.status.reserved_for or ()) == 1 else None
        claim = await eventually("the gone pod's entry dropped", pruned)
        assert codec.to_builtins(claim.status.reserved_for) == [foreign]
        assert claim.status.allocation is not None
    assert any(r.getMessage() == "claim dra/c: unsupported ReservedFor entry: "
               "{example.com widgets w uid-w}" for r in caplog.records)


@pytest.mark.timeout(60)
async def test_admin_access_with_its_gate_off_is_refused(tmp_path: Path) -> None:
    gates = dataclasses.replace(GATES, dra_admin_access=False)
    async with cluster(tmp_path, gates,
                       {v1.DRA_ADMIN_NAMESPACE_LABEL_KEY: "true"}) as (client, _):
        await create_template(client, "admin", [{"name": "gpu", "exactly": {
            "deviceClassName": "gpu.example.com", "adminAccess": True}}])
        await create_pod(client, "inspector", [
            {"name": "gpu", "resourceClaimTemplateName": "admin"}])

        async def warned() -> Any:
            return [e for e in (await client.list(Event, NS)).items
                    if e.reason == "FailedResourceClaimCreation"]
        (event,) = await eventually("FailedResourceClaimCreation", warned)
        assert event.message == ("PodResourceClaim gpu: admin access is requested, but the "
                                 "feature is disabled")
        assert event.involved_object.name == "inspector"
        assert (await client.list(v1.ResourceClaim, NS)).items == []


# --- pure rules --------------------------------------------------------------------------------


def test_each_release_has_its_claim_generation() -> None:
    assert claim_api(R1_34) is V1_CLAIMS
    assert (V1_CLAIMS.version, V1_CLAIMS.finalizer) == (
        "v1", "resource.kubernetes.io/delete-protection")
    assert (claim_api(R1_30).version, claim_api(R1_30).finalizer) == (
        "v1alpha2", "dra.k8s.io/delete-protection")


def test_deallocation_rule_per_generation() -> None:
    assert deallocates(v1.ResourceClaim(), deleting=False)
    immediate = codec.decode({"spec": {"resourceClassName": "c", "allocationMode": "Immediate"}},
                             v1alpha2.ResourceClaim)
    assert not deallocates(immediate, deleting=False)
    assert deallocates(immediate, deleting=True)
    assert deallocates(v1alpha2.ResourceClaim(), deleting=False)


def test_admin_access_refusal_only_for_v1_templates_with_the_gate_off() -> None:
    template = codec.decode({"spec": {"spec": {"devices": {"requests": [
        {"name": "r", "exactly": {"deviceClassName": "c", "adminAccess": True}}]}}}},
        v1.ResourceClaimTemplate)
    off = dataclasses.replace(GATES, dra_admin_access=False)
    assert refused_template(template, GATES) is None
    assert refused_template(template, off) == (
        "admin access is requested, but the feature is disabled")
    assert refused_template(v1alpha2.ResourceClaimTemplate(), off) is None


def test_unsupported_entry_renders_as_go_does() -> None:
    entry = v1.ResourceClaimConsumerReference(api_group="example.com", resource="widgets",
                                              name="w", uid="1234")
    assert unsupported_entry(entry) == (
        "unsupported ReservedFor entry: {example.com widgets w 1234}")
