"""Unix socket files for the two gRPC servers of a driver: claim a path, release it.

Like the Go helper (kubeletplugin/nonblockinggrpcserver.go@v0.30.0) a leftover file is removed
before listening, but only when nobody answers on it: a socket that a live process still holds is
an error instead of being silently stolen (which would orphan the other process's registration).
Paths are limited by ``sun_path``: at most 107 bytes.
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import stat
from pathlib import Path

MAX_SOCKET_PATH_BYTES = 107


class SocketPathError(RuntimeError):
    """The socket path cannot be used (too long, not a socket, or held by a live process)."""


def claim_socket_path(path: Path) -> None:
    """Make ``path`` ready to listen on: parent directories exist, no stale file remains."""
    size = len(os.fsencode(path))
    if size > MAX_SOCKET_PATH_BYTES:
        raise SocketPathError(
            f"socket path {str(path)!r} is {size} bytes, over the unix socket limit of "
            f"{MAX_SOCKET_PATH_BYTES}"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(mode):
        raise SocketPathError(f"{path} exists and is not a unix socket; refusing to remove it")
    if _answers(path):
        raise SocketPathError(f"socket {path} is in use by a live process")
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


def _answers(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        try:
            probe.connect(os.fsencode(path))
        except OSError as err:
            if err.errno in (errno.ECONNREFUSED, errno.ENOENT):
                return False
            raise SocketPathError(f"cannot probe socket {path}: {err}") from None
    return True


def release_socket_path(path: Path) -> None:
    """Remove the socket file (this is how the kubelet learns that a plugin is gone)."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
