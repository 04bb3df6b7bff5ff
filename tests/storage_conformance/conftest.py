"""The backend fixture: every conformance test runs once per backend in ``BACKENDS``.

``sqlite`` is a fresh database file; ``etcd`` and ``etcd-3`` are a real etcd (one member, and
a three-member cluster) on 127.0.0.1, started once per session, each test in its own key
namespace. Tests therefore count revisions from the store's revision when they start.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from kubedra.storage.contract import Store
from kubedra.storage.etcd import EtcdConfig, EtcdStore
from kubedra.storage.sqlite import SQLiteStore
from tests.etcd_processes import EtcdProcesses, etcd_single, etcd_three

__all__ = ["etcd_single", "etcd_three"]  # session fixtures the etcd openers use

Opener = Callable[[pytest.FixtureRequest, Path], Awaitable[Store]]


async def _open_sqlite(request: pytest.FixtureRequest, tmp: Path) -> Store:
    return await SQLiteStore.open(tmp / "store.db", compact_interval=0)


def _etcd_opener(fixture: str) -> Opener:
    async def open_etcd(request: pytest.FixtureRequest, tmp: Path) -> Store:
        etcd: EtcdProcesses = request.getfixturevalue(fixture)
        root = f"/conformance-{uuid.uuid4().hex}"
        return await EtcdStore.open(EtcdConfig.parse(etcd.urls), root=root, compact_interval=0)

    return open_etcd


BACKENDS: dict[str, Opener] = {
    "sqlite": _open_sqlite,
    "etcd": _etcd_opener("etcd_single"),
    "etcd-3": _etcd_opener("etcd_three"),
}


@pytest.fixture(params=sorted(BACKENDS))
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    opened = await BACKENDS[request.param](request, tmp_path)
    try:
        yield opened
    finally:
        await opened.close()
