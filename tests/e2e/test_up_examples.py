"""``kubectl apply -f examples/`` on the cluster ``make up`` starts (``kubedra up --nodes 3``):
every object is created, no ResourceSlice names a Node that does not exist, the example pod
runs with its GPU and the example Job completes."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time

import pytest

from kubedra.api.batch import Job
from kubedra.api.core import Node, Pod
from kubedra.api.resource.v1alpha2 import ResourceSlice
from kubedra.cli.kubectl import KubectlUnavailable, ensure_kubectl
from kubedra.client import kubeconfig
from kubedra.client.rest import Client
from tests.e2e.node_support import socket_root
from tests.e2e.test_up import BANNER_END, UP, read_until
from tests.vectors import EXAMPLES


@pytest.mark.timeout(240)
async def test_examples_run_on_the_make_up_cluster() -> None:
    try:
        binary = ensure_kubectl()
    except KubectlUnavailable as err:
        pytest.skip(str(err))
    with socket_root() as data:
        proc = await asyncio.create_subprocess_exec(
            *UP, "--data-dir", str(data), "--port", "0", "--nodes", "3",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        assert proc.stdout is not None
        try:
            await read_until(proc.stdout, BANNER_END, 90)
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(data),
                   "KUBECONFIG": str(data / "kubeconfig")}
            async with Client(kubeconfig.load(data / "kubeconfig")) as client:
                await _wait_for_slices(client, 3)
                applied = await asyncio.to_thread(
                    subprocess.run, [str(binary), "apply", "-f", str(EXAMPLES)],
                    capture_output=True, text=True, env=env, timeout=60, check=False)
                assert applied.returncode == 0, applied.stderr
                assert "resourceslice" not in applied.stdout, applied.stdout
                nodes = {n.metadata.name for n in (await client.list(Node)).items}
                slices = (await client.list(ResourceSlice)).items
                assert {s.node_name for s in slices} <= nodes, [s.node_name for s in slices]
                deadline = time.monotonic() + 150
                while True:
                    pod = await client.get(Pod, "gpu-pod", "default")
                    job = await client.get(Job, "gpu-training", "default")
                    if pod.status.phase == "Succeeded" and (job.status.succeeded or 0) == 3:
                        break
                    assert pod.status.phase != "Failed", pod.status
                    assert time.monotonic() < deadline, (pod.status, job.status)
                    await asyncio.sleep(0.5)
                assert pod.spec.node_name in nodes
        finally:
            if proc.returncode is None:
                proc.send_signal(signal.SIGINT)
                try:
                    await asyncio.wait_for(proc.wait(), 40)
                except TimeoutError:
                    proc.kill()
                    await proc.wait()


async def _wait_for_slices(client: Client, count: int) -> None:
    deadline = time.monotonic() + 60
    while len((await client.list(ResourceSlice)).items) < count:
        assert time.monotonic() < deadline, "the node agents published no slices"
        await asyncio.sleep(0.2)

