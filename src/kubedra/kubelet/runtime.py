"""The simulated container runtime (kwok-style: no container is started): how long a pod's
containers "run", how they exit, whether the kubelet restarts them, and the pod status a
kubelet writes for each state (pkg/kubelet/status/generate.go, kubelet_pods.go
``getPhase``, restart back-off from pkg/kubelet/kuberuntime).

Pod annotations: ``kubedra.io/run-seconds`` (float) is how long each run lasts and
``kubedra.io/exit-code`` the code it exits with (default 0). Without a run time, pods with
``restartPolicy: Always`` run until deleted and the others finish after 1 s.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from kubedra.api.core import Pod

RUN_SECONDS = "kubedra.io/run-seconds"
EXIT_CODE = "kubedra.io/exit-code"
DEFAULT_FINITE_RUN = 1.0
BACKOFF_INITIAL = 10.0
BACKOFF_MAX = 300.0


class PodSpecError(ValueError):
    """A bad annotation value: reported as an event, the pod does not start."""


@dataclass(frozen=True)
class Behaviour:
    run_seconds: float | None  # None: runs until deleted
    exit_code: int
    restart_policy: str

    def restarts_after(self, exit_code: int) -> bool:
        return self.restart_policy == "Always" or (
            self.restart_policy == "OnFailure" and exit_code != 0)


def behaviour(pod: Pod) -> Behaviour:
    ann = pod.metadata.annotations or {}
    policy = pod.spec.restart_policy or "Always"
    try:
        run = float(ann[RUN_SECONDS]) if RUN_SECONDS in ann else None
        code = int(ann.get(EXIT_CODE, "0"))
    except ValueError as e:
        raise PodSpecError(f"invalid {RUN_SECONDS} or {EXIT_CODE} annotation: {e}") from None
    if run is not None and not run >= 0:
        raise PodSpecError(f"{RUN_SECONDS} must be a non-negative number, got {ann[RUN_SECONDS]}")
    if run is None and policy != "Always":
        run = DEFAULT_FINITE_RUN
    return Behaviour(run, code, policy)


def backoff(restarts: int) -> float:
    """CrashLoopBackOff: 10 s doubling to 5 min."""
    return float(min(BACKOFF_INITIAL * 2 ** max(restarts - 1, 0), BACKOFF_MAX))


def pod_ip(pod: Pod) -> str:
    digest = hashlib.sha256((pod.metadata.uid or "").encode()).digest()
    return f"10.{64 + digest[0] % 64}.{digest[1]}.{1 + digest[2] % 254}"


# -- status as the kubelet writes it -------------------------------------------------------------

def _condition(type_: str, ok: bool, stamp: str, reason: str | None = None) -> dict[str, Any]:
    c: dict[str, Any] = {"type": type_, "status": "True" if ok else "False",
                         "lastProbeTime": None, "lastTransitionTime": stamp}
    if reason:
        c["reason"] = reason
    return c


def container_status(pod: Pod, name: str, image: str, state: dict[str, Any],
                     restarts: int, last_state: dict[str, Any] | None = None) -> dict[str, Any]:
    running = "running" in state
    return {"name": name, "image": image, "imageID": f"kubedra.io/simulated/{image}",
            "containerID": f"kubedra://{pod.metadata.uid}-{name}-{restarts}",
            "state": state, "lastState": last_state or {}, "ready": running,
            "restartCount": restarts, "started": running}


def terminated(exit_code: int, started: str, finished: str) -> dict[str, Any]:
    return {"terminated": {"exitCode": exit_code,
                           "reason": "Completed" if exit_code == 0 else "Error",
                           "startedAt": started, "finishedAt": finished}}


def pod_status(pod: Pod, *, phase: str, host_ip: str, start_time: str, stamp: str,
               containers: list[dict[str, Any]]) -> dict[str, Any]:
    """The whole status: phase, IPs, the four conditions and the container statuses."""
    ready = phase == "Running" and all(c["ready"] for c in containers)
    reason = None if ready else ("PodCompleted" if phase in ("Succeeded", "Failed")
                                 else "ContainersNotReady")
    ip = pod_ip(pod)
    return {
        "phase": phase, "hostIP": host_ip, "hostIPs": [{"ip": host_ip}],
        "podIP": ip, "podIPs": [{"ip": ip}], "startTime": start_time,
        "conditions": [
            _condition("Initialized", True, start_time),
            _condition("Ready", ready, stamp, reason),
            _condition("ContainersReady", ready, stamp, reason),
            _condition("PodScheduled", True, start_time),
        ],
        "containerStatuses": containers,
    }
