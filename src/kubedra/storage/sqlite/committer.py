"""The event loop's end of the committer process (``commitproc.py``): start it, send one
request at a time, hand each reply to a callback, and say when the process is gone."""

from __future__ import annotations

import asyncio
import logging
import marshal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, cast

from kubedra.storage.contract import StoreError
from kubedra.storage.sqlite import commitproc

log = logging.getLogger(__name__)

Statements = list[tuple[str, Any]]
Reply = Callable[[str | None, list[Any]], None]
"""(error message or None, rows of the last statement)."""

_PROGRAM = str(Path(commitproc.__file__).resolve())


class _Pipes(asyncio.SubprocessProtocol):
    def __init__(self, committer: Committer) -> None:
        self._committer = committer
        self._buffer = bytearray()

    def pipe_data_received(self, fd: int, data: bytes | bytearray) -> None:
        buffer = self._buffer
        buffer += data
        head = commitproc.HEAD
        while len(buffer) >= head.size:
            end = head.size + head.unpack_from(buffer)[0]
            if len(buffer) < end:
                break
            reply = marshal.loads(buffer[head.size:end])
            del buffer[:end]
            self._committer.replied(reply)

    def process_exited(self) -> None:
        self._committer.exited()


class Committer:
    """One committer process. :meth:`send` while no reply is awaited; ``on_exit`` is
    called once if the process ends before :meth:`stop` asked it to (a reply still awaited
    then is dropped: only the caller knows how to find out whether it was done)."""

    def __init__(self) -> None:
        self.on_exit: Callable[[int | None], None] | None = None
        self._transport: asyncio.SubprocessTransport | None = None
        self._pending: Reply | None = None
        self._stopping = False
        self._gone = asyncio.get_running_loop().create_future()

    @classmethod
    async def start(cls, path: str, setup: Statements, keep: IO[bytes]) -> Committer:
        """Start the process and run ``setup`` (the connection's pragmas) in it. The process
        inherits ``keep`` (the file's lock), so the lock outlives this process until the
        committer has finished what it was given."""
        committer = cls()
        loop = asyncio.get_running_loop()
        committer._transport, _ = await loop.subprocess_exec(
            lambda: _Pipes(committer), sys.executable, "-S", "-I", _PROGRAM, path,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=None,
            pass_fds=(keep.fileno(),))
        try:
            await committer.request(setup)
        except StoreError as err:
            await committer.stop()
            raise StoreError(f"cannot open the store's writer for {path}: {err}") from None
        return committer

    async def request(self, statements: Statements) -> list[Any]:
        """:meth:`send`, awaited: the rows of the last statement, or StoreError."""
        answer: asyncio.Future[tuple[str | None, list[Any]]] = (
            asyncio.get_running_loop().create_future())
        self.send(statements, lambda error, rows: answer.set_result((error, rows)))
        await asyncio.wait([answer, self._gone], return_when=asyncio.FIRST_COMPLETED)
        if not answer.done():
            raise StoreError(f"the process exited (code {self.returncode})")
        error, rows = answer.result()
        if error is not None:
            raise StoreError(error)
        return rows

    @property
    def returncode(self) -> int | None:
        return self._transport.get_returncode() if self._transport is not None else None

    def send(self, statements: Statements, reply: Reply) -> None:
        assert self._pending is None, "one request at a time"
        transport = self._transport
        assert transport is not None
        self._pending = reply
        # uvloop's pipe transports are not registered as asyncio's classes
        pipe = cast(asyncio.WriteTransport, transport.get_pipe_transport(0))
        pipe.write(commitproc.encode(statements))

    def replied(self, reply: tuple[Any, ...]) -> None:
        pending, self._pending = self._pending, None
        if pending is None:
            log.error("store writer sent a reply nobody asked for: %r", reply[:1])
            return
        if reply[0] == "ok":
            pending(None, reply[1])
        else:
            pending(str(reply[1]), [])

    def exited(self) -> None:
        self._pending = None
        if not self._gone.done():
            self._gone.set_result(None)
        if not self._stopping and self.on_exit is not None:
            self.on_exit(self.returncode)

    async def stop(self) -> None:
        """End the process (end of input) and wait for it to exit."""
        self._stopping = True
        transport = self._transport
        if transport is None:
            return
        pipe = transport.get_pipe_transport(0)
        if pipe is not None:
            pipe.close()
        await self._gone
        transport.close()
