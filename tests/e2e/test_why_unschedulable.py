"""Why a pod stays Pending, with real processes (API server, scheduler, controller manager):
the FailedScheduling event names the first failing check after upstream's counts, a pod
naming a missing ResourceClaim gets an event too, and ``kubedra explain pod/NAME`` reads the
live cluster through a kubeconfig."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kubedra.api.core import Event, Pod
from kubedra.cli.localcluster import LocalCluster
from kubedra.client import kubeconfig
from kubedra.client.rest import Client
from tests.e2e.dra_workload import CLAIM_SELECTOR, DRIVER, create_workload, kind, pod_body

NS = "why"
KUBEDRA = Path(sys.executable).parent / "kubedra"
UPSTREAM = ("0/2 nodes are available: 2 resourceclaim cannot be allocated for the node "
            "(unsuitable). still not schedulable.")


async def failed_scheduling(client: Client, pod: str, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while True:
        for event in (await client.list(Event, NS)).items:
            if event.involved_object.name == pod and event.reason == "FailedScheduling":
                return event.message or ""
        assert time.monotonic() < deadline, f"no FailedScheduling event for {pod}"
        await asyncio.sleep(0.2)


def explain(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(KUBEDRA), "explain", "-n", NS, *args], capture_output=True,
                          text=True, timeout=60, check=False, env=env)


@pytest.mark.timeout(180)
async def test_pending_pods_say_why(tmp_path: Path) -> None:
    async with LocalCluster(tmp_path, emulated_version="1.30") as cluster, \
            Client(kubeconfig.load(cluster.kubeconfig_path)) as client:
        # two nodes with only the decoys: one t4 (class filter) and one 16Gi a100 (selector)
        await create_workload(client, NS, 2, 0)
        await client.create_raw(kind("pods"), {**pod_body("wants-gpu"),
                                               "metadata": {"name": "wants-gpu"}}, NS)
        missing = pod_body("no-claim")
        missing["spec"]["resourceClaims"] = [{"name": "gpu",
                                              "source": {"resourceClaimName": "nope"}}]
        await client.create_raw(kind("pods"), missing, NS)
        # its claim is the claim controller's to create (here never: no such template), so
        # the scheduler does not report the wait
        waiting = pod_body("no-template")
        waiting["spec"]["resourceClaims"][0]["source"] = {"resourceClaimTemplateName": "nope"}
        await client.create_raw(kind("pods"), waiting, NS)

        message = await failed_scheduling(client, "wants-gpu")
        pod = await client.get(Pod, "wants-gpu", NS)
        claim = (pod.status.resource_claim_statuses or [])[0].resource_claim_name
        assert message == (
            f"{UPSTREAM} On 2 node(s): {NS}/{claim}#0: the selector `{CLAIM_SELECTOR}` matches "
            f'none of the free instances of driver "{DRIVER}" the class admits.')
        # the condition (and the log) keep upstream's text exactly; written after the event,
        # as upstream's handleSchedulingFailure does
        deadline = time.monotonic() + 30
        while not any(c.type == "PodScheduled" for c in pod.status.conditions or ()):
            assert time.monotonic() < deadline, "no PodScheduled condition"
            await asyncio.sleep(0.2)
            pod = await client.get(Pod, "wants-gpu", NS)
        (condition,) = [c for c in pod.status.conditions or () if c.type == "PodScheduled"]
        assert (condition.status, condition.reason, condition.message) == (
            "False", "Unschedulable", UPSTREAM)

        message = await failed_scheduling(client, "no-claim")
        assert message == ('0/2 nodes are available: resourceclaim.resource.k8s.io "nope" '
                           "not found.")

        table = explain("pod/wants-gpu", "--kubeconfig", str(cluster.kubeconfig_path))
        assert table.returncode == 0, table.stderr
        lines = table.stdout.splitlines()
        assert lines[0] == f"pod {NS}/wants-gpu: fits on no node"
        assert f"  why: {NS}/{claim}#0: the selector `{CLAIM_SELECTOR}` matches none of " \
            f'the free instances of driver "{DRIVER}" the class admits' in lines
        # $KUBECONFIG is the default, as for kubectl; simulate reads the cluster too
        env = {**os.environ, "KUBECONFIG": str(cluster.kubeconfig_path)}
        placed = subprocess.run([str(KUBEDRA), "simulate", "-o", "json"], capture_output=True,
                                text=True, timeout=60, check=False, env=env)
        assert placed.returncode == 0, placed.stderr
        got = {p["pod"]: p for p in json.loads(placed.stdout)["placements"]}
        assert got[f"{NS}/wants-gpu"]["node"] is None
        assert got[f"{NS}/no-claim"]["message"] == \
            'resourceclaim.resource.k8s.io "nope" not found'
        gone = explain("pod/nobody", env=env)
        assert gone.returncode == 1 and f'pod "{NS}/nobody" not found in the cluster' in \
            gone.stderr
        lost = explain("pod/wants-gpu", env={**env, "KUBECONFIG": str(tmp_path / "none")})
        assert lost.returncode == 1 and "cannot read kubeconfig" in lost.stderr
        # seconds after no-claim was reported, no-template is not
        reasons = [e.reason for e in (await client.list(Event, NS)).items
                   if e.involved_object.name == "no-template"]
        assert "FailedScheduling" not in reasons, reasons
        assert not (await client.get(Pod, "no-template", NS)).status.conditions
