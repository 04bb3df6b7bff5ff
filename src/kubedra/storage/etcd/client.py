"""The etcd v3 connection: TLS, several endpoints, fail-over and retries (clientv3's role).

The messages and stubs are aetcd's generated etcd v3 API (``aetcd.rpc``); aetcd's own
high-level client is not used because it talks to one endpoint without TLS and drops a
range's ``revision`` and ``limit``, all of which kube-apiserver's storage layer needs.

A request that fails with UNAVAILABLE or DEADLINE_EXCEEDED (member down, leader election
in progress) moves to the next endpoint. Reads are retried there until ``failover_timeout``;
a write is retried here only when it certainly never reached etcd (no connection, no
leader), as clientv3 does. Otherwise its outcome is unknown (the member may have committed
it before going away) and the error goes to the store, which settles it by reading back.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

import grpc
from aetcd import rpc

log = logging.getLogger(__name__)

T = TypeVar("T")

RETRYABLE = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})

# UNAVAILABLE details that prove a request was never applied.
_NOT_SENT = ("failed to connect", "etcdserver: no leader")


def never_applied(err: grpc.aio.AioRpcError) -> bool:
    details = err.details() or ""
    return err.code() == grpc.StatusCode.UNAVAILABLE and any(m in details for m in _NOT_SENT)

# Watches are refused by a member that lost its leader, so they move to a member that has
# one (clientv3.WithRequireLeader).
REQUIRE_LEADER = (("hasleader", "true"),)


class EtcdConfigError(ValueError):
    """Bad ``--etcd-servers`` or TLS file flags."""


@dataclass(frozen=True, slots=True)
class EtcdConfig:
    """Where etcd is and how to reach it (``--etcd-servers`` and the ``--etcd-*file`` flags)."""

    endpoints: tuple[str, ...]
    """``host:port`` of each member, in the order given."""
    tls: bool = False
    cafile: Path | None = None
    certfile: Path | None = None
    keyfile: Path | None = None

    @classmethod
    def parse(
        cls,
        servers: str,
        *,
        cafile: Path | None = None,
        certfile: Path | None = None,
        keyfile: Path | None = None,
    ) -> EtcdConfig:
        """From ``http[s]://host:port[,…]``; all URLs share one scheme, as in kube-apiserver."""
        endpoints: list[str] = []
        schemes: set[str] = set()
        for url in (part.strip() for part in servers.split(",")):
            if not url:
                continue
            parts = urlsplit(url)
            try:
                port = parts.port
            except ValueError:
                port = None
            if parts.scheme not in ("http", "https") or not parts.hostname or port is None:
                raise EtcdConfigError(f"etcd server {url!r}: want http(s)://host:port")
            if parts.path not in ("", "/"):
                raise EtcdConfigError(f"etcd server {url!r}: no path allowed")
            schemes.add(parts.scheme)
            host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
            endpoints.append(f"{host}:{port}")
        if not endpoints:
            raise EtcdConfigError("no etcd servers given")
        if len(schemes) > 1:
            raise EtcdConfigError("etcd servers mix http and https")
        if (certfile is None) != (keyfile is None):
            raise EtcdConfigError("--etcd-certfile and --etcd-keyfile go together")
        tls = "https" in schemes
        if not tls and (cafile or certfile):
            raise EtcdConfigError("TLS files given for http etcd servers; use https URLs")
        for path in (cafile, certfile, keyfile):
            if path is not None and not path.is_file():
                raise EtcdConfigError(f"{path}: no such file")
        return cls(tuple(endpoints), tls, cafile, certfile, keyfile)

    @property
    def urls(self) -> str:
        scheme = "https" if self.tls else "http"
        return ",".join(f"{scheme}://{e}" for e in self.endpoints)


class Connection:
    """One channel per endpoint; requests go to the current one and fail over in turn."""

    def __init__(
        self, config: EtcdConfig, *, rpc_timeout: float = 5.0, failover_timeout: float = 30.0
    ) -> None:
        self.config = config
        self._rpc_timeout = rpc_timeout
        self.failover_timeout = failover_timeout
        self._credentials = _credentials(config) if config.tls else None
        self._channels: list[grpc.aio.Channel | None] = [None] * len(config.endpoints)
        self._current = 0

    def _channel(self, index: int) -> grpc.aio.Channel:
        channel = self._channels[index]
        if channel is None:
            target = self.config.endpoints[index]
            options = [("grpc.max_receive_message_length", -1)]  # as kube-apiserver: no cap
            if self._credentials is None:
                channel = grpc.aio.insecure_channel(target, options=options)
            else:
                channel = grpc.aio.secure_channel(target, self._credentials, options=options)
            self._channels[index] = channel
        return channel

    def _fail_over(self, index: int, err: grpc.aio.AioRpcError) -> None:
        """Move past ``index`` (unless another request already did)."""
        if self._current == index:
            self._current = (index + 1) % len(self._channels)
            log.info(
                "etcd %s: %s (%s); trying %s",
                self.config.endpoints[index],
                err.code().name,
                err.details(),
                self.config.endpoints[self._current],
            )

    async def retrying(
        self, attempt: Callable[[grpc.aio.Channel], Awaitable[T]], *, mutating: bool = False
    ) -> T:
        """Run ``attempt`` on the current endpoint, failing over until the deadline.

        A ``mutating`` attempt whose outcome is unknown is not repeated: its error is raised
        (after moving to the next endpoint).
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.failover_timeout
        delay = 0.05
        while True:
            index = self._current
            try:
                return await attempt(self._channel(index))
            except grpc.aio.AioRpcError as err:
                if err.code() not in RETRYABLE or loop.time() + delay > deadline:
                    raise
                self._fail_over(index, err)
                if mutating and not never_applied(err):
                    raise
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)

    async def kv(self, method: str, request: Any, *, mutating: bool = False) -> Any:
        """A unary KV call (Range, Txn, Compact, …) with fail-over."""

        async def attempt(channel: grpc.aio.Channel) -> Any:
            return await getattr(rpc.KVStub(channel), method)(request, timeout=self._rpc_timeout)

        return await self.retrying(attempt, mutating=mutating)

    async def lease_grant(self, ttl: int) -> int:
        """A new lease of ``ttl`` seconds (etcd raises a shorter one to its minimum). Retried
        like a read: a grant repeated after an unknown outcome only leaves a lease nothing
        uses, which expires."""

        async def attempt(channel: grpc.aio.Channel) -> int:
            request = rpc.LeaseGrantRequest(TTL=ttl)
            response = await rpc.LeaseStub(channel).LeaseGrant(request,
                                                                timeout=self._rpc_timeout)
            return int(response.ID)

        return await self.retrying(attempt)

    def watch_stream(self) -> tuple[int, Any]:
        """A new Watch stream on the current endpoint, with that endpoint's index."""
        index = self._current
        return index, rpc.WatchStub(self._channel(index)).Watch(metadata=REQUIRE_LEADER)

    def stream_failed(self, index: int, err: grpc.aio.AioRpcError) -> None:
        """A watch stream on ``index`` broke: the next one goes elsewhere."""
        self._fail_over(index, err)

    async def close(self) -> None:
        channels, self._channels = self._channels, [None] * len(self._channels)
        for channel in channels:
            if channel is not None:
                await channel.close()


def _credentials(config: EtcdConfig) -> grpc.ChannelCredentials:
    def read(path: Path | None) -> bytes | None:
        return None if path is None else path.read_bytes()

    return grpc.ssl_channel_credentials(
        root_certificates=read(config.cafile),
        private_key=read(config.keyfile),
        certificate_chain=read(config.certfile),
    )
