"""Real etcd members on 127.0.0.1 for tests, run from the bundled binary (free ports).

``etcd_single`` and ``etcd_three`` are session fixtures (import them into a conftest or test
module to use them); a test that needs its own cluster builds an :class:`EtcdProcesses`.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubedra.storage.etcd.server import EtcdNotFoundError, LoopbackCluster, Member, etcd_binary


class EtcdProcesses:
    """A loopback cluster of ``size`` members; :meth:`stop` ends them all."""

    def __init__(self, data_dir: Path, size: int, extra_args: tuple[str, ...] = ()) -> None:
        self.cluster = LoopbackCluster.plan(data_dir, size)
        self.log_dir = data_dir
        self.extra_args = extra_args
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        for member in self.cluster.members:
            self.start(member)

    @property
    def urls(self) -> str:
        return self.cluster.client_urls

    def start(self, member: Member) -> None:
        with (self.log_dir / f"{member.name}.log").open("ab") as log:
            self.procs[member.name] = subprocess.Popen(
                [*self.cluster.argv(member), *self.extra_args],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
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


def require_etcd() -> None:
    try:
        etcd_binary()
    except EtcdNotFoundError as err:
        pytest.skip(str(err))


def _session_cluster(factory: pytest.TempPathFactory, size: int) -> Iterator[EtcdProcesses]:
    require_etcd()
    procs = EtcdProcesses(factory.mktemp(f"etcd{size}"), size)
    try:
        yield procs
    finally:
        procs.stop()


@pytest.fixture(scope="session")
def etcd_single(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EtcdProcesses]:
    yield from _session_cluster(tmp_path_factory, 1)


@pytest.fixture(scope="session")
def etcd_three(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EtcdProcesses]:
    yield from _session_cluster(tmp_path_factory, 3)
