"""``kubedra up --fake-nodes`` as a user runs it: a pod with a claim template gets its claim
allocated and is bound; Ctrl-C (SIGINT) stops every component cleanly. Once on the embedded
store, once on a local etcd with two API server replicas (each sees the other's writes)."""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from pathlib import Path

import aiohttp
import pytest

from kubedra.api.core import Pod
from kubedra.api.resource import FINALIZER, ResourceClaim
from kubedra.client import kubeconfig
from kubedra.client.rest import Client
from tests.e2e.dra_workload import kind, pod_body
from tests.etcd_processes import require_etcd

DRIVER = "gpu.example.com"


async def read_until(stream: asyncio.StreamReader, marker: str, timeout: float) -> str:
    seen = ""
    deadline = time.monotonic() + timeout
    while marker not in seen:
        line = await asyncio.wait_for(stream.readline(), max(deadline - time.monotonic(), 0.1))
        if not line:
            raise AssertionError(f"output ended before {marker!r}:\n{seen}")
        seen += line.decode()
    return seen


async def create_workload(client: Client) -> None:
    await client.create_raw(kind("resourceclasses"), {
        "apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClass",
        "metadata": {"name": "gpu"}, "driverName": DRIVER, "structuredParameters": True})
    await client.create_raw(kind("resourceclaimtemplates"), {
        "apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClaimTemplate",
        "metadata": {"name": "gpu", "namespace": "default"},
        "spec": {"spec": {"resourceClassName": "gpu"}}}, "default")
    await client.create_raw(kind("pods"), {
        **pod_body("app"), "metadata": {"name": "app", "namespace": "default"}}, "default")


@pytest.mark.timeout(120)
@pytest.mark.parametrize("store_args", [[], ["--etcd", "--apiservers", "2"]],
                         ids=["sqlite", "etcd-2-apiservers"])
async def test_up_with_fake_nodes(tmp_path: Path, store_args: list[str]) -> None:
    if store_args:
        require_etcd()
    data = tmp_path / "data"
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "from kubedra.cli.main import main; main()", "up",
        "--data-dir", str(data), "--port", "0", "--fake-nodes", "2", "--instances", "2",
        "--driver", DRIVER, *store_args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    assert proc.stdout is not None
    try:
        banner = await read_until(proc.stdout, "Press Ctrl-C to stop.", 60)
        assert f"export KUBECONFIG={data / 'kubeconfig'}" in banner
        config = kubeconfig.load(data / "kubeconfig")
        async with Client(config) as client:
            await create_workload(client)
            deadline = time.monotonic() + 30
            while not (pod := await client.get(Pod, "app", "default")).spec.node_name:
                assert time.monotonic() < deadline, pod.status
                await asyncio.sleep(0.2)
            assert pod.spec.node_name in ("node-0", "node-1")
            claim_name = (pod.status.resource_claim_statuses or [])[0].resource_claim_name
            claim = await client.get(ResourceClaim, claim_name or "", "default")
            assert claim.status.allocation is not None
            assert FINALIZER in (claim.metadata.finalizers or ())
            assert [r.uid for r in claim.status.reserved_for or ()] == [pod.metadata.uid]
        if store_args:  # the second replica serves the same cluster
            async with Client(kubeconfig.load(data / "kubeconfig-1")) as other:
                seen = await other.get(Pod, "app", "default")
                assert seen.spec.node_name == pod.spec.node_name

        proc.send_signal(signal.SIGINT)
        rest = await read_until(proc.stdout, "kubedra stopped.", 30)
        assert await asyncio.wait_for(proc.wait(), 30) == 0, rest
        async with aiohttp.ClientSession() as session:
            with pytest.raises(aiohttp.ClientConnectionError):
                await session.get(config.server + "/readyz")
        logs = data / "logs"
        expected = {"apiserver.log", "scheduler-0.log", "controller-manager.log"}
        if store_args:
            expected |= {"apiserver-1.log", "etcd-0.log"}
        assert {p.name for p in logs.iterdir()} >= expected
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
