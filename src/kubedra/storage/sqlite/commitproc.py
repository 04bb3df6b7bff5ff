"""The committer process: the one connection that writes the store's file.

Why a process and not a thread: a writer thread has to take the GIL back after every SQLite
call, and while the event loop is busy it keeps losing that race (the loop drops and retakes
the GIL around each TLS read and write), so a 0.2 ms commit took 2-4 ms to be seen. Here
the commit runs beside the API server's interpreter, never waiting for it.

Run by path as ``python -S -I commitproc.py FILE`` (standard library only, so it starts in
about 10 ms). Frames in both directions are a 4-byte little-endian length and a ``marshal``
payload (the parent is the only peer). Each request is a list of ``(sql, params)``
statements run in order; the reply is ``("ok", rows)`` with the rows of the last
statement, or ``("err", message)`` after rolling back an open transaction. The first
request sets the connection up (pragmas). End of input ends the process.
"""

from __future__ import annotations

import marshal
import os
import sqlite3
import struct
import sys
from typing import Any

HEAD = struct.Struct("<I")
NICENESS = 10
"""The process's nice value: its wake-ups then wait for a free core instead of preempting
the event loop that feeds it (a commit is mostly a wait for fsync)."""


def encode(payload: Any) -> bytes:
    data = marshal.dumps(payload)
    return HEAD.pack(len(data)) + data


def _read_exactly(fd: int, n: int) -> bytes | None:
    chunks: list[bytes] = []
    while n:
        chunk = os.read(fd, n)
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def execute(conn: sqlite3.Connection, statements: list[tuple[str, Any]]) -> tuple[Any, ...]:
    """Run ``statements`` in order; the reply frame's payload."""
    try:
        rows: list[Any] = []
        for sql, params in statements:
            rows = conn.execute(sql, params).fetchall()
        return ("ok", rows)
    except Exception as exc:  # disk full, I/O error, a constraint: report, keep serving
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        return ("err", f"{type(exc).__name__}: {exc}")


def serve(path: str, fd_in: int = 0, fd_out: int = 1) -> None:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        while True:
            head = _read_exactly(fd_in, HEAD.size)
            if head is None:
                return
            body = _read_exactly(fd_in, HEAD.unpack(head)[0])
            if body is None:
                return
            _write_all(fd_out, encode(execute(conn, marshal.loads(body))))
    finally:
        conn.close()


if __name__ == "__main__":
    os.nice(NICENESS)
    serve(sys.argv[1])
