"""Helpers for the node agent end-to-end tests: waiting, the DRA workload (class, claim
parameters, template, pods pinned to a node) and reading back what happened."""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from kubedra.api.core import Event, Pod
from kubedra.api.resource.v1alpha2 import ResourceClaim, ResourceSlice
from kubedra.client.errors import ApiError
from kubedra.client.rest import Client
from tests.e2e.dra_workload import kind

DRIVER = "gpu.example.com"
NS = "node-e2e"
WIPING_DELAY = 12
"""The test kubelets' wiping delay (seconds; 30 by default), for the tests that await a wipe:
longer than a driver's restart, so a restart never sees one."""
WIPING_FLAGS = ("--dra-slice-wiping-delay", f"{WIPING_DELAY}s")


@contextlib.contextmanager
def socket_root() -> Iterator[Path]:
    """A short directory for node roots: a Unix socket path has at most 107 bytes, and
    ``<tmp_path>/<node>/plugins/<driver>/dra.sock`` under pytest's basetemp is longer."""
    with tempfile.TemporaryDirectory(prefix="kd-") as d:
        yield Path(d)


async def eventually(what: str, check: Callable[[], Awaitable[Any]], timeout: float = 30.0,
                     ) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = await check()
            if last:
                return last
        except AssertionError as e:
            last = e
        await asyncio.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}: last {last!r}")


async def slices_of(client: Client, driver: str, node: str | None = None) -> list[ResourceSlice]:
    selector = f"driverName={driver}" + (f",nodeName={node}" if node else "")
    return (await client.list(ResourceSlice, field_selector=selector)).items


def instance_names(s: ResourceSlice) -> list[str]:
    return [i.name for i in (s.named_resources.instances if s.named_resources else [])]


async def create_workload(client: Client, driver: str = DRIVER) -> None:
    with contextlib.suppress(ApiError):
        await client.create_raw(kind("namespaces"), {"apiVersion": "v1", "kind": "Namespace",
                                                     "metadata": {"name": NS}})
    await client.create_raw(kind("resourceclasses"), {
        "apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClass",
        "metadata": {"name": f"{driver}-class"}, "driverName": driver,
        "structuredParameters": True})
    await client.create_raw(kind("resourceclaimparameters"), {
        "apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClaimParameters",
        "metadata": {"name": f"{driver}-one", "namespace": NS},
        "driverRequests": [{"driverName": driver, "vendorParameters": {"mode": "exclusive"},
                            "requests": [{"namedResources": {"selector": "true"}}]}]}, NS)
    await client.create_raw(kind("resourceclaimtemplates"), {
        "apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClaimTemplate",
        "metadata": {"name": driver, "namespace": NS},
        "spec": {"spec": {"resourceClassName": f"{driver}-class", "parametersRef": {
            "apiGroup": "resource.k8s.io", "kind": "ResourceClaimParameters",
            "name": f"{driver}-one"}}}}, NS)


async def create_pod(client: Client, name: str, node: str, policy: str,
                     annotations: dict[str, str], driver: str = DRIVER) -> None:
    await client.create_raw(kind("pods"), {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "annotations": annotations},
        "spec": {"restartPolicy": policy, "terminationGracePeriodSeconds": 5,
                 "nodeSelector": {"kubernetes.io/hostname": node},
                 "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9",
                                 "resources": {"claims": [{"name": "gpu"}]}}],
                 "resourceClaims": [{"name": "gpu",
                                     "source": {"resourceClaimTemplateName": driver}}]}}, NS)


async def pod_claim(client: Client, pod_name: str) -> ResourceClaim:
    pod = await client.get(Pod, pod_name, NS)
    statuses = pod.status.resource_claim_statuses or []
    assert statuses and statuses[0].resource_claim_name, "claim not created yet"
    return await client.get(ResourceClaim, statuses[0].resource_claim_name, NS)


async def phase(client: Client, pod_name: str) -> str:
    return (await client.get(Pod, pod_name, NS)).status.phase or ""


async def allocated(client: Client, pod: str) -> ResourceClaim | None:
    claim = await pod_claim(client, pod)
    return claim if claim.status.allocation is not None else None


async def is_phase(client: Client, pod: str, want: str) -> bool:
    return await phase(client, pod) == want


async def prepared_events(client: Client, pod: str) -> list[str]:
    items = (await client.list(Event, NS)).items
    return [e.message or "" for e in items
            if e.involved_object.name == pod and e.reason == "PreparedDynamicResources"]


async def gone(path: Path) -> bool:
    return not path.exists()


async def deallocated(client: Client, claim: ResourceClaim) -> bool:
    try:
        fresh = await client.get(ResourceClaim, claim.metadata.name or "", NS)
    except Exception:
        return True
    return fresh.status.allocation is None


async def deleted(client: Client, pod: str) -> bool:
    return pod not in {p.metadata.name for p in (await client.list(Pod, NS)).items}


async def logged(path: Path, text: str) -> bool:
    return path.exists() and text in path.read_text()


def log_count(path: Path, text: str) -> int:
    return path.read_text().count(text) if path.exists() else 0


def apiserver_requests(api: Any, verb: str, resource: str) -> float:
    """``apiserver_request_total`` of one verb and resource (``pods/status``), read with the
    official client ``api``."""
    text = api.call_api("/metrics", "GET", auth_settings=["BearerToken"],
                        _preload_content=False)[0].data.decode()
    return sum(sample.value for family in text_string_to_metric_families(text)
               for sample in family.samples
               if sample.name == "apiserver_request_total"
               and (sample.labels["verb"], sample.labels["resource"]) == (verb, resource))
