"""The README's walkthroughs on the cluster ``make up`` starts (the command read from make's dry
run, so it follows the Makefile): the default, 1.34, with ``kubectl apply -f examples/v1.34/``
and kubectl 1.34 (the pod runs with a device of its node, ``kubectl get resourceclaims`` shows
its claim allocated and reserved, ``kubectl logs`` prints the device, the Job completes); then
``make up ARGS="--emulated-version 1.30"`` with ``kubectl apply -f examples/`` and kubectl 1.30
(every object is created, no ResourceSlice names a Node that does not exist, the example pod
runs with its GPU and the example Job completes)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kubedra.api.batch import Job
from kubedra.api.core import Node, Pod
from kubedra.api.resource import v1, v1alpha2
from kubedra.cli.kubectl import KubectlUnavailable, ensure_kubectl
from kubedra.client import kubeconfig
from kubedra.client.rest import Client
from tests.e2e.node_support import socket_root
from tests.e2e.test_up import BANNER_END, KUBEDRA, read_until
from tests.unit.cli.test_makefile import REPO, dry_run
from tests.vectors import EXAMPLES

README = (REPO / "README.md").read_text()
ARGS_1_30 = "--emulated-version 1.30"


def _kubectl(release: str) -> Path:
    try:
        return ensure_kubectl(release)
    except KubectlUnavailable as err:
        pytest.skip(str(err))


@contextlib.asynccontextmanager
async def make_up(data: Path, tmp_path: Path,
                  *args: str) -> AsyncIterator[tuple[dict[str, str], str]]:
    """``make up`` (with make's ``args``) on ``data``, once up: the environment for kubectl,
    as the README has it (``KUBECONFIG``), and the banner."""
    command = dry_run("up", tmp_path, *args)[-1].split()
    assert command[1] == "up", command
    proc = await asyncio.create_subprocess_exec(
        *KUBEDRA, *command[1:], "--data-dir", str(data), "--port", "0",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    assert proc.stdout is not None
    try:
        banner = await read_until(proc.stdout, BANNER_END, 90)
        yield {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(data),
               "KUBECONFIG": str(data / "kubeconfig")}, banner
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGINT)
            try:
                await asyncio.wait_for(proc.wait(), 40)
            except TimeoutError:
                proc.kill()
                await proc.wait()


async def run(binary: Path, env: dict[str, str], *args: str) -> str:
    done = await asyncio.to_thread(subprocess.run, [str(binary), *args], capture_output=True,
                                   text=True, env=env, timeout=60, check=False)
    assert done.returncode == 0, f"kubectl {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


async def _wait_for_slices(client: Client, model: type, count: int) -> None:
    deadline = time.monotonic() + 60
    while len((await client.list(model)).items) < count:
        assert time.monotonic() < deadline, "the node agents published no slices"
        await asyncio.sleep(0.2)


async def _job_completes(client: Client) -> None:
    deadline = time.monotonic() + 150
    while (job := await client.get(Job, "gpu-training", "default")).status.succeeded != 3:
        assert not job.status.failed, job.status
        assert time.monotonic() < deadline, job.status
        await asyncio.sleep(0.5)


@pytest.mark.timeout(300)
async def test_the_1_34_walkthrough_on_make_up(tmp_path: Path) -> None:
    assert "kubectl apply -f examples/v1.34/" in README
    assert "kubedra fetch-kubectl --version 1.34" in README
    binary = _kubectl("1.34")
    with socket_root() as data:
        async with make_up(data, tmp_path) as (env, banner), \
                Client(kubeconfig.load(data / "kubeconfig")) as client:
            assert "kubectl apply -f examples/v1.34/" in banner
            await _wait_for_slices(client, v1.ResourceSlice, 3)
            nodes = {n.metadata.name for n in (await client.list(Node)).items}
            applied = await run(binary, env, "apply", "-f", str(EXAMPLES / "v1.34"))
            assert "deviceclass.resource.k8s.io/gpu.example.com created" in applied
            deadline = time.monotonic() + 120
            while (pod := await client.get(Pod, "gpu-pod", "default")).status.phase != "Running":
                assert pod.status.phase in (None, "Pending"), pod.status
                assert time.monotonic() < deadline, pod.status
                await asyncio.sleep(0.5)
            assert pod.spec.node_name in nodes
            (status,) = pod.status.resource_claim_statuses or []
            claim = await client.get(v1.ResourceClaim, status.resource_claim_name or "",
                                     "default")
            assert claim.status.allocation is not None
            (result,) = claim.status.allocation.devices.results or []
            assert (result.driver, result.pool) == ("gpu.example.com", pod.spec.node_name)
            table = (await run(binary, env, "get", "resourceclaims")).splitlines()
            assert table[0].split() == ["NAME", "STATE", "AGE"], table
            assert [claim.metadata.name, "allocated,reserved"] in [
                line.split()[:2] for line in table], table
            logs = await run(binary, env, "logs", "gpu-pod")
            assert (f"request gpu: driver gpu.example.com pool {pod.spec.node_name} device "
                    f"{result.device}") in logs, logs
            assert 'declare -x user_mode="training"' in logs, logs
            await _job_completes(client)


@pytest.mark.timeout(300)
async def test_the_1_30_walkthrough_on_make_up(tmp_path: Path) -> None:
    assert f'make up ARGS="{ARGS_1_30}"' in README
    assert "kubectl apply -f examples/\n" in README
    binary = _kubectl("1.30")
    with socket_root() as data:
        async with make_up(data, tmp_path, f"ARGS={ARGS_1_30}") as (env, banner), \
                Client(kubeconfig.load(data / "kubeconfig")) as client:
            assert "kubectl apply -f examples/\n" in banner
            await _wait_for_slices(client, v1alpha2.ResourceSlice, 3)
            applied = await run(binary, env, "apply", "-f", str(EXAMPLES))
            assert "resourceslice" not in applied, applied
            nodes = {n.metadata.name for n in (await client.list(Node)).items}
            slices = (await client.list(v1alpha2.ResourceSlice)).items
            assert {s.node_name for s in slices} <= nodes, [s.node_name for s in slices]
            deadline = time.monotonic() + 150
            while (pod := await client.get(Pod, "gpu-pod", "default")).status.phase != "Succeeded":
                assert pod.status.phase != "Failed", pod.status
                assert time.monotonic() < deadline, pod.status
                await asyncio.sleep(0.5)
            assert pod.spec.node_name in nodes
            await _job_completes(client)
