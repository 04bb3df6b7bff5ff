"""docs/driver-sdk.md as a driver author follows it, with real processes: the API server,
scheduler and controller manager, a ``kubedra kubelet`` for a node of its own, the doc's
``mydriver.py`` run as a program, and the doc's manifests. The driver's instances become a
slice, the doc's pod gets one of them, the driver logs the claim prepared and unprepared."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
from pathlib import Path

import pytest

from kubedra.api import codec
from kubedra.api.core import Event, Pod
from kubedra.cli.localcluster import Component, LocalCluster
from kubedra.client import kubeconfig
from kubedra.client.rest import Client
from tests.e2e.node_support import eventually, slices_of, socket_root
from tests.unit.driver.helpers import blocks, write_project

NODE = "tutorial-node"
DRIVER = "mygpu.example.com"


@pytest.mark.timeout(180)
async def test_the_tutorial_driver_serves_the_tutorial_pod(tmp_path: Path) -> None:
    with socket_root() as short:
        project, root = short / "project", short / "root"
        project.mkdir()
        write_project(project)
        async with LocalCluster(tmp_path, emulated_version="1.30") as cluster, \
                Client(kubeconfig.load(cluster.kubeconfig_path)) as client:
            agent = Component("kubelet", [
                "kubelet", "--kubeconfig", str(cluster.node_kubeconfig(NODE)), "--node-name",
                NODE, "--root-dir", str(root)], tmp_path / "logs" / "kubelet.log")
            log = (tmp_path / "driver.log").open("w")
            driver = await asyncio.create_subprocess_exec(
                sys.executable, "mydriver.py", cwd=project, stdout=log, stderr=log,
                env={**os.environ, "KUBELET_ROOT_DIR": str(root), "CDI_DIR": str(root / "cdi")})
            try:
                await agent.start()
                await eventually("the driver's slice",
                                 lambda: slices_of(client, DRIVER, NODE), 60)
                await _apply(client, blocks("yaml")[0])

                async def done() -> bool:
                    pod = await client.get(Pod, "uses-mygpu", "default")
                    assert pod.status.phase != "Failed", pod.status
                    return pod.status.phase == "Succeeded"

                await eventually("the pod to succeed", done, 90)
                pod = await client.get(Pod, "uses-mygpu", "default")
                assert pod.spec.node_name == NODE
                events = [e.message or "" for e in (await client.list(Event, "default")).items
                          if e.reason == "PreparedDynamicResources"]
                assert any(re.search(rf"{DRIVER}/gpu=gpu-[01]", m) for m in events), events
                text = (tmp_path / "driver.log").read_text

                async def unprepared() -> bool:
                    return "unprepared claim default/uses-mygpu-gpu-" in text()

                await eventually("the claim unprepared", unprepared, 60)
                assert re.search(r"INFO kubedra\.driver\.node: prepared claim "
                                 rf"default/uses-mygpu-gpu-\S+ \(\S+\): {DRIVER}/gpu=gpu-[01]",
                                 text()), text()
            finally:
                driver.send_signal(signal.SIGTERM)
                assert await asyncio.wait_for(driver.wait(), 30) == 0
                log.close()
                await agent.stop()


async def _apply(client: Client, manifests: str) -> None:
    for doc in codec.load_documents(manifests.encode()):
        await client.create_raw(codec.kind_of(doc), doc, doc["metadata"].get("namespace"))
