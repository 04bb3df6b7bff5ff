"""A prepare that fails at the gRPC level (the driver process dies in the middle of
``NodePrepareResources``) gives the pod one-line Warning events in kubelet's wording
(``Failed to prepare dynamic resources: NodePrepareResources failed: rpc error: code =
Unavailable desc = ...``), and the node agent's log carries the error on one line, with no
Python repr or traceback. Real processes: API server, scheduler, controller manager,
``kubedra kubelet`` and a driver built with the SDK."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from kubedra.api.core import Event
from kubedra.cli.localcluster import Component, LocalCluster
from kubedra.client import kubeconfig
from kubedra.client.rest import Client
from tests.e2e.node_support import NS, create_pod, create_workload, eventually, socket_root

DRIVER = "dies.example.com"
NODE = "node-x"
DRIVER_SCRIPT = """
import asyncio, os, signal, sys

from kubedra.api.resource.v1alpha2 import NamedResourcesInstance
from kubedra.driver import Driver


async def prepare(claim):
    os.kill(os.getpid(), signal.SIGKILL)  # gone in the middle of the call
    return []


async def unprepare(claim):
    return None


asyncio.run(Driver(sys.argv[1], prepare=prepare, unprepare=unprepare, root_dir=sys.argv[2],
                   instances=[NamedResourcesInstance(name="gpu-0")]).run())
"""
FAILED = re.compile(r"Failed to prepare dynamic resources: NodePrepareResources failed: "
                    r"rpc error: code = Unavailable desc = \S.*")


@pytest.mark.timeout(300)
async def test_failed_prepare_event_is_one_line(tmp_path: Path) -> None:
    script = tmp_path / "dying_driver.py"
    script.write_text(DRIVER_SCRIPT)
    logs = tmp_path / "logs"
    logs.mkdir()
    cluster = LocalCluster(tmp_path / "cluster", emulated_version="1.30")
    with socket_root() as sockets:
        async with cluster, Client(kubeconfig.load(cluster.kubeconfig_path)) as client:
            kubelet = Component("kubelet", [
                "kubelet", "--kubeconfig", str(cluster.node_kubeconfig(NODE)), "--node-name",
                NODE, "--root-dir", str(sockets), "-v"], logs / "kubelet.log")
            driver = Component("driver", [str(script), DRIVER, str(sockets)],
                               logs / "driver.log", binary=sys.executable)
            try:
                await kubelet.start()
                await driver.start()
                await create_workload(client, DRIVER)
                await create_pod(client, "p", NODE, "Never", {}, DRIVER)

                async def failures() -> list[str]:
                    return [e.message or "" for e in (await client.list(Event, NS)).items
                            if e.involved_object.name == "p"
                            and e.reason == "FailedPrepareDynamicResources"]

                messages = await eventually("a FailedPrepareDynamicResources event",
                                            failures, 120)
            finally:
                await driver.stop()
                await kubelet.stop()
    assert FAILED.fullmatch(messages[0]), messages
    assert all("\n" not in m and "AioRpcError" not in m for m in messages), messages
    log = (logs / "kubelet.log").read_text()
    assert "Failed to prepare dynamic resources of pod p failed: NodePrepareResources " \
           "failed: rpc error: code = Unavailable desc = " in log
    assert "AioRpcError" not in log and "Traceback" not in log, log[-3000:]
