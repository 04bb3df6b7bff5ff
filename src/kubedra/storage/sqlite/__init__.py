"""The embedded SQLite backend (kine-style append-only log, group-committed, durable)."""

from kubedra.storage.sqlite.store import SQLiteStore

__all__ = ["SQLiteStore"]
