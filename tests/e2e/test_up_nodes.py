"""``kubedra up --nodes`` as a user runs it: simulated nodes come up Ready with their example
drivers' slices, a pod from a claim template runs with its device, and Ctrl-C stops everything
and removes the drivers' sockets."""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from pathlib import Path

import pytest

from kubedra.api.core import Node, Pod
from kubedra.api.resource.v1alpha2 import ResourceSlice
from kubedra.client import kubeconfig
from kubedra.client.rest import Client
from kubedra.proto import kube
from tests.e2e.conftest import certificate_subject
from tests.e2e.node_support import socket_root
from tests.e2e.test_up import DRIVER, create_workload, read_until


@pytest.mark.timeout(150)
async def test_up_with_simulated_nodes() -> None:
    with socket_root() as data:
        await _up(data)


@pytest.mark.timeout(150)
async def test_up_with_components_speaking_protobuf() -> None:
    """``--kube-api-content-type`` reaches the scheduler, the controller manager and the
    node agents, and the cluster works as with JSON."""
    with socket_root() as data:
        await _up(data, "--kube-api-content-type", kube.MEDIA_TYPE)


def _flagged(data: Path) -> set[str]:
    """The kubedra commands under ``data`` started with ``--kube-api-content-type``."""
    out = set()
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if str(data).encode() in b" ".join(args) and b"--kube-api-content-type" in args:
            out |= {a.decode() for a in args} & {"scheduler", "controller-manager", "node-pool"}
    return out


async def _up(data: Path, *flags: str) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "from kubedra.cli.main import main; main()", "up",
        "--data-dir", str(data), "--port", "0", "--nodes", "3", "--nodes-per-process", "2",
        "--instances", "2", "--emulated-version", "1.30", *flags, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT)
    assert proc.stdout is not None
    try:
        await read_until(proc.stdout, "Press Ctrl-C to stop.", 60)
        expected = {"scheduler", "controller-manager", "node-pool"} if flags else set()
        assert _flagged(data) == expected
        async with Client(kubeconfig.load(data / "kubeconfig")) as client:
            deadline = time.monotonic() + 60
            while True:
                nodes = (await client.list(Node)).items
                slices = (await client.list(ResourceSlice)).items
                ready = {n.metadata.name for n in nodes
                         if any(c.type == "Ready" and c.status == "True"
                                for c in n.status.conditions or ())}
                if ready == {"node-0", "node-1", "node-2"} and len(slices) == 3:
                    break
                assert time.monotonic() < deadline, (ready, len(slices))
                await asyncio.sleep(0.2)
            assert {s.driver_name for s in slices} == {DRIVER}
            await create_workload(client)
            while (pod := await client.get(Pod, "app", "default")).status.phase != "Running":
                assert time.monotonic() < deadline + 30, pod.status
                await asyncio.sleep(0.1)
            cdi = data / "nodes" / (pod.spec.node_name or "") / "cdi"
            assert [p.name.startswith(DRIVER) for p in cdi.iterdir()] == [True]
        assert len(list((data / "nodes").glob("*/plugins_registry/*.sock"))) == 3
        # each node is its own user: the Node authorizer let each publish only its slice
        for i in range(3):
            assert certificate_subject(data / "nodes" / f"node-{i}.kubeconfig") == (
                f"system:node:node-{i}", ["system:nodes"])
        proc.send_signal(signal.SIGINT)
        rest = await read_until(proc.stdout, "kubedra stopped.", 40)
        assert await asyncio.wait_for(proc.wait(), 30) == 0, rest
        assert list((data / "nodes").glob("**/*.sock")) == []
        assert {p.name for p in (data / "logs").iterdir()} >= {"nodes-0.log", "nodes-2.log"}
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
