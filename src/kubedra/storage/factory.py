"""Open the backend the flags select: etcd when ``--etcd-servers`` is given, else SQLite."""

from __future__ import annotations

from pathlib import Path

from kubedra.storage.contract import Store
from kubedra.storage.etcd import EtcdConfig, EtcdStore
from kubedra.storage.sqlite import SQLiteStore


async def open_store(
    data_dir: Path, etcd: EtcdConfig | None, *, compact_interval: float, retain: int
) -> Store:
    """The store of one API server: ``data_dir/kubedra.db``, or the etcd cluster."""
    if etcd is not None:
        return await EtcdStore.open(etcd, compact_interval=compact_interval, retain=retain)
    return await SQLiteStore.open(
        data_dir / "kubedra.db", compact_interval=compact_interval, retain=retain
    )
