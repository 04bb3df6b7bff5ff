"""Managed fields over a Job pod's life, as the API server records them on each write: the
create by the Job controller, the node agent's two status updates (Running, then Succeeded),
the controller's removal of the tracking finalizer, and the scheduler's event.

Each round records the writes of N distinct pods, step by step, as the server meets them
(every pod's uid and IPs its own, each write from what the one before stored, so the
FieldsV1 memo helps only as much as it does there).
Prints the median over rounds of each step's time per pod and their sum.
"""

from __future__ import annotations

import copy
import statistics
import sys
import time
from typing import Any

from bench._common import arg_parser, write_json
from kubedra.api.batch import JOB_TRACKING_FINALIZER
from kubedra.apiserver.patch.fieldset import FieldSet
from kubedra.apiserver.patch.ssa import update_managed_fields
from kubedra.kubelet.runtime import RUN_SECONDS

NOW = "2026-12-01T23:22:43Z"
STATUS_RESETS: FieldSet = {("f:spec",)}  # what a pods/status write may not own
MAIN_RESETS: FieldSet = {("f:status",)}
NO_RESETS: FieldSet = set()  # a kind without a status subresource


def pod(i: int) -> dict[str, Any]:
    uid = f"ce2e7126-357d-4e52-bb03-{i:012d}"
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": f"bench-{i}-n5dsm", "generateName": f"bench-{i}-", "namespace": "default",
            "labels": {"job-name": f"bench-{i}", "batch.kubernetes.io/job-name": f"bench-{i}",
                       "controller-uid": uid, "batch.kubernetes.io/controller-uid": uid},
            "annotations": {RUN_SECONDS: "1.0"},
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": f"bench-{i}",
                                 "uid": uid, "controller": True, "blockOwnerDeletion": True}],
            "finalizers": [JOB_TRACKING_FINALIZER]},
        "spec": {"containers": [{"name": "main", "image": "busybox", "resources": {},
                                 "terminationMessagePath": "/dev/termination-log",
                                 "terminationMessagePolicy": "File",
                                 "imagePullPolicy": "Always"}],
                 "restartPolicy": "Never", "terminationGracePeriodSeconds": 30,
                 "dnsPolicy": "ClusterFirst", "securityContext": {},
                 "schedulerName": "default-scheduler"},
        "status": {"phase": "Pending", "qosClass": "BestEffort"},
    }


def _condition(kind: str, status: str, reason: str | None = None) -> dict[str, Any]:
    out = {"type": kind, "status": status, "lastProbeTime": None, "lastTransitionTime": NOW}
    if reason:
        out["reason"] = reason
    return out


def running(obj: dict[str, Any], i: int) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    ip = f"10.74.{i // 250}.{i % 250}"
    out["spec"]["nodeName"] = "node-1"
    out["status"] = {
        "phase": "Running",
        "conditions": [_condition(t, "True") for t in
                       ("Initialized", "Ready", "ContainersReady", "PodScheduled")],
        "hostIP": "127.0.0.1", "hostIPs": [{"ip": "127.0.0.1"}], "podIP": ip,
        "podIPs": [{"ip": ip}], "startTime": NOW, "qosClass": "BestEffort",
        "containerStatuses": [{"name": "main", "state": {"running": {"startedAt": NOW}},
                               "lastState": {}, "ready": True, "restartCount": 0,
                               "image": "busybox", "imageID": "kubedra.io/simulated/busybox",
                               "containerID": f"kubedra://{i}-main-0", "started": True}],
    }
    return out


def succeeded(obj: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    status = out["status"]
    status["phase"] = "Succeeded"
    status["conditions"][1:3] = [_condition("Ready", "False", "PodCompleted"),
                                 _condition("ContainersReady", "False", "PodCompleted")]
    status["containerStatuses"][0].update(
        state={"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": NOW,
                              "finishedAt": NOW}}, ready=False, started=False)
    return out


def unfinalized(obj: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["metadata"]["finalizers"] = []
    return out


def event(i: int) -> dict[str, Any]:
    name = f"bench-{i}-n5dsm"
    return {"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{name}.1870c4a2b3d4e5f6", "namespace": "default"},
            "involvedObject": {"kind": "Pod", "namespace": "default", "name": name,
                               "uid": f"u-{i}", "apiVersion": "v1"},
            "reason": "Scheduled", "message": f"Successfully assigned default/{name} to node-1",
            "source": {"component": "default-scheduler"}, "firstTimestamp": NOW,
            "lastTimestamp": NOW, "count": 1, "type": "Normal"}


def record(old: dict[str, Any] | None, new: dict[str, Any], manager: str, sub: str,
           resets: FieldSet) -> dict[str, Any]:
    return update_managed_fields(old, new, manager, subresource=sub, now=NOW,
                                 reset_fields=resets)


STEPS = ("create pod", "status Running", "status Succeeded", "remove finalizer",
         "create event")


def life(i: int, spent: list[float]) -> None:
    """One pod's writes in order, each from the object the write before stored (as the
    server meets them); adds each step's seconds to ``spent``."""
    cm, node = "kubedra-controller-manager", "kubedra-node-pool"

    def timed(n: int, old: dict[str, Any] | None, new: dict[str, Any], manager: str,
              sub: str, resets: FieldSet) -> dict[str, Any]:
        start = time.perf_counter()
        out = record(old, new, manager, sub, resets)
        spent[n] += time.perf_counter() - start
        return out

    created = timed(0, None, pod(i), cm, "", MAIN_RESETS)
    started = timed(1, created, running(created, i), node, "status", STATUS_RESETS)
    done = timed(2, started, succeeded(started), node, "status", STATUS_RESETS)
    timed(3, done, unfinalized(done), cm, "", MAIN_RESETS)
    timed(4, None, event(i), "kube-scheduler", "", NO_RESETS)


def run(pods: int, rounds: int) -> dict[str, Any]:
    samples: list[list[float]] = []
    for r in range(rounds):
        spent = [0.0] * len(STEPS)
        for i in range(pods):
            life(r * pods + i, spent)
        samples.append([t / pods * 1e6 for t in spent])
    out = {name: round(statistics.median(s[n] for s in samples), 1)
           for n, name in enumerate(STEPS)}
    return {"pods": pods, "rounds": rounds, "steps_us": out,
            "per_pod_us": round(sum(out.values()), 1)}


def main(argv: list[str] | None = None) -> int:
    args = arg_parser(__doc__).parse_args(argv)
    result = run(*((20, 2) if args.smoke else (1000, 9)))
    steps_text = ", ".join(f"{k} {v}" for k, v in result["steps_us"].items())
    print(f"managed_fields: {result['per_pod_us']} us per pod ({steps_text})", file=sys.stderr)
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
