"""The README's own ``make up ARGS="--emulated-version 1.30 --fake-nodes 10 --instances 4"``: the
command make runs (read from its dry run) gives ten fake Nodes and no node agent to take them
over, and ``kubectl apply -f examples/`` works: the example pod's claim is allocated from a fake
Node's slice and the pod is bound there (no agent runs it: it stays Pending, as the README
says), and the example Job's pods get claims and nodes too."""

from __future__ import annotations

import asyncio
import signal
import subprocess
from pathlib import Path

import pytest

from kubedra.api.core import Node, Pod
from kubedra.api.resource.v1alpha2 import ResourceClaim
from kubedra.cli.kubectl import KubectlUnavailable, ensure_kubectl
from kubedra.client import kubeconfig
from kubedra.client.rest import Client
from tests.e2e.node_support import eventually
from tests.e2e.test_up import BANNER_END, UP, pids_using, read_until
from tests.unit.cli.test_makefile import REPO, dry_run

README_ARGS = "--emulated-version 1.30 --fake-nodes 10 --instances 4"


@pytest.mark.timeout(300)
async def test_readme_fake_nodes_example(tmp_path: Path) -> None:
    try:
        kubectl = ensure_kubectl("1.30")
    except KubectlUnavailable as err:
        pytest.skip(str(err))
    assert f'make up ARGS="{README_ARGS}"' in (REPO / "README.md").read_text()
    command = dry_run("up", tmp_path, f"ARGS={README_ARGS}")[-1].split()
    assert command[1] == "up"
    data = tmp_path / "data"
    proc = await asyncio.create_subprocess_exec(
        *UP, *command[2:], "--data-dir", str(data), "--port", "0",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    assert proc.stdout is not None
    try:
        await read_until(proc.stdout, BANNER_END, 120)
        # the API server, its store committer, the scheduler, the controller manager: no agent
        assert len(pids_using(data) - {proc.pid}) == 4
        env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
               "KUBECONFIG": str(data / "kubeconfig")}
        applied = await asyncio.to_thread(
            subprocess.run, [str(kubectl), "apply", "-f", str(REPO / "examples")], env=env,
            capture_output=True, text=True, timeout=120, check=False)
        assert applied.returncode == 0, applied.stderr
        async with Client(kubeconfig.load(data / "kubeconfig")) as client:
            nodes = {n.metadata.name for n in (await client.list(Node)).items}
            assert nodes == {f"node-{i}" for i in range(10)}

            async def bound(name: str) -> Pod | None:
                pod = await client.get(Pod, name, "default")
                return pod if pod.spec.node_name else None

            pod = await eventually("gpu-pod bound", lambda: bound("gpu-pod"), 120)
            assert pod.spec.node_name in nodes
            claim_name = (pod.status.resource_claim_statuses or [])[0].resource_claim_name
            claim = await client.get(ResourceClaim, claim_name or "", "default")
            assert claim.status.allocation is not None

            async def job_pods_bound() -> bool:
                pods = (await client.list(Pod, "default",
                                          label_selector="job-name=gpu-training")).items
                return len(pods) == 2 and all(p.spec.node_name for p in pods)

            await eventually("the example Job's pods bound", job_pods_bound, 120)
        proc.send_signal(signal.SIGINT)
        rest = await read_until(proc.stdout, "kubedra stopped.", 60)
        assert await asyncio.wait_for(proc.wait(), 60) == 0, rest
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
