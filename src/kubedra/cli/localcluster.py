"""A local cluster as separate processes: API server (embedded SQLite store), scheduler and
controller manager. Used by ``kubedra up``, the end-to-end tests and the benchmarks."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from kubedra.client import kubeconfig

_ENTRY = "from kubedra.cli.main import main; main()"


class ClusterError(Exception):
    pass


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
                sys.executable, "-c", _ENTRY, *self.args,
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

    async def __aenter__(self) -> LocalCluster:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
