"""The front of a local cluster's API server replicas: one address that kubectl, the
components and the nodes dial, as they would dial the load balancer before kube-apiserver
replicas.

It passes each connection's bytes, TLS and all, to a replica: it never terminates TLS, so a
client still verifies the replica's serving certificate (whose SANs name 127.0.0.1, where the
front and the replicas listen) and the replica still authenticates the client's certificate.
A replica that refuses a connection is passed over for the next one at once, and a probe of
every replica's ``/readyz`` each second keeps unready ones out of the rotation (tried only
when no replica is ready). The front runs in the supervisor's process, which outlives every
replica; when a replica dies its connections end and their clients (watches too) connect
again, through the front, to a live one.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import ssl
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

import aiohttp

from kubedra.tasks import cancel_and_wait

log = logging.getLogger("kubedra.front")

PROBE_PERIOD = 1.0
PROBE_TIMEOUT = 2.0
CONNECT_TIMEOUT = 5.0
_CHUNK = 1 << 16


@dataclass(slots=True)
class Backend:
    """One replica: where it listens, and whether its last probe found it ready."""

    url: str
    host: str
    port: int
    ready: bool = True

    @classmethod
    def of(cls, url: str) -> Backend:
        parts = urlsplit(url)
        if parts.hostname is None or parts.port is None:
            raise ValueError(f"a replica needs host and port: {url!r}")
        return cls(url, parts.hostname, parts.port)


class Front:
    """Start with :meth:`start` (which returns the front's URL), end with :meth:`stop`.
    ``probe_tls`` is what the ``/readyz`` probes present (the cluster CA and a client
    certificate: the replicas answer no anonymous request)."""

    def __init__(self, replicas: Sequence[str], probe_tls: ssl.SSLContext | bool, *,
                 host: str = "127.0.0.1", port: int = 0) -> None:
        self.backends = [Backend.of(url) for url in replicas]
        self._probe_tls = probe_tls
        self._host = host
        self._port = port
        self._turn = itertools.count()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._prober: asyncio.Task[None] | None = None
        self.url = ""

    async def start(self) -> str:
        self._server = await asyncio.start_server(self._accept, self._host, self._port,
                                                  backlog=1024)
        port = self._server.sockets[0].getsockname()[1]
        scheme = urlsplit(self.backends[0].url).scheme
        self.url = f"{scheme}://{self._host}:{port}"
        self._prober = asyncio.create_task(self._probe_forever(), name="front-probe")
        return self.url

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        await cancel_and_wait(*self._tasks, *([self._prober] if self._prober else []))
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    # --- connections ----------------------------------------------------------------------

    def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.create_task(self._relay(reader, writer))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _order(self) -> list[Backend]:
        """The ready replicas in turn (round robin), then the unready ones."""
        n = len(self.backends)
        start = next(self._turn) % n
        turn = self.backends[start:] + self.backends[:start]
        return [b for b in turn if b.ready] + [b for b in turn if not b.ready]

    async def _open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        for backend in self._order():
            try:
                async with asyncio.timeout(CONNECT_TIMEOUT):
                    return await asyncio.open_connection(backend.host, backend.port)
            except (OSError, TimeoutError) as err:
                if backend.ready:
                    log.warning("replica %s refused a connection (%s); passed over until "
                                "it is ready again", backend.url, err)
                backend.ready = False
        return None

    async def _relay(self, client_r: asyncio.StreamReader,
                     client_w: asyncio.StreamWriter) -> None:
        try:
            opened = await self._open()
            if opened is None:
                log.warning("no replica accepts connections; one dropped")
                return
            server_r, server_w = opened
            try:
                ends = [asyncio.create_task(_pipe(client_r, server_w)),
                        asyncio.create_task(_pipe(server_r, client_w))]
                try:  # either side closing ends the connection (no half-open over TLS)
                    await asyncio.wait(ends, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    await cancel_and_wait(*ends)
            finally:
                server_w.close()
        finally:
            client_w.close()

    # --- readiness --------------------------------------------------------------------------

    async def _probe_forever(self) -> None:
        timeout = aiohttp.ClientTimeout(total=PROBE_TIMEOUT)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            while True:
                try:
                    await asyncio.gather(*(self._probe(session, b) for b in self.backends))
                except Exception:  # a probe must not end: log, and probe again
                    log.exception("probing the replicas failed")
                await asyncio.sleep(PROBE_PERIOD)

    async def _probe(self, session: aiohttp.ClientSession, backend: Backend) -> None:
        try:
            async with session.get(backend.url + "/readyz", ssl=self._probe_tls) as resp:
                ready = resp.status == 200
        except (aiohttp.ClientError, OSError, TimeoutError):
            ready = False
        if ready != backend.ready:
            log.warning("replica %s is %s", backend.url, "ready" if ready else "not ready")
        backend.ready = ready


async def _pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
    """Copy ``src`` to ``dst`` until ``src`` ends or either side fails."""
    with contextlib.suppress(OSError):  # ConnectionResetError & co.: the connection is over
        while data := await src.read(_CHUNK):
            dst.write(data)
            await dst.drain()
