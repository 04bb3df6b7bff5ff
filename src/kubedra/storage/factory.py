"""Open the backend the flags select: etcd when ``--etcd-servers`` is given, else SQLite.

The data dir records which store its cluster lives in (``DATA/store-kind``): a server
started on the other store would show an empty cluster without a word, so it refuses instead.
"""

from __future__ import annotations

import os
from pathlib import Path

from kubedra.storage.contract import Store, StoreError
from kubedra.storage.etcd import EtcdConfig, EtcdStore
from kubedra.storage.sqlite import SQLiteStore

KIND_FILE = "store-kind"
SQLITE_FILE = "kubedra.db"


class StoreKindError(StoreError):
    """The data dir's cluster lives in another store than the one asked for."""


def claim_data_dir(data_dir: Path, kind: str) -> None:
    """Record that the cluster of ``data_dir`` lives in ``kind`` (``sqlite`` or ``etcd``), or
    raise :class:`StoreKindError` if it lives in the other one. A data dir from before the
    record counts as SQLite's if it holds the SQLite file."""
    marker = data_dir / KIND_FILE
    try:
        recorded: str | None = marker.read_text().strip()
    except FileNotFoundError:
        recorded = "sqlite" if (data_dir / SQLITE_FILE).exists() else None
    if recorded == kind:
        if not marker.exists():
            _write(marker, kind)
        return
    if recorded is not None:
        raise StoreKindError(
            f"{data_dir} holds a cluster stored in {recorded}, and this one would store in "
            f"{kind}: it would show an empty cluster. Start it on {recorded} again, or give "
            f"another data dir (or remove {data_dir} to start over)")
    data_dir.mkdir(parents=True, exist_ok=True)
    _write(marker, kind)


def _write(marker: Path, kind: str) -> None:
    tmp = marker.with_name(f".{marker.name}.{os.getpid()}")
    tmp.write_text(kind + "\n")
    tmp.replace(marker)


async def open_store(
    data_dir: Path, etcd: EtcdConfig | None, *, compact_interval: float, retain: int
) -> Store:
    """The store of one API server: ``data_dir/kubedra.db``, or the etcd cluster."""
    claim_data_dir(data_dir, "sqlite" if etcd is None else "etcd")
    if etcd is not None:
        return await EtcdStore.open(etcd, compact_interval=compact_interval, retain=retain)
    return await SQLiteStore.open(
        data_dir / SQLITE_FILE, compact_interval=compact_interval, retain=retain
    )
