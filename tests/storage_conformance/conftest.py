"""The backend fixture: every conformance test runs once per backend in ``BACKENDS``.

To add a backend (e.g. etcd), add an opener here that returns a fresh, empty store; skip with
a reason when its server is not available.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from kubedra.storage.contract import Store
from kubedra.storage.sqlite import SQLiteStore

Opener = Callable[[Path], Awaitable[Store]]


async def _open_sqlite(tmp: Path) -> Store:
    return await SQLiteStore.open(tmp / "store.db", compact_interval=0)


BACKENDS: dict[str, Opener] = {"sqlite": _open_sqlite}


@pytest.fixture(params=sorted(BACKENDS))
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    opened = await BACKENDS[request.param](tmp_path)
    try:
        yield opened
    finally:
        await opened.close()
