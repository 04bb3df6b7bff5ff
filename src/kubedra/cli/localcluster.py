"""A local cluster as separate processes: API server (embedded SQLite store), scheduler and
controller manager. Used by ``kubedra up``, the end-to-end tests and the benchmarks.

Before anything is touched the cluster takes its data dir (an exclusive lock on
``<data dir>/lock`` that names the holder's pid) and, for a fixed port, checks that the port
is free, so a second cluster fails with one clear line instead of breaking the first. Every
component follows its supervisor: if the supervisor dies, even by SIGKILL, the component is
sent SIGTERM (see :func:`kubedra.cli.runtime.follow_supervisor`) and stops, so no orphan
keeps the port or the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import os
import signal
import socket
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from kubedra.client import kubeconfig

_ENTRY = ("from kubedra.cli.runtime import follow_supervisor; follow_supervisor({pid}); "
          "from kubedra.cli.main import main; main()")


class ClusterError(Exception):
    pass


def lock_data_dir(data_dir: Path) -> int:
    """Hold ``<data dir>/lock`` (released when this process exits, however it exits) and
    write our pid in it; the returned descriptor must stay open."""
    data_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(data_dir / "lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.read(fd, 32).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise ClusterError(f"data dir {data_dir} is in use by pid {holder}") from None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def check_port_free(port: int) -> None:
    """Fail if 127.0.0.1:``port`` cannot be bound (port 0 always can)."""
    if port == 0:
        return
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as err:
            if err.errno == errno.EADDRINUSE:
                raise ClusterError(f"port {port} is in use") from None
            raise ClusterError(f"port {port} cannot be used: {err.strerror}") from None


@dataclass
class Component:
    name: str
    args: list[str]
    log_path: Path
    process: asyncio.subprocess.Process | None = None
    restarts: int = 0
    started_at: float = field(default=0.0)

    async def start(self) -> None:
        with self.log_path.open("ab") as log:
            self.process = await asyncio.create_subprocess_exec(
                sys.executable, "-c", _ENTRY.format(pid=os.getpid()), *self.args,
                stdout=log, stderr=log, stdin=asyncio.subprocess.DEVNULL,
                start_new_session=True)
        self.started_at = time.monotonic()

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.returncode is None

    async def stop(self, grace: float = 10.0) -> None:
        proc = self.process
        if proc is None or proc.returncode is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), grace)
        except TimeoutError:
            proc.kill()
            await proc.wait()

    async def kill(self) -> None:
        proc = self.process
        if proc is not None and proc.returncode is None:
            proc.kill()
            await proc.wait()


class LocalCluster:
    """Start with :meth:`start`, stop with :meth:`stop` (or use ``async with``)."""

    def __init__(self, data_dir: Path, *, port: int = 0, verbose: int = 0,
                 feature_gates: str = "", schedulers: int = 1,
                 controller_manager: bool = True,
                 scheduler_args: Sequence[str] = (),
                 controller_manager_args: Sequence[str] = ()) -> None:
        self.data_dir = data_dir
        self.port = port
        self._lock: int | None = None
        self.kubeconfig_path = data_dir / "kubeconfig"
        logs = data_dir / "logs"
        vflag = ["-" + "v" * verbose] if verbose else []
        args = ["apiserver", "--data-dir", str(data_dir), "--port", str(port),
                "--kubeconfig", str(self.kubeconfig_path), *vflag]
        if feature_gates:
            args += ["--feature-gates", feature_gates]
        self.apiserver = Component("apiserver", args, logs / "apiserver.log")
        client_args = ["--kubeconfig", str(self.kubeconfig_path), *vflag]
        self.schedulers = [
            Component(f"scheduler-{i}", ["scheduler", *client_args, "--identity",
                                         f"scheduler-{i}", *scheduler_args],
                      logs / f"scheduler-{i}.log")
            for i in range(schedulers)]
        self.others: list[Component] = list(self.schedulers)
        if controller_manager:
            gates = ["--feature-gates", feature_gates] if feature_gates else []
            self.controller_manager: Component | None = Component(
                "controller-manager",
                ["controller-manager", *client_args, *gates, *controller_manager_args],
                logs / "controller-manager.log")
            self.others.append(self.controller_manager)
        else:
            self.controller_manager = None
        self.server = ""

    @property
    def components(self) -> list[Component]:
        return [self.apiserver, *self.others]

    async def start(self, timeout: float = 60.0) -> None:
        """Raises :class:`ClusterError` (having changed nothing) if the data dir or the port
        is taken."""
        self._lock = lock_data_dir(self.data_dir)
        try:
            check_port_free(self.port)
        except ClusterError:
            self._release()
            raise
        (self.data_dir / "logs").mkdir(parents=True, exist_ok=True)
        self.kubeconfig_path.unlink(missing_ok=True)
        await self.apiserver.start()
        await self._wait_ready(timeout)
        for c in self.others:
            await c.start()

    async def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        async with aiohttp.ClientSession() as session:
            while True:
                if not self.apiserver.running:
                    raise ClusterError("the API server exited; see "
                                       f"{self.apiserver.log_path}")
                if self.kubeconfig_path.exists():
                    with contextlib.suppress(kubeconfig.KubeconfigError, aiohttp.ClientError,
                                             OSError):
                        self.server = kubeconfig.load(self.kubeconfig_path).server
                        async with session.get(self.server + "/readyz") as resp:
                            if resp.status == 200:
                                return
                if time.monotonic() > deadline:
                    raise ClusterError("the API server did not become ready")
                await asyncio.sleep(0.05)

    async def stop(self) -> None:
        for c in reversed(self.components):
            await c.stop()
        self._release()

    def _release(self) -> None:
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None

    async def __aenter__(self) -> LocalCluster:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
