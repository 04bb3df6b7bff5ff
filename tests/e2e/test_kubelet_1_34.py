"""``kubedra kubelet`` on a 1.34 cluster (``--emulated-version 1.34``), against DRA drivers served
by stubs that protoc generates in this test from our ``dra_v1``/``dra_v1beta1`` ``.proto`` files
(not our SDK), each in a process of its own:

- registration chooses the gRPC service, the first of the plugin's ``supported_versions`` the
  kubelet supports (``v1.DRAPlugin`` or ``v1beta1.DRAPlugin``), and refuses a plugin offering
  none with upstream's text;
- a pod bound to the node whose v1 claim is allocated and reserved for it (written here as the
  1.34 scheduler writes them) gets ``NodePrepareResources`` with the claim's namespace, uid and
  name, the devices go into the 1.34 checkpoint, and ``NodeUnprepareResources`` follows;
- ``kill -9`` of the agent, then a restart: the checkpoint is read, the running pod's claim is not
  prepared again, and the claim of a pod deleted meanwhile is unprepared;
- a driver that deregisters for good has its ResourceSlices on the node deleted (after the 30 s
  wiping delay), other drivers' slices stay.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from kubedra.api import codec, kinds
from kubedra.api.core import Pod
from kubedra.api.release import R1_34
from kubedra.api.resource import v1
from kubedra.cli.localcluster import Component, LocalCluster
from kubedra.client import kubeconfig
from kubedra.client.rest import Client
from kubedra.kubelet import devicestate
from tests.e2e.node_support import WIPING_DELAY, WIPING_FLAGS, eventually, socket_root
from tests.e2e.test_kubelet_interop import generate_stubs, read_calls

NODE = "node-134"
NS = "kubelet134"
V1_DRIVER = "v1.example.com"
BETA_DRIVER = "beta.example.com"
ALIEN_DRIVER = "alien.example.com"
BOTH = "v1.DRAPlugin,v1beta1.DRAPlugin"

DRIVER_SCRIPT = '''
import asyncio, json, os, sys
stubs, root, name, offered, served, calls = sys.argv[1:7]
sys.path.insert(0, stubs)
import grpc
import pluginregistration_v1_pb2 as reg, pluginregistration_v1_pb2_grpc as reg_grpc
import dra_v1_pb2, dra_v1_pb2_grpc, dra_v1beta1_pb2, dra_v1beta1_pb2_grpc
APIS = {"v1": (dra_v1_pb2, dra_v1_pb2_grpc), "v1beta1": (dra_v1beta1_pb2, dra_v1beta1_pb2_grpc)}

dra_sock = os.path.join(root, "plugins", name, "dra.sock")
reg_sock = os.path.join(root, "plugins_registry", name + "-reg.sock")

def record(kind, payload):
    with open(calls, "a") as f:
        f.write(json.dumps({"call": kind, **payload}) + "\\n")

class Registration(reg_grpc.RegistrationServicer):
    async def GetInfo(self, request, context):
        return reg.PluginInfo(type="DRAPlugin", name=name, endpoint=dra_sock,
                              supported_versions=offered.split(","))
    async def NotifyRegistrationStatus(self, request, context):
        record("status", {"registered": request.plugin_registered, "error": request.error})
        return reg.RegistrationStatusResponse()

def servicer(version, pb, pb_grpc):
    def refs(request):
        return [{"namespace": c.namespace, "uid": c.uid, "name": c.name} for c in request.claims]
    class Plugin(pb_grpc.DRAPluginServicer):
        async def NodePrepareResources(self, request, context):
            record("prepare", {"service": version, "claims": refs(request)})
            return pb.NodePrepareResourcesResponse(claims={c.uid: pb.NodePrepareResourceResponse(
                devices=[pb.Device(request_names=["gpu"], pool_name="pool", device_name="dev-0",
                                   cdi_device_ids=[name + "/gpu=" + c.name])])
                for c in request.claims})
        async def NodeUnprepareResources(self, request, context):
            record("unprepare", {"service": version, "claims": refs(request)})
            return pb.NodeUnprepareResourcesResponse(claims={
                c.uid: pb.NodeUnprepareResourceResponse() for c in request.claims})
    return Plugin()

async def main():
    os.makedirs(os.path.dirname(dra_sock), exist_ok=True)
    os.makedirs(os.path.dirname(reg_sock), exist_ok=True)
    node = grpc.aio.server()
    for version in served.split(","):
        pb, pb_grpc = APIS[version]
        pb_grpc.add_DRAPluginServicer_to_server(servicer(version, pb, pb_grpc), node)
    node.add_insecure_port("unix://" + dra_sock)
    await node.start()
    registration = grpc.aio.server()
    reg_grpc.add_RegistrationServicer_to_server(Registration(), registration)
    registration.add_insecure_port("unix://" + reg_sock)
    await registration.start()
    await registration.wait_for_termination()

asyncio.run(main())
'''


def kind(name: str) -> kinds.Kind:
    found = kinds.lookup(name, R1_34)
    assert found is not None, name
    return found


class Drivers:
    def __init__(self, tmp_path: Path, root: Path) -> None:
        self.tmp_path, self.root = tmp_path, root
        self.stubs = tmp_path / "stubs"
        generate_stubs(self.stubs)
        self.script = tmp_path / "driver.py"
        self.script.write_text(DRIVER_SCRIPT)
        self.procs: list[asyncio.subprocess.Process] = []

    def calls(self, driver: str) -> Path:
        return self.tmp_path / f"{driver}.jsonl"

    async def start(self, driver: str, offered: str, served: str) -> None:
        log = self.tmp_path / "logs" / f"{driver}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("ab") as out:
            self.procs.append(await asyncio.create_subprocess_exec(
                sys.executable, str(self.script), str(self.stubs), str(self.root), driver,
                offered, served, str(self.calls(driver)), stdout=out, stderr=out))

    async def status(self, driver: str) -> dict[str, Any] | None:
        found = [c for c in read_calls(self.calls(driver)) if c["call"] == "status"]
        return found[-1] if found else None

    async def of(self, driver: str, call: str) -> list[dict[str, Any]]:
        return [c for c in read_calls(self.calls(driver)) if c["call"] == call]

    async def stop(self) -> None:
        for proc in self.procs:
            if proc.returncode is None:
                proc.terminate()
                await proc.wait()


async def claim_for(client: Client, name: str, driver: str, pod: Pod) -> v1.ResourceClaim:
    """A v1 claim, allocated from ``driver`` and reserved for ``pod`` as the 1.34 scheduler
    writes it (the finalizer by an update, then allocation and ``reservedFor``)."""
    claim = await client.create(codec.decode({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": NS, "finalizers": [v1.FINALIZER]},
        "spec": {"devices": {"requests": [
            {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}},
        v1.ResourceClaim))
    body: dict[str, Any] = codec.to_builtins(claim)
    body["status"] = {
        "allocation": {"devices": {"results": [
            {"request": "gpu", "driver": driver, "pool": "pool", "device": "dev-0"}]}},
        "reservedFor": [{"resource": "pods", "name": pod.metadata.name,
                         "uid": pod.metadata.uid}]}
    return await client.update_status(codec.decode(body, v1.ResourceClaim))


async def pod_with_claim(client: Client, name: str, driver: str) -> tuple[Pod, v1.ResourceClaim]:
    """A pod bound to the node (no scheduler involved) using claim ``<name>-claim``."""
    claim_name = f"{name}-claim"
    created = await client.create_raw(kind("pods"), {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
        "spec": {"nodeName": NODE, "restartPolicy": "Always",
                 "terminationGracePeriodSeconds": 5,
                 "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9",
                                 "resources": {"claims": [{"name": "gpu"}]}}],
                 "resourceClaims": [{"name": "gpu", "resourceClaimName": claim_name}]}}, NS)
    pod = codec.decode(created, Pod)
    return pod, await claim_for(client, claim_name, driver, pod)


def claim_refs(calls: list[dict[str, Any]]) -> list[dict[str, str]]:
    return [ref for call in calls for ref in call["claims"]]


async def running(client: Client, name: str) -> bool:
    return (await client.get(Pod, name, NS)).status.phase == "Running"


def checkpoint(root: Path) -> list[devicestate.ClaimState]:
    return devicestate.unmarshal((root / "dra_manager_state").read_bytes())


@pytest.mark.timeout(420)
async def test_kubelet_1_34(tmp_path: Path) -> None:
    with socket_root() as sockets:
        root = sockets / NODE
        cluster = LocalCluster(tmp_path, emulated_version="1.34")
        cluster.node_names.append(NODE)
        drivers = Drivers(tmp_path, root)
        async with cluster, Client(kubeconfig.load(cluster.kubeconfig_path)) as client:
            agent = Component("kubelet", [
                "kubelet", "--kubeconfig", str(cluster.node_kubeconfig(NODE)),
                "--node-name", NODE, "--root-dir", str(root), *WIPING_FLAGS, "-v"],
                tmp_path / "logs" / "kubelet.log")
            await agent.start()
            try:
                await _scenario(client, agent, drivers, root)
            finally:
                await drivers.stop()
                await agent.stop()


async def _scenario(client: Client, agent: Component, drivers: Drivers, root: Path) -> None:
    await client.create_raw(kind("namespaces"), {"apiVersion": "v1", "kind": "Namespace",
                                                 "metadata": {"name": NS}})
    # -- registration: the service chosen, and a plugin offering none the kubelet supports
    await drivers.start(V1_DRIVER, BOTH, "v1,v1beta1")
    await drivers.start(BETA_DRIVER, "v1beta1.DRAPlugin", "v1beta1")
    await drivers.start(ALIEN_DRIVER, "v2.DRAPlugin,1.0.0", "v1")
    for driver in (V1_DRIVER, BETA_DRIVER):
        assert await eventually(f"{driver} registered", lambda d=driver: drivers.status(d),
                                60) == {"call": "status", "registered": True, "error": ""}
    alien = await eventually("alien refused", lambda: drivers.status(ALIEN_DRIVER), 60)
    endpoint = root / "plugins" / ALIEN_DRIVER / "dra.sock"
    assert alien == {"call": "status", "registered": False, "error": (
        "RegisterPlugin error -- plugin validation failed with err: invalid supported gRPC "
        f"versions of DRA driver plugin {ALIEN_DRIVER} at endpoint {endpoint}: none of "
        'services supported by the plugin (["v2.DRAPlugin" "1.0.0"]) are supported by the '
        'kubelet (["v1.DRAPlugin" "v1beta1.DRAPlugin"])')}

    # -- prepare through v1 (offered first) and v1beta1 (offered alone)
    p1, c1 = await pod_with_claim(client, "p1", V1_DRIVER)
    _, c2 = await pod_with_claim(client, "p2", V1_DRIVER)
    _, c3 = await pod_with_claim(client, "p3", BETA_DRIVER)
    for name in ("p1", "p2", "p3"):
        await eventually(f"{name} Running", lambda n=name: running(client, n), 90)
    v1_prepares = await drivers.of(V1_DRIVER, "prepare")
    assert {c["service"] for c in v1_prepares} == {"v1"}
    assert sorted(claim_refs(v1_prepares), key=lambda r: r["name"]) == [
        {"namespace": NS, "uid": c.metadata.uid, "name": c.metadata.name} for c in (c1, c2)]
    beta_prepares = await drivers.of(BETA_DRIVER, "prepare")
    assert [c["service"] for c in beta_prepares] == ["v1beta1"]
    assert claim_refs(beta_prepares) == [
        {"namespace": NS, "uid": c3.metadata.uid, "name": c3.metadata.name}]
    # the 1.34 checkpoint: every claim with its pod and the devices its driver answered
    state = {e.ClaimName: e for e in checkpoint(root)}
    assert set(state) == {"p1-claim", "p2-claim", "p3-claim"}
    assert state["p1-claim"].PodUIDs == {p1.metadata.uid: {}}
    assert state["p1-claim"].DriverState == {V1_DRIVER: devicestate.DriverState(Devices=[
        devicestate.DeviceState(PoolName="pool", DeviceName="dev-0", RequestNames=["gpu"],
                                CDIDeviceIDs=[f"{V1_DRIVER}/gpu=p1-claim"])])}

    # -- kill -9, a pod deleted while the agent is down, restart
    await agent.kill()
    await client.delete(Pod, "p2", NS, grace_period_seconds=0)
    await agent.start()
    unprepared = await eventually("p2's claim unprepared",
                                  lambda: drivers.of(V1_DRIVER, "unprepare"), 90)
    assert claim_refs(unprepared) == [
        {"namespace": NS, "uid": c2.metadata.uid, "name": "p2-claim"}]

    async def p2_claim_checked_out() -> bool:  # written once the driver has answered
        return {e.ClaimName for e in checkpoint(root)} == {"p1-claim", "p3-claim"}

    await eventually("p2's claim out of the checkpoint", p2_claim_checked_out, 10)
    await asyncio.sleep(3)  # time for a wrong re-prepare to show
    assert len(await drivers.of(V1_DRIVER, "prepare")) == len(v1_prepares)
    assert len(await drivers.of(BETA_DRIVER, "prepare")) == 1
    assert await running(client, "p1")

    # -- a pod deleted while the agent runs: unprepared through v1beta1
    await client.delete(Pod, "p3", NS)
    await eventually("p3's claim unprepared", lambda: drivers.of(BETA_DRIVER, "unprepare"), 60)
    assert claim_refs(await drivers.of(BETA_DRIVER, "unprepare")) == [
        {"namespace": NS, "uid": c3.metadata.uid, "name": "p3-claim"}]

    # -- a driver gone for good: its slices on the node are wiped, the others' stay
    for driver in (V1_DRIVER, BETA_DRIVER):
        await client.create(codec.decode({
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": f"{NODE}-{driver}"},
            "spec": {"driver": driver, "nodeName": NODE,
                     "pool": {"name": NODE, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": "dev-0"}]}}, v1.ResourceSlice))
    (root / "plugins_registry" / f"{V1_DRIVER}-reg.sock").unlink()

    async def slices() -> set[str]:
        items = (await client.list(v1.ResourceSlice,
                                   field_selector=f"spec.nodeName={NODE}")).items
        return {s.spec.driver for s in items}

    await asyncio.sleep(WIPING_DELAY / 3)  # well inside the wiping delay: still there
    assert await slices() == {V1_DRIVER, BETA_DRIVER}
    await eventually("v1 driver's slices wiped",
                     lambda: _equal(slices(), {BETA_DRIVER}), 60)
    assert "kubelet: the API server emulates" not in (
        agent.log_path.read_text())  # DRA was served: no "running without" line


async def _equal(got: Any, want: set[str]) -> bool:
    return bool(await got == want)
