"""Interop: a DRA driver served by stubs that protoc generates in this test from our ``.proto``
files (not our SDK) registers with ``kubedra kubelet``, gets its instances published as a
ResourceSlice and receives the prepare and unprepare calls of a pod's structured claim."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from kubedra.cli.localcluster import Component, LocalCluster
from kubedra.client import kubeconfig
from kubedra.client.rest import Client
from tests.e2e.node_support import (
    create_pod,
    create_workload,
    eventually,
    instance_names,
    is_phase,
    slices_of,
    socket_root,
)

PROTO_DIR = Path(__file__).resolve().parents[2] / "src" / "kubedra" / "proto"
DRIVER = "interop.example.com"
NODE = "interop-node"

DRIVER_SCRIPT = '''
import asyncio, json, os, sys
stubs, root, name, calls = sys.argv[1:5]
sys.path.insert(0, stubs)
import grpc
import dra_v1alpha3_pb2 as dra, dra_v1alpha3_pb2_grpc as dra_grpc
import pluginregistration_v1_pb2 as reg, pluginregistration_v1_pb2_grpc as reg_grpc
import resource_v1alpha2_pb2 as res

dra_sock = os.path.join(root, "plugins", name, "dra.sock")
reg_sock = os.path.join(root, "plugins_registry", name + "-reg.sock")

def record(kind, payload):
    with open(calls, "a") as f:
        f.write(json.dumps({"call": kind, **payload}) + "\\n")

class Registration(reg_grpc.RegistrationServicer):
    async def GetInfo(self, request, context):
        return reg.PluginInfo(type="DRAPlugin", name=name, endpoint=dra_sock,
                              supported_versions=["1.0.0"])
    async def NotifyRegistrationStatus(self, request, context):
        record("status", {"registered": request.plugin_registered, "error": request.error})
        return reg.RegistrationStatusResponse()

def claims(request):
    return [{"uid": c.uid, "name": c.name, "namespace": c.namespace,
             "handles": [{"node": h.nodeName, "instances": [
                 r.allocationResultModel.namedResources.name for r in h.results]}
                 for h in c.structured_resource_handle]} for c in request.claims]

class Node(dra_grpc.NodeServicer):
    async def NodeListAndWatchResources(self, request, context):
        model = res.ResourceModel()
        model.namedResources.instances.add(name="dev-0")
        model.namedResources.instances.add(name="dev-1")
        yield dra.NodeListAndWatchResourcesResponse(resources=[model])
        await asyncio.Event().wait()
    async def NodePrepareResources(self, request, context):
        record("prepare", {"claims": claims(request)})
        return dra.NodePrepareResourcesResponse(claims={
            c.uid: dra.NodePrepareResourceResponse(cdi_devices=[name + "/dev=" + c.uid])
            for c in request.claims})
    async def NodeUnprepareResources(self, request, context):
        record("unprepare", {"claims": claims(request)})
        return dra.NodeUnprepareResourcesResponse(claims={
            c.uid: dra.NodeUnprepareResourceResponse() for c in request.claims})

async def main():
    os.makedirs(os.path.dirname(dra_sock), exist_ok=True)
    os.makedirs(os.path.dirname(reg_sock), exist_ok=True)
    node = grpc.aio.server()
    dra_grpc.add_NodeServicer_to_server(Node(), node)
    node.add_insecure_port("unix://" + dra_sock)
    await node.start()
    registration = grpc.aio.server()
    reg_grpc.add_RegistrationServicer_to_server(Registration(), registration)
    registration.add_insecure_port("unix://" + reg_sock)
    await registration.start()
    await registration.wait_for_termination()

asyncio.run(main())
'''


def generate_stubs(out: Path) -> None:
    from grpc_tools import protoc

    out.mkdir()
    files = [str(p) for p in sorted(PROTO_DIR.glob("*.proto"))]
    code = protoc.main(["protoc", f"-I{PROTO_DIR}", f"--python_out={out}",
                        f"--grpc_python_out={out}", *files])
    assert code == 0


def read_calls(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.timeout(180)
async def test_driver_from_generated_stubs(tmp_path: Path) -> None:
    with socket_root() as sockets:
        await _interop(tmp_path, sockets / NODE)


async def _interop(tmp_path: Path, root: Path) -> None:
    stubs, calls = tmp_path / "stubs", tmp_path / "calls.jsonl"
    generate_stubs(stubs)
    script = tmp_path / "driver.py"
    script.write_text(DRIVER_SCRIPT)
    cluster = LocalCluster(tmp_path, emulated_version="1.30")
    async with cluster, Client(kubeconfig.load(cluster.kubeconfig_path)) as client:
        agent = Component("kubelet", ["kubelet", "--kubeconfig", str(cluster.node_kubeconfig(NODE)),
                                      "--node-name", NODE, "--root-dir", str(root), "-v"],
                          tmp_path / "logs" / "kubelet.log")
        await agent.start()
        driver = await _spawn(sys.executable, str(script), str(stubs), str(root), DRIVER,
                              str(calls), log=tmp_path / "logs" / "driver.log")
        try:
            async def published() -> bool:
                found = await slices_of(client, DRIVER, NODE)
                return [instance_names(s) for s in found] == [["dev-0", "dev-1"]]
            await eventually("interop slice", published, 90)
            assert {"call": "status", "registered": True, "error": ""} in read_calls(calls)

            await create_workload(client, DRIVER)
            await create_pod(client, "interop", NODE, "Never",
                             {"kubedra.io/run-seconds": "1"}, driver=DRIVER)
            await eventually("pod Succeeded", lambda: is_phase(client, "interop", "Succeeded"),
                             60)

            async def unprepared() -> list[dict[str, Any]]:
                return [c for c in read_calls(calls) if c["call"] == "unprepare"]
            await eventually("unprepare call", unprepared)
            prepares = [c for c in read_calls(calls) if c["call"] == "prepare"]
            assert len(prepares) == 1
            [claim] = prepares[0]["claims"]
            assert claim["namespace"] == "node-e2e" and claim["name"].startswith("interop-")
            [handle] = claim["handles"]
            assert handle["node"] == NODE and handle["instances"][0] in ("dev-0", "dev-1")
        finally:
            driver.terminate()
            await driver.wait()
            await agent.stop()


async def _spawn(*args: str, log: Path) -> asyncio.subprocess.Process:
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        return await asyncio.create_subprocess_exec(*args, stdout=out, stderr=out)
