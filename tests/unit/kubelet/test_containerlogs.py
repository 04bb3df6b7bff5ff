"""What a simulated container prints and how the node reads it back: the composed text (both
eras' devices, the env read from real CDI spec files), the CRI log files, and the options of
``/containerLogs`` (tail, timestamps, since, limitBytes, follow)."""

from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path

import pytest

from kubedra.api import codec
from kubedra.api.core import Pod
from kubedra.kubelet.cdi import CDISpecs
from kubedra.kubelet.checkpoint import (
    AllocationResultState,
    ClaimInfoState,
    NamedResult,
    ResourceHandleState,
    StructuredHandleState,
)
from kubedra.kubelet.containerlogs import ContainerLogs, LogOptions, stamp
from kubedra.kubelet.containertext import exit_line, start_lines
from kubedra.kubelet.devicestate import (
    ClaimState,
    ClaimStates,
    DeviceCheckpoint,
    DeviceState,
    DriverState,
)
from kubedra.kubelet.ledger import DriverDevices, PreparedDevice
from kubedra.kubelet.manager import held_devices


def _pod(claims: list[dict[str, object]], container_claims: list[dict[str, str]],
         statuses: list[dict[str, str]] | None = None) -> Pod:
    return codec.decode(json.dumps({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ns", "uid": "u1"},
        "spec": {"resourceClaims": claims, "containers": [
            {"name": "c", "image": "busybox:1.36", "command": ["sh", "-c"], "args": ["export"],
             "resources": {"claims": container_claims}}]},
        "status": {"resourceClaimStatuses": statuses or []}}).encode(), Pod)


def _write_spec(directory: Path, name: str, spec: dict[str, object]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / name).write_text(json.dumps(spec))


def test_v1_30_devices_and_their_env(tmp_path: Path) -> None:
    cdi = tmp_path / "cdi"
    _write_spec(cdi, "gpu.json", {
        "cdiVersion": "0.3.0", "kind": "gpu.example.com/test",
        "containerEdits": {"env": ["DRIVER=gpu"]},
        "devices": [{"name": "claim-1-instance-0",
                     "containerEdits": {"env": ["GPU_DEVICE_0=instance-0"]}},
                    {"name": "other", "containerEdits": {"env": ["NOT_MINE=1"]}}]})
    (cdi / "broken.json").write_text("{")  # skipped, as a runtime skips a bad spec
    pod = _pod([{"name": "gpu", "source": {"resourceClaimTemplateName": "t"}}],
               [{"name": "gpu"}], [{"name": "gpu", "resourceClaimName": "p-gpu-abcde"}])
    held = {"p-gpu-abcde": [DriverDevices(
        "gpu.example.com", (PreparedDevice(pool="node-0", device="instance-0"),),
        ("gpu.example.com/test=claim-1-instance-0",))]}
    lines = start_lines(pod, pod.spec.containers[0], held, CDISpecs([cdi]).env)
    assert lines == [
        'kubedra: container c started: image busybox:1.36, command ["sh", "-c", "export"]',
        "kubedra: claim p-gpu-abcde: driver gpu.example.com pool node-0 device instance-0",
        "kubedra: claim p-gpu-abcde: driver gpu.example.com cdi "
        "gpu.example.com/test=claim-1-instance-0",
        'declare -x DRIVER="gpu"',
        'declare -x GPU_DEVICE_0="instance-0"',
    ]
    assert exit_line("c", 3, "Error") == "kubedra: container c exited with code 3 (Error)"


def test_v1_34_devices_of_one_request(tmp_path: Path) -> None:
    """A container naming one request of a claim gets that request's devices only."""
    cdi = tmp_path / "cdi"
    _write_spec(cdi, "gpu.yaml", {
        "cdiVersion": "0.5.0", "kind": "gpu.example.com/gpu",
        "devices": [{"name": "gpu-0", "containerEdits": {"env": ["GPU_DEVICE_0=gpu-0"]}},
                    {"name": "gpu-1", "containerEdits": {"env": ["GPU_DEVICE_1=gpu-1"]}}]})
    pod = _pod([{"name": "gpus", "resourceClaimName": "shared"}],
               [{"name": "gpus", "request": "big"}])
    held = {"shared": [DriverDevices("gpu.example.com", (
        PreparedDevice("pool-a", "gpu-0", ("big",), ("gpu.example.com/gpu=gpu-0",)),
        PreparedDevice("pool-a", "gpu-1", ("small",), ("gpu.example.com/gpu=gpu-1",))),
        ("gpu.example.com/gpu=gpu-0", "gpu.example.com/gpu=gpu-1"))]}
    lines = start_lines(pod, pod.spec.containers[0], held, CDISpecs([cdi]).env)
    assert lines[1:] == [
        "kubedra: claim shared request big: driver gpu.example.com pool pool-a device gpu-0 "
        "cdi gpu.example.com/gpu=gpu-0",
        'declare -x GPU_DEVICE_0="gpu-0"',
    ]


def test_no_claims_no_command() -> None:
    pod = _pod([], [])
    pod.spec.containers[0].command = None
    pod.spec.containers[0].args = None
    assert start_lines(pod, pod.spec.containers[0], {}, CDISpecs([]).env) == [
        "kubedra: container c started: image busybox:1.36, command (image default)"]


def _logs(tmp_path: Path) -> tuple[ContainerLogs, Path]:
    logs = ContainerLogs(tmp_path)
    path = logs.path(_pod([], []), "c", 0)
    return logs, path


async def _read(logs: ContainerLogs, path: Path, opts: LogOptions) -> bytes:
    out: list[bytes] = []

    async def write(data: bytes) -> None:
        out.append(data)

    await logs.read(path, opts, write)
    return b"".join(out)


async def test_file_format_tail_timestamps_limit(tmp_path: Path) -> None:
    logs, path = _logs(tmp_path)
    assert path == tmp_path / "pod-logs" / "ns_p_u1" / "c" / "0.log"
    logs.start(path, lambda: ["one", "two"])
    logs.end(path, ["three"])
    record = path.read_text().splitlines()[0]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z stdout F one", record)
    assert await _read(logs, path, LogOptions()) == b"one\ntwo\nthree\n"
    assert await _read(logs, path, LogOptions(tail_lines=1)) == b"three\n"
    assert await _read(logs, path, LogOptions(tail_lines=0)) == b""
    assert await _read(logs, path, LogOptions(limit_bytes=6)) == b"one\ntw"
    stamped = await _read(logs, path, LogOptions(timestamps=True, tail_lines=1))
    assert re.fullmatch(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z three\n", stamped)
    assert await _read(logs, path, LogOptions(since=time.time() + 60)) == b""
    assert await _read(logs, path, LogOptions(since=time.time() - 60)) == b"one\ntwo\nthree\n"


async def test_a_resumed_run_prints_its_start_once(tmp_path: Path) -> None:
    """An agent restarted under a running container does not print its first lines again."""
    logs, path = _logs(tmp_path)
    logs.start(path, lambda: ["hello"])
    again = ContainerLogs(tmp_path)
    again.start(path, lambda: ["hello"])
    assert again.running(path)
    assert await _read(again, path, LogOptions()) == b"hello\n"


@pytest.mark.timeout(30)
async def test_follow_streams_until_the_instance_ends(tmp_path: Path) -> None:
    logs, path = _logs(tmp_path)
    logs.start(path, lambda: ["start"])
    got: list[bytes] = []
    first = asyncio.Event()

    async def write(data: bytes) -> None:
        got.append(data)
        first.set()

    follower = asyncio.create_task(logs.read(path, LogOptions(follow=True), write))
    await asyncio.wait_for(first.wait(), 10)
    assert not follower.done()
    logs.append(path, ["middle"])
    logs.end(path, ["end"])
    await asyncio.wait_for(follower, 10)
    assert b"".join(got) == b"start\nmiddle\nend\n"
    # a finished instance: follow returns at once
    assert await _read(logs, path, LogOptions(follow=True, tail_lines=1)) == b"end\n"


def test_removed_with_the_pod(tmp_path: Path) -> None:
    logs, path = _logs(tmp_path)
    logs.start(path, lambda: ["x"])
    logs.remove(_pod([], []))
    assert not path.exists() and not logs.running(path)


def test_a_restarted_agent_drops_the_logs_of_gone_pods(tmp_path: Path) -> None:
    logs, path = _logs(tmp_path)
    logs.start(path, lambda: ["x"])
    logs.prune({"u1"})
    assert path.exists()
    logs.prune({"other"})
    assert not path.parent.parent.exists()


def test_stamp_is_rfc3339_with_nanoseconds() -> None:
    assert stamp(1_700_000_000_000_000_123) == "2023-11-14T22:13:20.000000123Z"


def test_what_each_checkpoint_format_holds(tmp_path: Path) -> None:
    """The devices a container is told about come from the era's checkpoint entry."""
    info = ClaimInfoState(DriverName="gpu.example.com", ResourceHandles=[ResourceHandleState(
        driverName="gpu.example.com", structuredData=StructuredHandleState(
            nodeName="node-0", results=[AllocationResultState(
                namedResources=NamedResult(name="instance-1"))]))],
        CDIDevices={"gpu.example.com": ["gpu.example.com/test=c-instance-1"]})
    assert held_devices(info) == [DriverDevices(
        "gpu.example.com", (PreparedDevice("node-0", "instance-1"),),
        ("gpu.example.com/test=c-instance-1",))]
    state = ClaimState(ClaimName="c", DriverState={"gpu.example.com": DriverState(Devices=[
        DeviceState(PoolName="pool", DeviceName="gpu-0", RequestNames=["r"],
                    CDIDeviceIDs=["gpu.example.com/gpu=gpu-0"])])})
    assert ClaimStates(DeviceCheckpoint(tmp_path)).held(state) == [DriverDevices(
        "gpu.example.com", (PreparedDevice("pool", "gpu-0", ("r",),
                                           ("gpu.example.com/gpu=gpu-0",)),),
        ("gpu.example.com/gpu=gpu-0",))]
