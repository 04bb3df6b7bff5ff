"""What a user sees of a running cluster, with real processes: the scheduler's and the
controller manager's klog-style log lines at default verbosity (started, leader acquired,
pod bound, pod unschedulable with its reason, claim allocated and deallocated) and the
scheduler's Prometheus metrics scraped over HTTP."""

from __future__ import annotations

import re
from pathlib import Path

import aiohttp
import pytest

from kubedra.api.core import Pod
from kubedra.cli.localcluster import LocalCluster
from kubedra.client import kubeconfig
from kubedra.client.rest import Client
from kubedra.testing import WITHOUT_NODE_LIFECYCLE
from tests.e2e.dra_workload import create_class_and_template, create_nodes, create_pods, kind
from tests.e2e.test_control_loop import wait_for

NS = "obs"
KLOG = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ [\w.]+:\d+\] ")


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def logged(path: Path, *parts: str) -> bool:
    return any(all(p in line for p in parts) for line in lines(path))


def sample(text: str, name: str, **labels: str) -> float | None:
    for line in text.splitlines():
        head, _, value = line.rpartition(" ")
        metric, _, rest = head.partition("{")
        if metric == name and all(f'{k}="{v}"' in rest for k, v in labels.items()):
            return float(value)
    return None


@pytest.mark.timeout(180)
async def test_logs_and_metrics(tmp_path: Path) -> None:
    cluster = LocalCluster(tmp_path, emulated_version="1.30",
                           scheduler_args=["--metrics-port", "0"],
                           controller_manager_args=WITHOUT_NODE_LIFECYCLE)
    async with cluster, Client(kubeconfig.load(cluster.kubeconfig_path)) as client:
        sched_log = cluster.schedulers[0].log_path
        cm_log = tmp_path / "logs" / "controller-manager.log"
        await wait_for("the metrics address", lambda: logged(sched_log, "Serving metrics"), 30)
        address = re.search(r'address="([\d.:]+)"', sched_log.read_text())
        assert address is not None
        await client.create_raw(kind("namespaces"), {
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        await create_nodes(client, 1, 1)
        await create_class_and_template(client, NS)
        await create_pods(client, NS, ["first"])

        async def node_of(name: str) -> str | None:
            return (await client.get(Pod, name, NS)).spec.node_name

        await wait_for("first bound", lambda: logged(
            sched_log, "Successfully bound pod to node", f'pod="{NS}/first"'), 60)
        await create_pods(client, NS, ["second"])  # the only instance is taken
        await wait_for("second unschedulable", lambda: logged(
            sched_log, "Unable to schedule pod; no fit; waiting", f'pod="{NS}/second"'), 60)
        async with aiohttp.ClientSession() as session:
            async with session.get(f"http://{address[1]}/metrics") as resp:
                assert resp.status == 200
                text = await resp.text()
            await client.delete(Pod, "first", NS, grace_period_seconds=0)
            await wait_for("the claim deallocated", lambda: logged(
                cm_log, "Deallocated claim", f'claim="{NS}/first-gpu'), 60)
            await wait_for("second bound", lambda: logged(
                sched_log, "Successfully bound pod to node", f'pod="{NS}/second"'), 60)
            async with session.get(f"http://{address[1]}/metrics") as resp:
                after = await resp.text()
        assert await node_of("second")

    profile = {"profile": "default-scheduler"}
    assert sample(text, "scheduler_schedule_attempts_total", result="scheduled", **profile) == 1
    assert sample(text, "scheduler_schedule_attempts_total", result="unschedulable",
                  **profile) == 1
    pending = {q: sample(text, "scheduler_pending_pods", queue=q)
               for q in ("active", "backoff", "unschedulable", "gated")}
    # the second pod waits: parked, or backing off if an event came during its attempt
    assert pending["active"] == pending["gated"] == 0
    assert pending["backoff"] + pending["unschedulable"] == 1, pending  # type: ignore[operator]
    assert sample(text, "scheduler_scheduling_attempt_duration_seconds_count",
                  result="scheduled", **profile) == 1
    # the first cycle is sampled: the DRA plugin's filter was timed
    assert (sample(text, "scheduler_plugin_execution_duration_seconds_count",
                   plugin="DynamicResources", extension_point="Filter", status="Success")
            or 0) >= 1
    assert sample(after, "scheduler_schedule_attempts_total", result="scheduled",
                  **profile) == 2
    assert all(sample(after, "scheduler_pending_pods", queue=q) == 0 for q in pending)

    sched_lines, cm_lines = lines(sched_log), lines(cm_log)
    assert all(KLOG.match(line) for line in sched_lines if not line.startswith(" ")), sched_lines
    assert all(KLOG.match(line) for line in cm_lines if not line.startswith(" ")), cm_lines
    for text_part in ('"Starting Kubernetes Scheduler"',
                      "successfully acquired lease kube-system/kube-scheduler",
                      '"Allocated claim" claim="obs/first-gpu',
                      f'"Unable to schedule pod; no fit; waiting" pod="{NS}/second" err="0/1 '
                      'nodes are available: 1 resourceclaim cannot be allocated for the node '
                      '(unsuitable). still not schedulable."'):
        assert any(text_part in line for line in sched_lines), (text_part, sched_lines)
    # upstream's v1.30 worker count for this controller, whatever --workers says
    assert any('"Starting controller" controller="resourceclaim-controller" workers=10' in line
               for line in cm_lines), cm_lines
