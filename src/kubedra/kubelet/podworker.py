"""One pod's life on the node (upstream pod workers + the sync loop, over the simulated
runtime): prepare its claims (failures become ``FailedPrepareDynamicResources`` events and are
retried with backoff), run its containers, restart them as ``restartPolicy`` says, write the
status, unprepare the claims once the pod finished, and for a pod being deleted stop it,
unprepare, then delete it with grace 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import logging
from collections.abc import Callable
from typing import Any

from kubedra.api.core import Pod
from kubedra.client.errors import ApiError, is_not_found
from kubedra.client.events import EventRecorder
from kubedra.client.rest import Client
from kubedra.kubelet import runtime
from kubedra.kubelet.containertext import Console
from kubedra.kubelet.ledger import DriverDevices
from kubedra.kubelet.manager import ClaimManager
from kubedra.kubelet.node import now

log = logging.getLogger(__name__)

PREPARE_RETRY_INITIAL = 0.5
PREPARE_RETRY_MAX = 30.0
_FINISHED = ("Succeeded", "Failed")


class PodWorker:
    def __init__(self, client: Client, claims: ClaimManager, events: EventRecorder,
                 host_ip: str, current: Callable[[], Pod | None],
                 console: Console | None = None) -> None:
        """``console``: where the containers' output goes (None: nowhere)."""
        self.client = client
        self.console = console
        self.claims = claims
        self.events = events
        self.host_ip = host_ip
        self.current = current
        self.changed = asyncio.Event()

    def notify(self) -> None:
        self.changed.set()

    def _deleting(self) -> bool:
        pod = self.current()
        return pod is None or pod.metadata.deletion_timestamp is not None

    async def _wait(self, seconds: float | None) -> bool:
        """Sleep up to ``seconds`` (forever: None); True as soon as the pod is deleting."""
        loop = asyncio.get_running_loop()
        deadline = None if seconds is None else loop.time() + seconds
        while not self._deleting():
            remaining = None if deadline is None else deadline - loop.time()
            if remaining is not None and remaining <= 0:
                return False
            self.changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), remaining)
        return True

    async def _retry(self, what: str, step: Callable[[], Any], reason: str, *,
                     stop_when_deleting: bool) -> bool:
        """Run ``step`` until it succeeds (True) or, if asked, the pod is deleting (False);
        each failure is a Warning event on the pod."""
        delay = PREPARE_RETRY_INITIAL
        while True:
            try:
                await step()
                return True
            except asyncio.CancelledError:
                raise
            except Exception as e:
                pod = self.current()
                log.info("%s of pod %s failed: %s", what, pod and pod.metadata.name, e)
                if pod is not None:
                    await self.events.record(pod, "Warning", reason, f"{what}: {e}")
            if not stop_when_deleting:
                await asyncio.sleep(delay)
            elif await self._wait(delay):
                return False
            delay = min(delay * 2, PREPARE_RETRY_MAX)

    async def _status(self, pod: Pod, status: dict[str, Any]) -> None:
        try:
            await self.client.send_patch(Pod, pod.metadata.name or "", {"status": status},
                                         namespace=pod.metadata.namespace, subresource="status")
        except ApiError as e:
            if not is_not_found(e):
                raise

    async def unprepare(self, uid: str) -> None:
        await self._retry("Failed to unprepare dynamic resources",
                          lambda: self.claims.unprepare(uid), "FailedUnprepareDynamicResources",
                          stop_when_deleting=False)

    async def run(self) -> None:
        pod = self.current()
        if pod is None:
            return
        uid = pod.metadata.uid or ""
        if pod.status.phase in _FINISHED:
            await self.unprepare(uid)
        elif not self._deleting():
            await self._live(pod)
        if self._deleting():
            await self.unprepare(uid)
            await self._delete()
            if self.console is not None:
                self.console.logs.remove(pod)

    async def _live(self, pod: Pod) -> None:
        try:
            how = runtime.behaviour(pod)
        except runtime.PodSpecError as e:
            await self.events.record(pod, "Warning", "Failed", str(e))
            await self._wait(None)
            return
        if not await self._retry("Failed to prepare dynamic resources",
                                 lambda: self.claims.prepare(pod),
                                 "FailedPrepareDynamicResources", stop_when_deleting=True):
            return
        # once per pod: an agent restarted under a running pod prepared nothing again
        devices = {} if pod.status.container_statuses else self.claims.devices(pod)
        event = None if not devices else asyncio.create_task(self.events.record(  # never delays
            pod, "Normal", "PreparedDynamicResources", "CDI devices: " + "; ".join(
                f"claim {c}: {', '.join(d) or '<none>'}" for c, d in sorted(devices.items()))))
        held = self.claims.held(pod)
        try:
            await self._run_containers(pod, how, held)
        finally:
            if event is not None:
                await event

    def _resume(self, pod: Pod) -> tuple[str, int, float]:
        """After an agent restart: the run already started (its start time and restarts)."""
        statuses = pod.status.container_statuses or []
        stamp = now()
        if not statuses:
            return stamp, 0, 0.0
        first = statuses[0]
        started = (first.state.get("running") or {}).get("startedAt") if isinstance(
            first.state, dict) else None
        if not started:
            return stamp, first.restart_count, 0.0
        began = datetime.datetime.strptime(started, "%Y-%m-%dT%H:%M:%SZ").replace(
            tzinfo=datetime.UTC)
        elapsed = (datetime.datetime.now(datetime.UTC) - began).total_seconds()
        return started, first.restart_count, max(elapsed, 0.0)

    async def _run_containers(self, pod: Pod, how: runtime.Behaviour,
                              held: dict[str, list[DriverDevices]]) -> None:
        start_time = pod.status.start_time or now()
        started, restarts, elapsed = self._resume(pod)
        last: dict[str, Any] | None = None
        console = self.console
        while True:
            await self._write(pod, "Running", start_time, {"running": {"startedAt": started}},
                              restarts, last)
            if console is not None:
                console.started(pod, restarts, held)
            run = None if how.run_seconds is None else max(how.run_seconds - elapsed, 0.0)
            if await self._wait(run):
                if console is not None:
                    console.stopped(pod, restarts)
                return
            finished = now()
            ended = runtime.terminated(how.exit_code, started, finished)
            if console is not None:
                console.exited(pod, restarts, how.exit_code, ended["terminated"]["reason"])
            if not how.restarts_after(how.exit_code):
                phase = "Succeeded" if how.exit_code == 0 else "Failed"
                await self._write(pod, phase, start_time, ended, restarts, last)
                await self.unprepare(pod.metadata.uid or "")
                return
            restarts += 1
            waiting = {"waiting": {"reason": "CrashLoopBackOff",
                                   "message": "back-off restarting failed container"}}
            await self._write(pod, "Running", start_time, waiting, restarts, ended)
            if await self._wait(runtime.backoff(restarts)):
                return
            started, elapsed, last = now(), 0.0, ended

    async def _write(self, pod: Pod, phase: str, start_time: str, state: dict[str, Any],
                     restarts: int, last: dict[str, Any] | None) -> None:
        """Every container shares the simulated run, hence one state for all."""
        statuses = [runtime.container_status(pod, c.name, c.image or "", state, restarts, last)
                    for c in pod.spec.containers]
        await self._status(pod, runtime.pod_status(pod, phase=phase, host_ip=self.host_ip,
                                                   start_time=start_time, stamp=now(),
                                                   containers=statuses))

    async def _delete(self) -> None:
        """The last step of graceful deletion: containers stopped, claims released."""
        pod = self.current()
        if pod is None:
            return
        try:
            await self.client.delete(Pod, pod.metadata.name or "", pod.metadata.namespace,
                                     uid=pod.metadata.uid, grace_period_seconds=0)
        except ApiError as e:
            if not is_not_found(e) and e.code != 409:
                raise
