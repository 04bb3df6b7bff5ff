"""Container log files as a container runtime keeps them, and reading them as the kubelet's
``/containerLogs`` does (pkg/kubelet/kuberuntime/logs).

Each run of a container (an *instance*, numbered by the container's restart count) has its file
``ROOT/pod-logs/<namespace>_<pod>_<uid>/<container>/<instance>.log`` (upstream's
``/var/log/pods`` layout) in the CRI log format, one line per output line:
``<RFC3339Nano time> stdout F <text>``. The files outlive an agent restart and are removed
with the pod. A follower reads to the end, then waits for the next line until the instance is
no longer running.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import shutil
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from kubedra.api.core import Pod

LOG_DIR = "pod-logs"
#: How long a follower sleeps at most between looks at a running instance's file.
FOLLOW_POLL = 1.0


def stamp(ns: int) -> str:
    """RFC 3339 with nine fraction digits in UTC (Go's ``RFC3339NanoFixed``), as the kubelet
    writes ``--timestamps``."""
    seconds, nanos = divmod(ns, 1_000_000_000)
    whole = datetime.datetime.fromtimestamp(seconds, datetime.UTC)
    return f"{whole:%Y-%m-%dT%H:%M:%S}.{nanos:09d}Z"


def _parse_stamp(text: str) -> float:
    head, _, frac = text.rstrip("Z").partition(".")
    whole = datetime.datetime.strptime(head, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.UTC)
    return whole.timestamp() + (float(f"0.{frac}") if frac else 0.0)


@dataclass(frozen=True, slots=True)
class LogOptions:
    """The kubelet's share of ``PodLogOptions`` (``previous`` chooses the instance first)."""

    follow: bool = False
    timestamps: bool = False
    tail_lines: int | None = None
    since: float | None = None
    """Seconds since the epoch: lines older than this are left out."""
    limit_bytes: int | None = None


class _Limit(Exception):
    """``limitBytes`` reached: the answer ends."""


class ContainerLogs:
    """The node's log files, and which instances are running (being written) now."""

    def __init__(self, root_dir: Path) -> None:
        self.root = root_dir / LOG_DIR
        self._changed: dict[Path, asyncio.Event] = {}

    def pod_dir(self, pod: Pod) -> Path:
        meta = pod.metadata
        return self.root / f"{meta.namespace}_{meta.name}_{meta.uid}"

    def path(self, pod: Pod, container: str, instance: int) -> Path:
        return self.pod_dir(pod) / container / f"{instance}.log"

    def running(self, path: Path) -> bool:
        return path in self._changed

    def start(self, path: Path, lines: Callable[[], list[str]]) -> None:
        """An instance starts: its first ``lines`` are written, unless the file exists (an
        agent restarted under the running container, which printed them already)."""
        fresh = not path.exists()
        self._changed.setdefault(path, asyncio.Event())
        if fresh:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.append(path, lines())

    def append(self, path: Path, lines: Iterable[str]) -> None:
        now = stamp(time.time_ns())
        with path.open("a") as f:
            f.writelines(f"{now} stdout F {line}\n" for line in lines)
        self._wake(path, running=True)

    def end(self, path: Path, lines: Iterable[str] = ()) -> None:
        """The instance stopped (its last ``lines`` written): followers finish."""
        if path.parent.is_dir():
            self.append(path, lines)
        self._wake(path, running=False)

    def _wake(self, path: Path, *, running: bool) -> None:
        event = self._changed.pop(path, None)
        if running:
            self._changed[path] = asyncio.Event()
        if event is not None:
            event.set()

    def remove(self, pod: Pod) -> None:
        """The pod is gone: so are its logs."""
        directory = self.pod_dir(pod)
        for path in [p for p in self._changed if directory in p.parents]:
            self._wake(path, running=False)
        shutil.rmtree(directory, ignore_errors=True)

    def prune(self, live: set[str]) -> None:
        """After a restart: the logs of pods (by uid) no longer on the node go."""
        for directory in self.root.glob("*_*_*"):
            if directory.name.rsplit("_", 1)[1] not in live:
                shutil.rmtree(directory, ignore_errors=True)

    async def read(self, path: Path, opts: LogOptions,
                   write: Callable[[bytes], Awaitable[None]]) -> None:
        """Write the instance's output as ``opts`` select it; with ``follow``, until the
        instance is no longer running."""
        left = [opts.limit_bytes]

        async def emit(record: bytes) -> None:
            out = _render(record, opts)
            if out is None:
                return
            if left[0] is not None:
                out = out[:left[0]]
                left[0] -= len(out)
            await write(out)
            if left[0] == 0:
                raise _Limit

        try:
            with path.open("rb") as f:
                records = f.read().splitlines(keepends=True)
                complete = [r for r in records if r.endswith(b"\n")]
                offset = sum(len(r) for r in complete)
                if opts.tail_lines is not None:
                    complete = complete[len(complete) - opts.tail_lines:] if (
                        opts.tail_lines) else []
                for record in complete:
                    await emit(record)
                while opts.follow:
                    event = self._changed.get(path)
                    if event is None:  # stopped: what it wrote last is read once more
                        f.seek(offset)
                        for record in f.read().splitlines(keepends=True):
                            await emit(record)
                        return
                    f.seek(offset)
                    for record in f.read().splitlines(keepends=True):
                        if not record.endswith(b"\n"):
                            break
                        offset += len(record)
                        await emit(record)
                    if self._changed.get(path) is event:
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(event.wait(), FOLLOW_POLL)
        except _Limit:
            return


def _render(record: bytes, opts: LogOptions) -> bytes | None:
    """One CRI record as the client sees it (None: filtered out by ``since``)."""
    parts = record.split(b" ", 3)
    if len(parts) < 4:
        return None
    when, text = parts[0].decode(), parts[3]
    if opts.since is not None and _parse_stamp(when) < opts.since:
        return None
    return (when.encode() + b" " + text) if opts.timestamps else text

