"""``kubectl logs`` on ``kubedra up --nodes 1``, real processes in both eras: the API server
proxies ``pods/log`` to the node agent over TLS, which answers with what the simulated
container printed (its devices and the env their CDI specs inject), with ``--tail``,
``--timestamps``, ``--previous``, ``-f`` and upstream's texts and exit codes."""

from __future__ import annotations

import asyncio
import contextlib
import re
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kubedra.cli.kubectl import KubectlUnavailable, ensure_kubectl
from tests.e2e.conftest import Kubectl
from tests.e2e.node_support import socket_root
from tests.e2e.test_up import read_until

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z ")


@contextlib.asynccontextmanager
async def _up(data: Path, *args: str) -> AsyncIterator[Path]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "from kubedra.cli.main import main; main()", "up",
        "--data-dir", str(data), "--port", "0", "--nodes", "1", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    assert proc.stdout is not None
    try:
        await read_until(proc.stdout, "Press Ctrl-C to stop.", 90)
        yield data / "kubeconfig"
    finally:
        if proc.returncode is None:
            proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 40)
            except TimeoutError:
                proc.kill()
                await proc.wait()


def _kubectl(release: str, kubeconfig: Path, home: Path) -> Kubectl:
    try:
        binary = ensure_kubectl(release)
    except KubectlUnavailable as err:
        pytest.skip(str(err))
    return Kubectl(binary, {"PATH": "/usr/bin:/bin", "HOME": str(home),
                            "KUBECONFIG": str(kubeconfig), "KUBECACHEDIR": str(home / "c")})


def _wait_for(kubectl: Kubectl, pod: str, jsonpath: str, want: str,
              timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    got = ""
    while time.monotonic() < deadline:
        got = kubectl.run("get", "pod", pod, "-o", f"jsonpath={jsonpath}", check=False).stdout
        if got == want:
            return
        time.sleep(0.5)
    raise AssertionError(f"pod {pod}: {jsonpath} is {got!r}, not {want!r}")


def _pod(name: str, run_seconds: str, policy: str, exit_code: str = "0") -> str:
    return f"""
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  annotations:
    kubedra.io/run-seconds: "{run_seconds}"
    kubedra.io/exit-code: "{exit_code}"
spec:
  restartPolicy: {policy}
  containers:
  - name: main
    image: busybox:1.36
    command: [sh, -c, export]
"""


@pytest.mark.timeout(300)
async def test_kubectl_logs_1_30(tmp_path: Path) -> None:
    with socket_root() as data:
        async with _up(data, "--emulated-version", "1.30") as kubeconfig:
            await asyncio.to_thread(_logs_1_30, _kubectl("1.30", kubeconfig, tmp_path))


def _logs_1_30(kubectl: Kubectl) -> None:
    for manifest in ("00-namespace.yaml", "gpu-class.yaml", "gpu-claim-parameters.yaml",
                     "gpu-claim-template.yaml", "pod-with-gpu.yaml"):
        kubectl.run("apply", "-f", str(EXAMPLES / manifest))
    _wait_for(kubectl, "gpu-pod", "{.status.phase}", "Succeeded")
    lines = kubectl.run("logs", "gpu-pod").stdout.splitlines()
    assert lines[0] == ("kubedra: container trainer started: image "
                        "registry.example.com/ml/trainer:1.4.2, command "
                        '["python", "-m", "trainer", "--epochs", "10"]'), lines
    claim = kubectl.run("get", "pod", "gpu-pod", "-o",
                        "jsonpath={.status.resourceClaimStatuses[0].resourceClaimName}").stdout
    assert re.fullmatch(rf"kubedra: claim {claim}: driver gpu\.example\.com pool node-0 "
                        r"device instance-\d+", lines[1]), lines
    assert re.fullmatch(rf"kubedra: claim {claim}: driver gpu\.example\.com cdi "
                        r"gpu\.example\.com/test=claim-[0-9a-f-]+-instance-\d+", lines[2]), lines
    # the env the driver's CDI spec injected: its class and claim parameters
    assert 'declare -x admin_kind="ClassConfig"' in lines
    assert 'declare -x user_kind="GpuConfig"' in lines
    assert lines[-1] == "kubedra: container trainer exited with code 0 (Completed)"

    assert kubectl.run("logs", "gpu-pod", "--tail", "1").stdout == lines[-1] + "\n"
    stamped = kubectl.run("logs", "gpu-pod", "--timestamps").stdout.splitlines()
    assert [STAMP.sub("", s) for s in stamped] == lines
    assert all(STAMP.match(s) for s in stamped)

    # unknown names: upstream's texts and kubectl's exit code
    proc = kubectl.run("logs", "gpu-pod", "-c", "nope", check=False)
    assert (proc.returncode, proc.stderr) == (
        1, "error: container nope is not valid for pod gpu-pod\n")
    proc = kubectl.run("get", "--raw", "/api/v1/namespaces/default/pods/gpu-pod/log"
                                       "?container=nope", check=False)
    assert (proc.returncode, proc.stderr) == (
        1, "Error from server (BadRequest): container nope is not valid for pod gpu-pod\n")
    proc = kubectl.run("logs", "nopod", check=False)
    assert proc.returncode == 1 and 'pods "nopod" not found' in proc.stderr
    proc = kubectl.run("logs", "gpu-pod", "--previous", check=False)
    assert (proc.returncode, proc.stderr) == (
        1, 'Error from server (BadRequest): previous terminated container "trainer" in pod '
           '"gpu-pod" not found\n')

    # RBAC: reading pods is not reading their logs
    kubectl.run("create", "role", "pod-reader", "--verb=get,list", "--resource=pods")
    kubectl.run("create", "rolebinding", "jane", "--role=pod-reader", "--user=jane")
    proc = kubectl.run("logs", "gpu-pod", "--as", "jane", check=False)
    assert (proc.returncode, proc.stderr) == (
        1, 'Error from server (Forbidden): pods "gpu-pod" is forbidden: User "jane" cannot '
           'get resource "pods/log" in API group "" in the namespace "default"\n')

    # -f streams until the container exits
    kubectl.run("apply", "-f", "-", stdin=_pod("follow", "6", "Never"))
    _wait_for(kubectl, "follow", "{.status.phase}", "Running")
    started = time.monotonic()
    follow = kubectl.popen("logs", "-f", "follow")
    try:
        out, err = follow.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        follow.kill()
        raise
    assert follow.returncode == 0, err
    assert out.splitlines() == [
        'kubedra: container main started: image busybox:1.36, command ["sh", "-c", "export"]',
        "kubedra: container main exited with code 0 (Completed)"]
    assert time.monotonic() - started > 1.0  # it waited for the exit, not the status

    # --previous: the run before a restart
    kubectl.run("apply", "-f", "-", stdin=_pod("again", "1", "OnFailure", "2"))
    _wait_for(kubectl, "again", "{.status.containerStatuses[0].restartCount}", "1")
    previous = kubectl.run("logs", "again", "--previous").stdout.splitlines()
    assert previous[-1] == "kubedra: container main exited with code 2 (Error)"


@pytest.mark.timeout(300)
async def test_kubectl_logs_1_34(tmp_path: Path) -> None:
    """The 1.34 era's node side serves logs alike (a pod without claims: the 1.34 example
    driver is not part of ``up`` yet)."""
    with socket_root() as data:
        async with _up(data, "--emulated-version", "1.34") as kubeconfig:
            await asyncio.to_thread(_logs_1_34, _kubectl("1.34", kubeconfig, tmp_path))


def _logs_1_34(kubectl: Kubectl) -> None:
    kubectl.run("apply", "-f", "-", stdin=_pod("plain", "1", "Never", "1"))
    _wait_for(kubectl, "plain", "{.status.phase}", "Failed")
    assert kubectl.run("logs", "plain").stdout.splitlines() == [
        'kubedra: container main started: image busybox:1.36, command ["sh", "-c", "export"]',
        "kubedra: container main exited with code 1 (Error)"]
    proc = kubectl.run("get", "--raw", "/api/v1/namespaces/default/pods/plain/log"
                                       "?container=nope", check=False)
    assert (proc.returncode, proc.stderr) == (
        1, "Error from server (BadRequest): container nope is not valid for pod plain\n")
