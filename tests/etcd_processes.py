"""Real etcd members on 127.0.0.1 for tests, run from the bundled binary (free ports)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from kubedra.storage.etcd.server import LoopbackCluster, Member


class EtcdProcesses:
    """A loopback cluster of ``size`` members; :meth:`stop` ends them all."""

    def __init__(self, data_dir: Path, size: int) -> None:
        self.cluster = LoopbackCluster.plan(data_dir, size)
        self.log_dir = data_dir
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        for member in self.cluster.members:
            self.start(member)

    @property
    def urls(self) -> str:
        return self.cluster.client_urls

    def start(self, member: Member) -> None:
        with (self.log_dir / f"{member.name}.log").open("ab") as log:
            self.procs[member.name] = subprocess.Popen(
                self.cluster.argv(member), stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )

    def kill(self, member: Member) -> None:
        proc = self.procs[member.name]
        proc.kill()
        proc.wait(10)

    def stop(self) -> None:
        for proc in self.procs.values():
            proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
