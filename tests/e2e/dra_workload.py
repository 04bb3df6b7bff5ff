"""A DRA workload for the end-to-end tests: fake nodes whose ResourceSlices carry typed
attributes, a structured ResourceClass with a class filter, claim parameters with a selector,
a claim template, and pods using it; plus the checks every allocation must pass."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from kubedra.api import kinds
from kubedra.api.core import Node, Pod
from kubedra.api.release import R1_30
from kubedra.api.resource.v1alpha2 import FINALIZER, ResourceClaim
from kubedra.client.informer import Informer
from kubedra.client.rest import Client
from kubedra.testing import fake_node

DRIVER = "gpu.e2e.kubedra.io"
CLASS = "e2e-gpu"
CLASS_FILTER = 'attributes.string["model"] == "a100"'
CLAIM_SELECTOR = ('attributes.quantity["memory"].compareTo(quantity("40Gi")) >= 0 && '
                  'attributes.version["driver"].isGreaterThan(semver("1.2.0"))')
# Listed first, so a first-fit that ignored the class filter or the selector would take them.
DECOYS = {
    "decoy-model": {"model": "t4", "memory": "80Gi", "driver": "1.4.0"},  # class filter
    "decoy-memory": {"model": "a100", "memory": "16Gi", "driver": "1.4.0"},  # selector
}
GOOD = {"model": "a100", "memory": "80Gi", "driver": "1.4.0"}


def kind(name: str) -> kinds.Kind:
    found = kinds.lookup(name, R1_30)
    assert found is not None, name
    return found


def _instance(name: str, attrs: dict[str, str]) -> dict[str, Any]:
    return {"name": name, "attributes": [
        {"name": "model", "string": attrs["model"]},
        {"name": "memory", "quantity": attrs["memory"]},
        {"name": "driver", "version": attrs["driver"]},
    ]}


async def create_nodes(client: Client, count: int, per_node: int,
                       concurrency: int = 16) -> None:
    """``count`` nodes ``e2e-node-<i>``, each with one slice: the decoys, then ``per_node``
    matching instances ``gpu-<j>``."""
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with gate:
            node = await client.create(fake_node(f"e2e-node-{i:03d}"))
            name = node.metadata.name or ""
            instances = [_instance(n, a) for n, a in DECOYS.items()]
            instances += [_instance(f"gpu-{j}", GOOD) for j in range(per_node)]
            await client.create_raw(kind("resourceslices"), {
                "apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceSlice",
                "metadata": {"name": f"{name}-gpu", "ownerReferences": [
                    {"apiVersion": "v1", "kind": "Node", "name": name,
                     "uid": node.metadata.uid, "controller": True}]},
                "nodeName": name, "driverName": DRIVER,
                "namedResources": {"instances": instances}})

    await asyncio.gather(*(one(i) for i in range(count)))


async def create_class_and_template(client: Client, namespace: str) -> None:
    await client.create_raw(kind("resourceclassparameters"), {
        "apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClassParameters",
        "metadata": {"name": "a100-only", "namespace": namespace},
        "filters": [{"driverName": DRIVER, "namedResources": {"selector": CLASS_FILTER}}]},
        namespace)
    await client.create_raw(kind("resourceclasses"), {
        "apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClass",
        "metadata": {"name": CLASS}, "driverName": DRIVER, "structuredParameters": True,
        "parametersRef": {"apiGroup": "resource.k8s.io", "kind": "ResourceClassParameters",
                          "name": "a100-only", "namespace": namespace}})
    await create_claim_template(client, namespace, "big-gpu", [CLAIM_SELECTOR])


async def create_claim_template(client: Client, namespace: str, parameters: str,
                                selectors: list[str]) -> None:
    """Claim parameters with one request per selector and the claim template ``gpu`` of the
    class using them."""
    await client.create_raw(kind("resourceclaimparameters"), {
        "apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClaimParameters",
        "metadata": {"name": parameters, "namespace": namespace},
        "driverRequests": [{"driverName": DRIVER, "requests": [
            {"namedResources": {"selector": s}} for s in selectors]}]}, namespace)
    await client.create_raw(kind("resourceclaimtemplates"), {
        "apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClaimTemplate",
        "metadata": {"name": "gpu", "namespace": namespace},
        "spec": {"spec": {"resourceClassName": CLASS, "parametersRef": {
            "apiGroup": "resource.k8s.io", "kind": "ResourceClaimParameters",
            "name": parameters}}}}, namespace)


async def create_workload(client: Client, namespace: str, nodes: int, per_node: int) -> None:
    """The namespace, ``nodes`` fake nodes and the class, parameters and claim template."""
    await client.create_raw(kind("namespaces"), {
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    await create_nodes(client, nodes, per_node)
    await create_class_and_template(client, namespace)


def bound_count(pods: Informer[Pod]) -> int:
    return sum(1 for p in pods.store.values() if p.spec.node_name)


def pod_body(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9",
                                 "resources": {"claims": [{"name": "gpu"}]}}],
                 "resourceClaims": [{"name": "gpu",
                                     "source": {"resourceClaimTemplateName": "gpu"}}]},
    }


async def create_pods(client: Client, namespace: str, names: list[str],
                      concurrency: int = 32) -> None:
    gate = asyncio.Semaphore(concurrency)

    async def one(name: str) -> None:
        async with gate:
            await client.create_raw(kind("pods"), {
                **pod_body(name), "metadata": {"name": name, "namespace": namespace}},
                namespace)

    await asyncio.gather(*(one(n) for n in names))


@dataclass
class Allocations:
    """Claims of the namespace: which (node, instance) each allocated claim holds."""

    claims: dict[str, ResourceClaim]
    held: dict[tuple[str, str], list[str]]

    def doubles(self) -> dict[tuple[str, str], list[str]]:
        return {k: v for k, v in self.held.items() if len(v) > 1}


async def allocations(client: Client, namespace: str) -> Allocations:
    claims = {c.metadata.name or "": c
              for c in (await client.list_all(ResourceClaim, namespace)).items}
    held: dict[tuple[str, str], list[str]] = {}
    for name, claim in claims.items():
        alloc = claim.status.allocation
        for handle in (alloc.resource_handles or ()) if alloc else ():
            data = handle.structured_data
            assert data is not None, name
            for result in data.results:
                assert result.named_resources is not None
                held.setdefault((data.node_name, result.named_resources.name), []).append(name)
    return Allocations(claims, held)


def check_bound_pod(pod: Pod, state: Allocations) -> None:
    """The pod's generated claim is allocated on the pod's node, to an instance that passes
    the class filter and the selector, reserved for exactly this pod, with the finalizer."""
    name = pod.metadata.name
    statuses = pod.status.resource_claim_statuses or []
    assert len(statuses) == 1 and statuses[0].resource_claim_name, name
    claim = state.claims[statuses[0].resource_claim_name]
    assert FINALIZER in (claim.metadata.finalizers or ()), name
    alloc = claim.status.allocation
    assert alloc is not None and claim.status.driver_name == DRIVER, name
    handles = alloc.resource_handles or []
    assert len(handles) == 1 and handles[0].structured_data is not None, name
    data = handles[0].structured_data
    assert data.node_name == pod.spec.node_name, name
    assert len(data.results) == 1 and data.results[0].named_resources is not None
    assert data.results[0].named_resources.name.startswith("gpu-"), name
    reserved = [(r.resource, r.name, r.uid) for r in claim.status.reserved_for or ()]
    assert reserved == [("pods", name, pod.metadata.uid)], (name, reserved)


def check_all_bound(pods: Informer[Pod], names: list[str], namespace: str,
                    state: Allocations) -> None:
    """Every pod of ``names`` passes :func:`check_bound_pod`; no instance is held twice."""
    assert not state.doubles()
    assert len(state.held) == len(names)
    for name in names:
        pod = pods.get(name, namespace)
        assert pod is not None, name
        check_bound_pod(pod, state)


async def node_count(client: Client) -> int:
    return len((await client.list_all(Node)).items)
