"""resource.k8s.io in Kubernetes' protobuf wire format over HTTP: a 1.34 ``kubedra apiserver``
(v1, and v1beta1 and v1beta2 turned on) creates, reads, lists, watches, updates and deletes
claims, classes and slices in protobuf, the same objects in every version; a 1.30 one does the
same for v1alpha2; kubectl 1.34 applies, gets, describes and deletes the kinds on the server
that now also speaks protobuf for them. Bodies are checked with the protobuf runtime's own
classes, and each protobuf answer against the JSON answer for the same object."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml

from kubedra.api import codec
from kubedra.proto import kube
from kubedra.proto.generated import apimachinery_runtime_pb2 as runtime_pb2
from kubedra.proto.generated import (
    resource_v1_pb2,
    resource_v1alpha2_pb2,
    resource_v1beta1_pb2,
    resource_v1beta2_pb2,
)
from tests.e2e.conftest import (
    Kubectl,
    Server,
    _kubectl,
    apiserver_process,
    kubeconfig_session,
    wait_ready,
)
from tests.e2e.test_protobuf import JSON, PB, call

R = "resource.k8s.io"
DRIVER = "gpu.example.com"


@pytest.fixture(scope="module")
def kubeconfig_134(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A 1.34 server that serves v1beta1 and v1beta2 beside v1."""
    with apiserver_process(tmp_path_factory.mktemp("kubedra-pb-134"), "--emulated-version",
                           "1.34", "--runtime-config",
                           f"{R}/v1beta1=true,{R}/v1beta2=true") as kubeconfig:
        wait_ready(kubeconfig)
        yield kubeconfig


@pytest.fixture
async def http134(kubeconfig_134: Path) -> AsyncIterator[aiohttp.ClientSession]:
    async with kubeconfig_session(kubeconfig_134) as s:
        yield s


@pytest.fixture
async def http130(apiserver: Server) -> AsyncIterator[aiohttp.ClientSession]:
    async with kubeconfig_session(apiserver.kubeconfig) as s:
        yield s


async def namespace(http: aiohttp.ClientSession) -> str:
    name = "pbr-" + uuid.uuid4().hex[:8]
    obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    assert (await call(http, "POST", "/api/v1/namespaces", kube.encode(obj), PB, PB))[0] == 201
    return name


def runtime(cls: Any, data: bytes) -> Any:
    """A protobuf answer read by the runtime's generated class, not by our converter."""
    assert data[:4] == b"k8s\x00"
    return cls.FromString(runtime_pb2.Unknown.FromString(data[4:]).raw)


async def same_in_both(http: aiohttp.ClientSession, path: str) -> dict[str, Any]:
    """The object at ``path`` in protobuf, checked to be the model its JSON answer is."""
    status, ctype, data = await call(http, "GET", path, accept=PB)
    assert (status, ctype) == (200, PB), data
    status, ctype, text = await call(http, "GET", path, accept=JSON)
    assert (status, ctype) == (200, JSON), text
    obj = kube.decode(data)
    assert codec.to_builtins(codec.decode_object(obj)) == \
        codec.to_builtins(codec.decode_object(json.loads(text)))
    return obj


async def created(http: aiohttp.ClientSession, path: str, obj: dict[str, Any]) -> bytes:
    status, ctype, data = await call(http, "POST", path, kube.encode(obj), PB, PB)
    assert (status, ctype) == (201, PB), kube.decode(data) if data[:4] == b"k8s\x00" else data
    return data


async def next_events(resp: aiohttp.ClientResponse, count: int) -> list[tuple[str, Any]]:
    buf = bytearray()
    events: list[tuple[str, Any]] = []
    async with asyncio.timeout(30):
        while len(events) < count:
            buf += await resp.content.readany()
            events += kube.watch_events(buf)  # each complete event taken from buf
    return events


# --- resource.k8s.io/v1 of 1.34 ------------------------------------------------------------------


def claim(name: str) -> dict[str, Any]:
    return {"apiVersion": f"{R}/v1", "kind": "ResourceClaim", "metadata": {"name": name},
            "spec": {"devices": {
                "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}],
                "constraints": [{"matchAttribute": f"{DRIVER}/numa"}],
                "config": [{"requests": ["gpu"], "opaque": {
                    "driver": DRIVER, "parameters": {"apiVersion": "gpu/v1", "kind": "Cfg",
                                                     "sharing": {"slices": 2}}}}]}}}


async def test_a_claim_in_protobuf_from_create_to_delete(http134: aiohttp.ClientSession) -> None:
    ns = await namespace(http134)
    path = f"/apis/{R}/v1/namespaces/{ns}/resourceclaims"
    async with http134.get(f"{path}?watch=1&timeoutSeconds=30",
                           headers={"Accept": PB}) as watch:
        assert watch.headers["Content-Type"] == f"{PB};stream=watch"
        data = await created(http134, path, claim("c"))
        pb = runtime(resource_v1_pb2.ResourceClaim, data)
        assert pb.metadata.uid and pb.spec.devices.requests[0].exactly.count == 1  # defaulted
        opaque = pb.spec.devices.config[0].deviceConfiguration.opaque
        assert json.loads(opaque.parameters.raw)["sharing"] == {"slices": 2}
        obj = await same_in_both(http134, f"{path}/c")
        # the status in protobuf: an allocation and a device's conditions and data
        obj["status"] = {
            "allocation": {"devices": {"results": [
                {"request": "gpu", "driver": DRIVER, "pool": "n1", "device": "gpu-0"}]},
                "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}},
            "devices": [{"driver": DRIVER, "pool": "n1", "device": "gpu-0",
                         "data": {"health": "ok"},
                         "conditions": [{"type": "Ready", "status": "True", "reason": "Up",
                                         "message": "", "lastTransitionTime":
                                         "2024-05-01T10:00:00Z"}]}]}
        status, ctype, data = await call(http134, "PUT", f"{path}/c/status", kube.encode(obj),
                                         PB, PB)
        assert (status, ctype) == (200, PB), kube.decode(data)
        pb = runtime(resource_v1_pb2.ResourceClaim, data)
        assert pb.status.allocation.devices.results[0].device == "gpu-0"
        assert pb.status.devices[0].data.raw == b'{"health":"ok"}'
        assert pb.status.devices[0].conditions[0].lastTransitionTime.seconds == 1714557600
        await same_in_both(http134, f"{path}/c")
        status, ctype, data = await call(http134, "GET", path, accept=PB)
        assert (status, ctype) == (200, PB)
        listed = runtime(resource_v1_pb2.ResourceClaimList, data)
        assert [i.metadata.name for i in listed.items] == ["c"]
        events = await next_events(watch, 2)
    assert [(t, o["metadata"]["name"]) for t, o in events] == [("ADDED", "c"), ("MODIFIED", "c")]
    assert events[1][1]["status"]["allocation"]["devices"]["results"][0]["pool"] == "n1"
    options = kube.encode({"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0})
    assert (await call(http134, "DELETE", f"{path}/c", options, PB, PB))[0] == 200
    assert (await call(http134, "GET", f"{path}/c", accept=PB))[0] == 404


def device_slice(name: str, version: str) -> dict[str, Any]:
    device = {"attributes": {"model": {"string": "a100"}, f"{DRIVER}/numa": {"int": 0},
                             "mig": {"bool": False}, "driverVersion": {"version": "1.2.3"}},
              "capacity": {"memory": {"value": "80Gi"}, f"{DRIVER}/cores": {"value": "1500m"}}}
    devices = [{"name": "gpu-0", "basic": device} if version == "v1beta1"
               else {"name": "gpu-0", **device}]
    return {"apiVersion": f"{R}/{version}", "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {"driver": DRIVER, "nodeName": name,
                     "pool": {"name": name, "generation": 2**40, "resourceSliceCount": 1},
                     "devices": devices}}


async def test_classes_and_slices_in_protobuf_in_every_version(
        http134: aiohttp.ClientSession) -> None:
    suffix = uuid.uuid4().hex[:6]
    gpu = {"apiVersion": f"{R}/v1", "kind": "DeviceClass", "metadata": {"name": f"gpu-{suffix}"},
           "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}],
                    "config": [{"opaque": {"driver": DRIVER, "parameters": {"mode": "x"}}}]}}
    data = await created(http134, f"/apis/{R}/v1/deviceclasses", gpu)
    pb = runtime(resource_v1_pb2.DeviceClass, data)
    assert pb.spec.config[0].deviceConfiguration.opaque.parameters.raw == b'{"mode":"x"}'
    for version in ("v1beta2", "v1beta1"):
        await same_in_both(http134, f"/apis/{R}/{version}/deviceclasses/gpu-{suffix}")
    # written in v1, read in each version (v1beta1: the device's fields under `basic`)
    name = f"n-{suffix}"
    await created(http134, f"/apis/{R}/v1/resourceslices", device_slice(name, "v1"))
    for version, module in (("v1", resource_v1_pb2), ("v1beta2", resource_v1beta2_pb2),
                            ("v1beta1", resource_v1beta1_pb2)):
        path = f"/apis/{R}/{version}/resourceslices/{name}"
        obj = await same_in_both(http134, path)
        assert obj["spec"]["devices"] == device_slice(name, version)["spec"]["devices"]
        pb = runtime(module.ResourceSlice, (await call(http134, "GET", path, accept=PB))[2])
        device = pb.spec.devices[0].basic if version == "v1beta1" else pb.spec.devices[0]
        assert device.attributes[f"{DRIVER}/numa"].HasField("int")  # a pointer's zero
        assert device.capacity["memory"].value.string == "80Gi"
        assert pb.spec.pool.generation == 2**40
    # written in v1beta1, read in v1
    other = f"m-{suffix}"
    await created(http134, f"/apis/{R}/v1beta1/resourceslices", device_slice(other, "v1beta1"))
    obj = await same_in_both(http134, f"/apis/{R}/v1/resourceslices/{other}")
    assert obj["spec"]["devices"] == device_slice(other, "v1")["spec"]["devices"]
    _, _, data = await call(http134, "GET", f"/apis/{R}/v1beta1/resourceslices", accept=PB)
    listed = runtime(resource_v1beta1_pb2.ResourceSliceList, data)
    assert {name, other} <= {i.metadata.name for i in listed.items}


async def test_a_bad_protobuf_claim_is_a_400_not_stored(http134: aiohttp.ClientSession) -> None:
    ns = await namespace(http134)
    path = f"/apis/{R}/v1/namespaces/{ns}/resourceclaims"
    good = kube.encode(claim("bad"))
    for n in range(0, len(good), 9):
        status, _, body = await call(http134, "POST", path, good[:n], PB)
        assert 400 <= status < 500, (n, status, body)
    # an unknown field number is refused, never dropped
    raw = runtime_pb2.Unknown.FromString(good[4:])
    raw.raw += b"\xa8\x06\x01"
    status, _, body = await call(http134, "POST", path, b"k8s\x00" + raw.SerializeToString(), PB,
                                 JSON)
    assert status == 400 and "field 101 is not known" in json.loads(body)["message"]
    _, _, data = await call(http134, "GET", path, accept=PB)
    assert not runtime(resource_v1_pb2.ResourceClaimList, data).items


# --- resource.k8s.io/v1alpha2 of 1.30 ------------------------------------------------------------


async def test_v1alpha2_kinds_in_protobuf(http130: aiohttp.ClientSession) -> None:
    ns = await namespace(http130)
    base = f"/apis/{R}/v1alpha2"
    suffix = uuid.uuid4().hex[:6]
    await created(http130, f"{base}/resourceclasses", {
        "apiVersion": f"{R}/v1alpha2", "kind": "ResourceClass",
        "metadata": {"name": f"gpu-{suffix}"}, "driverName": DRIVER,
        "structuredParameters": False})
    pb = runtime(resource_v1alpha2_pb2.ResourceClass,
                 (await call(http130, "GET", f"{base}/resourceclasses/gpu-{suffix}",
                             accept=PB))[2])
    assert pb.HasField("structuredParameters") and not pb.structuredParameters
    path = f"{base}/namespaces/{ns}/resourceclaims"
    async with http130.get(f"{path}?watch=1&timeoutSeconds=30",
                           headers={"Accept": f"{PB},{JSON}"}) as watch:
        data = await created(http130, path, {
            "apiVersion": f"{R}/v1alpha2", "kind": "ResourceClaim", "metadata": {"name": "c"},
            "spec": {"resourceClassName": f"gpu-{suffix}", "parametersRef": {
                "apiGroup": R, "kind": "ResourceClaimParameters", "name": "p"}}})
        pb = runtime(resource_v1alpha2_pb2.ResourceClaim, data)
        assert pb.spec.allocationMode == "WaitForFirstConsumer"  # defaulted
        await same_in_both(http130, f"{path}/c")
        (kind, obj), = await next_events(watch, 1)
    assert (kind, obj["spec"]["parametersRef"]["name"]) == ("ADDED", "p")
    _, ctype, data = await call(http130, "GET", path)
    assert ctype == PB
    assert [i.metadata.name for i in runtime(resource_v1alpha2_pb2.ResourceClaimList, data).items
            ] == ["c"]
    sl = {"apiVersion": f"{R}/v1alpha2", "kind": "ResourceSlice",
          "metadata": {"name": f"n-{suffix}"}, "nodeName": f"n-{suffix}", "driverName": DRIVER,
          "namedResources": {"instances": [{"name": "gpu-0", "attributes": [
              {"name": "memory", "quantity": "80Gi"}, {"name": "ids", "intSlice": {"ints": [0, 7]}},
              {"name": "mig", "bool": False}]}]}}
    pb = runtime(resource_v1alpha2_pb2.ResourceSlice,
                 await created(http130, f"{base}/resourceslices", sl))
    values = [a.attributeValue for a in pb.resourceModel.namedResources.instances[0].attributes]
    assert values[0].quantity.string == "80Gi" and list(values[1].intSlice.ints) == [0, 7]
    assert values[2].HasField("bool")
    obj = await same_in_both(http130, f"{base}/resourceslices/n-{suffix}")
    assert obj["namedResources"] == sl["namedResources"]
    params = {"apiVersion": f"{R}/v1alpha2", "kind": "ResourceClaimParameters",
              "metadata": {"name": "p"}, "driverRequests": [{"driverName": DRIVER, "requests": [
                  {"namedResources": {"selector": "true"}, "vendorParameters": {"a": 1}}]}]}
    await created(http130, f"{base}/namespaces/{ns}/resourceclaimparameters", params)
    obj = await same_in_both(http130, f"{base}/namespaces/{ns}/resourceclaimparameters/p")
    assert obj["driverRequests"] == params["driverRequests"]


# --- kubectl 1.34 ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def kubectl134(kubeconfig_134: Path, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    return _kubectl("1.34", kubeconfig_134, tmp_path_factory.mktemp("kubectl-pb-home"))


async def test_kubectl_134_on_the_resource_kinds(kubectl134: Kubectl,
                                                 http134: aiohttp.ClientSession) -> None:
    suffix = uuid.uuid4().hex[:6]
    ns = await namespace(http134)
    manifests = [
        {"apiVersion": f"{R}/v1", "kind": "DeviceClass", "metadata": {"name": f"k-{suffix}"},
         "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}},
        device_slice(f"k-{suffix}", "v1"),
        {**claim("kc"), "metadata": {"name": "kc", "namespace": ns}},
    ]
    out = kubectl134.run("apply", "-f", "-", stdin=yaml.safe_dump_all(manifests)).stdout
    for what in (f"deviceclass.resource.k8s.io/k-{suffix}",
                 f"resourceslice.resource.k8s.io/k-{suffix}",
                 "resourceclaim.resource.k8s.io/kc"):
        assert f"{what} created" in out
    got = kubectl134.json("get", "resourceclaim", "kc", "-n", ns, "--show-managed-fields")
    obj = await same_in_both(http134, f"/apis/{R}/v1/namespaces/{ns}/resourceclaims/kc")
    assert codec.to_builtins(codec.decode_object(got)) == \
        codec.to_builtins(codec.decode_object(obj))
    table = kubectl134.run("get", "resourceslices", f"k-{suffix}").stdout
    assert f"k-{suffix}" in table and DRIVER in table
    described = kubectl134.run("describe", "resourceclaim", "kc", "-n", ns).stdout
    assert "Device Class Name:  gpu" in described and "Match Attribute:" in described
    assert "Expression:" in kubectl134.run("describe", "deviceclass", f"k-{suffix}").stdout
    out = kubectl134.run("delete", "-f", "-", stdin=yaml.safe_dump_all(manifests)).stdout
    assert "resourceclaim.resource.k8s.io \"kc\" deleted" in out
    assert (await call(http134, "GET", f"/apis/{R}/v1/resourceslices/k-{suffix}",
                       accept=PB))[0] == 404
