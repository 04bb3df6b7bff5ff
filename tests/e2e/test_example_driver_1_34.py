"""``kubedra example-driver`` on 1.34, driven by a kubelet played by stubs that protoc generates
in this test from our ``dra_v1.proto``/``dra_v1beta1.proto``/``pluginregistration_v1.proto``
(not the SDK's classes), against a 1.34 API server in its own process:

- registration offers ``v1.DRAPlugin`` then ``v1beta1.DRAPlugin``;
- the driver publishes its devices (typed attributes, capacity) as the node's ResourceSlice,
  owned by the Node;
- ``NodePrepareResources`` (v1, then v1beta1) with namespace/uid/name of v1 claims allocated in
  the API: per request a CDI device (env from the class and claim configs), the CDI file
  written; a wrong uid fails the call with upstream's text; a device of another claim fails
  that claim only; ``NodeUnprepareResources`` removes the file.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import grpc
import pytest

from kubedra.api import codec
from kubedra.api.core import Node
from kubedra.api.meta import ObjectMeta
from kubedra.api.resource import v1
from kubedra.client.rest import Client
from kubedra.driver.testing import ApiServer
from tests.e2e.example_driver import short_root, start_driver
from tests.e2e.test_kubelet_interop import generate_stubs

DRIVER = "gpu.example.com"
NODE = "node-a"


def load(stubs: Path) -> dict[str, ModuleType]:
    sys.path.insert(0, str(stubs))
    try:
        return {name: importlib.import_module(name) for name in (
            "dra_v1_pb2", "dra_v1_pb2_grpc", "dra_v1beta1_pb2", "dra_v1beta1_pb2_grpc",
            "pluginregistration_v1_pb2", "pluginregistration_v1_pb2_grpc")}
    finally:
        sys.path.remove(str(stubs))


async def allocated_claim(client: Client, name: str, device: str) -> v1.ResourceClaim:
    """A claim allocated to ``device`` of our pool as the scheduler writes it, with a config
    from the class and one from the claim."""
    claim = await client.create(codec.decode({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"devices": {"requests": [
            {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}},
        v1.ResourceClaim))
    body: dict[str, Any] = codec.to_builtins(claim)
    body["status"] = {"allocation": {"devices": {
        "results": [{"request": "gpu", "driver": DRIVER, "pool": NODE, "device": device}],
        "config": [
            {"source": "FromClass", "opaque": {"driver": DRIVER,
                                               "parameters": {"mode": "shared"}}},
            {"source": "FromClaim", "requests": ["gpu"],
             "opaque": {"driver": DRIVER, "parameters": {"color": "red"}}}]}}}
    return await client.update_status(codec.decode(body, v1.ResourceClaim))


async def eventually(what: str, check: Any, timeout: float = 60) -> Any:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        found = await check()
        if found:
            return found
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.2)


@pytest.mark.timeout(240)
async def test_example_driver_on_1_34(tmp_path: Path) -> None:
    generate_stubs(tmp_path / "stubs")
    pb = load(tmp_path / "stubs")
    with short_root() as root:
        async with ApiServer(tmp_path / "api") as client:
            await client.create(Node(metadata=ObjectMeta(name=NODE)))
            driver = start_driver(root, "--instances", "4", "--kubeconfig",
                                  str(tmp_path / "api" / "kubeconfig"), node=NODE)
            try:
                await _scenario(client, pb, driver.registration_socket, root)
            finally:
                assert driver.terminate() == 0, driver.log_tail()


async def _scenario(client: Client, pb: dict[str, ModuleType], registration: Path,
                    root: Path) -> None:
    reg, reg_grpc = pb["pluginregistration_v1_pb2"], pb["pluginregistration_v1_pb2_grpc"]
    async with grpc.aio.insecure_channel(f"unix:{registration}") as channel:
        stub = reg_grpc.RegistrationStub(channel)
        info = await stub.GetInfo(reg.InfoRequest(), timeout=10)
        assert (info.type, info.name, list(info.supported_versions)) == (
            "DRAPlugin", DRIVER, ["v1.DRAPlugin", "v1beta1.DRAPlugin"])
        assert info.endpoint == str(root / "plugins" / DRIVER / "dra.sock")
        await stub.NotifyRegistrationStatus(reg.RegistrationStatus(plugin_registered=True),
                                            timeout=10)

    async def published() -> list[v1.ResourceSlice]:
        return (await client.list(v1.ResourceSlice)).items

    (slice_,) = await eventually("the node's ResourceSlice", published)
    assert (slice_.spec.driver, slice_.spec.node_name, slice_.spec.pool.name) == (
        DRIVER, NODE, NODE)
    assert [d.name for d in slice_.spec.devices] == [f"device-0{i}" for i in range(4)]
    first = slice_.spec.devices[0]
    assert first.attributes is not None and first.capacity is not None
    assert first.attributes["driverVersion"].version == "1.34.0"
    assert first.attributes["numa"].int_ == 0 and first.attributes["migCapable"].bool_ is True
    assert str(first.capacity["memory"].value) == "16Gi"
    owner = (slice_.metadata.owner_references or [])[0]
    assert (owner.kind, owner.name) == ("Node", NODE)

    one = await allocated_claim(client, "one", "device-01")
    two = await allocated_claim(client, "two", "device-02")
    clash = await allocated_claim(client, "clash", "device-01")
    cdi_dir = root / "cdi"
    async with grpc.aio.insecure_channel(f"unix:{info.endpoint}") as channel:
        for version, claim in (("v1", one), ("v1beta1", two)):
            msgs, stubs = pb[f"dra_{version}_pb2"], pb[f"dra_{version}_pb2_grpc"]
            dra = stubs.DRAPluginStub(channel)
            ref = msgs.Claim(namespace="default", uid=claim.metadata.uid, name=claim.metadata.name)
            answer = await dra.NodePrepareResources(
                msgs.NodePrepareResourcesRequest(claims=[ref]), timeout=30)
            uid = claim.metadata.uid or ""
            result = answer.claims[uid]
            assert result.error == ""
            (device,) = result.devices
            assert (list(device.request_names), device.pool_name, list(device.cdi_device_ids)) == (
                ["gpu"], NODE, [f"{DRIVER}/test=claim-{uid}-gpu"])
            spec = json.loads((cdi_dir / f"{DRIVER}-{uid}.json").read_text())
            assert spec["kind"] == f"{DRIVER}/test"
            (cdi_device,) = spec["devices"]
            assert cdi_device["name"] == f"claim-{uid}-gpu"
            assert cdi_device["containerEdits"]["env"] == [
                "admin_mode=shared", f"claim_{claim.metadata.name}_gpu=true", "user_color=red"]

        msgs, stubs = pb["dra_v1_pb2"], pb["dra_v1_pb2_grpc"]
        dra = stubs.DRAPluginStub(channel)
        # a claim the kubelet names with another uid: the whole call fails
        with pytest.raises(grpc.aio.AioRpcError) as failed:
            await dra.NodePrepareResources(msgs.NodePrepareResourcesRequest(claims=[
                msgs.Claim(namespace="default", uid="0000", name="one")]), timeout=30)
        assert failed.value.code() == grpc.StatusCode.UNKNOWN
        assert failed.value.details() == "get resource claims: claim default/one got replaced"
        # a device another prepared claim holds fails that claim only
        answer = await dra.NodePrepareResources(msgs.NodePrepareResourcesRequest(claims=[
            msgs.Claim(namespace="default", uid=clash.metadata.uid, name="clash"),
            msgs.Claim(namespace="default", uid=one.metadata.uid, name="one")]), timeout=30)
        assert answer.claims[clash.metadata.uid].error == 'device "device-01" used more than once'
        assert answer.claims[one.metadata.uid].error == ""

        answer = await dra.NodeUnprepareResources(msgs.NodeUnprepareResourcesRequest(claims=[
            msgs.Claim(namespace="default", uid=c.metadata.uid, name=c.metadata.name)
            for c in (one, two)]), timeout=30)
        assert {uid: r.error for uid, r in answer.claims.items()} == {
            one.metadata.uid: "", two.metadata.uid: ""}
        assert list(cdi_dir.iterdir()) == []
