"""Watching the plugin registry directory with inotify (through ctypes, no polling), as
upstream's pluginwatcher: the directory is created if missing and walked recursively; an entry
counts when its name does not start with ``.`` and it is a Unix domain socket.

Yields ``("add", path)`` for a socket that appeared (also every socket present at start, and
a socket re-created in place) and ``("remove", path)`` for one that went away.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import os
import stat
import struct
from collections.abc import AsyncIterator
from pathlib import Path

IN_CLOEXEC = 0o2000000
IN_NONBLOCK = 0o4000
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_DELETE_SELF = 0x400
IN_ISDIR = 0x40000000
IN_IGNORED = 0x8000
_MASK = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF
_HEADER = struct.Struct("iIII")

_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def _check(result: int) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return result


def is_socket(path: Path) -> bool:
    try:
        return stat.S_ISSOCK(path.lstat().st_mode)
    except OSError:
        return False


class PluginWatcher:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._fd = -1
        self._dirs: dict[int, Path] = {}
        self._events: asyncio.Queue[tuple[str, str]] = asyncio.Queue()

    def _watch_tree(self, directory: Path) -> None:
        """Watch ``directory`` and its sub-directories; report the sockets already there."""
        wd = _check(_libc.inotify_add_watch(self._fd, os.fsencode(directory), _MASK))
        self._dirs[wd] = directory
        for entry in sorted(directory.iterdir()):
            if entry.name.startswith("."):
                continue
            if entry.is_dir() and not entry.is_symlink():
                self._watch_tree(entry)
            elif is_socket(entry):
                self._events.put_nowait(("add", str(entry)))

    def _on_readable(self) -> None:
        try:
            data = os.read(self._fd, 64 * 1024)
        except BlockingIOError:
            return
        offset = 0
        while offset + _HEADER.size <= len(data):
            wd, mask, _cookie, size = _HEADER.unpack_from(data, offset)
            raw = data[offset + _HEADER.size: offset + _HEADER.size + size]
            offset += _HEADER.size + size
            self._handle(wd, mask, os.fsdecode(raw.rstrip(b"\0")))

    def _handle(self, wd: int, mask: int, name: str) -> None:
        parent = self._dirs.get(wd)
        if parent is None:
            return
        if mask & (IN_IGNORED | IN_DELETE_SELF):
            self._dirs.pop(wd, None)
            return
        if not name or name.startswith("."):
            return
        path = parent / name
        if mask & (IN_CREATE | IN_MOVED_TO):
            if mask & IN_ISDIR:
                with contextlib.suppress(OSError):  # gone again already
                    self._watch_tree(path)
            elif is_socket(path):
                self._events.put_nowait(("add", str(path)))
        elif mask & (IN_DELETE | IN_MOVED_FROM) and not mask & IN_ISDIR:
            self._events.put_nowait(("remove", str(path)))

    async def events(self) -> AsyncIterator[tuple[str, str]]:
        self.directory.mkdir(mode=0o755, parents=True, exist_ok=True)
        self._fd = _check(_libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC))
        loop = asyncio.get_running_loop()
        try:
            self._watch_tree(self.directory)
            loop.add_reader(self._fd, self._on_readable)
            while True:
                yield await self._events.get()
        finally:
            loop.remove_reader(self._fd)
            os.close(self._fd)
            self._fd = -1
