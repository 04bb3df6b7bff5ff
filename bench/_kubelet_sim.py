"""A stand-in for the node agents' simulated runtime, for the Job benchmark and end-to-end
tests until ``kubedra up --nodes N`` runs real node agents: every bound pod is reported
Running and Ready, runs for its ``kubedra.io/run-seconds`` annotation (default 1 s), then
exits with ``kubedra.io/exit-code`` (default 0); a pod being deleted is reported Failed and
then removed (grace period 0), as the kubelet does."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from datetime import UTC, datetime
from typing import Any

from kubedra.api.core import Pod
from kubedra.client.errors import ApiError
from kubedra.client.informer import Informer
from kubedra.client.rest import Client

RUN_SECONDS = "kubedra.io/run-seconds"
EXIT_CODE = "kubedra.io/exit-code"


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _container_statuses(pod: Pod, state: dict[str, object], ready: bool) -> list[object]:
    return [{"name": c.name, "ready": ready, "restartCount": 0, "image": c.image or "",
             "imageID": "", "lastState": {}, "state": state} for c in pod.spec.containers]


class SimulatedKubelet:
    def __init__(self, client: Client, *, report_running: bool = True,
                 default_run_seconds: float = 1.0) -> None:
        self.client = client
        self.report_running = report_running
        self.default_run_seconds = default_run_seconds
        self.pods: Informer[Pod] = Informer(client, Pod)
        self._started: set[str] = set()
        self._deleting: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self.pods.add_handler(on_add=self._seen, on_update=lambda _old, new: self._seen(new))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _seen(self, pod: Pod) -> None:
        uid = pod.metadata.uid or ""
        if not pod.spec.node_name:
            return
        if pod.metadata.deletion_timestamp is not None:
            if uid not in self._deleting:
                self._deleting.add(uid)
                self._spawn(self._kill(pod))
        elif uid not in self._started and pod.status.phase in (None, "Pending"):
            self._started.add(uid)
            self._spawn(self._run(pod))

    async def _status(self, pod: Pod, status: dict[str, object]) -> None:
        with contextlib.suppress(ApiError):
            await self.client.patch(Pod, pod.metadata.name or "", {"status": status},
                                    namespace=pod.metadata.namespace, subresource="status")

    async def _run(self, pod: Pod) -> None:
        notes = pod.metadata.annotations or {}
        seconds = float(notes.get(RUN_SECONDS, self.default_run_seconds))
        code = int(notes.get(EXIT_CODE, "0"))
        started = _now()
        if self.report_running:
            await self._status(pod, {
                "phase": "Running", "startTime": started,
                "conditions": [{"type": "Ready", "status": "True"}],
                "containerStatuses": _container_statuses(
                    pod, {"running": {"startedAt": started}}, True)})
        await asyncio.sleep(seconds)
        if pod.metadata.uid in self._deleting:
            return
        await self._finish(pod, code, started)

    async def _finish(self, pod: Pod, code: int, started: str) -> None:
        terminated = {"exitCode": code, "reason": "Completed" if code == 0 else "Error",
                      "startedAt": started, "finishedAt": _now()}
        await self._status(pod, {
            "phase": "Succeeded" if code == 0 else "Failed",
            "conditions": [{"type": "Ready", "status": "False"}],
            "containerStatuses": _container_statuses(pod, {"terminated": terminated}, False)})

    async def _kill(self, pod: Pod) -> None:
        if pod.status.phase not in ("Succeeded", "Failed"):
            await self._finish(pod, 137, pod.status.start_time or _now())
        with contextlib.suppress(ApiError):
            await self.client.delete(Pod, pod.metadata.name or "", pod.metadata.namespace,
                                     uid=pod.metadata.uid, grace_period_seconds=0)

    async def run(self) -> None:
        self.pods.start()
        try:
            await asyncio.Event().wait()
        finally:
            await self.pods.stop()
            for task in list(self._tasks):
                task.cancel()
