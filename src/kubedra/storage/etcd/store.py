"""EtcdStore: the Store contract on a real etcd v3 cluster (kube-apiserver's storage/etcd3).

Writes are the transactions kube-apiserver sends: create compares ``mod_revision == 0``,
update and delete compare the caller's ``mod_revision`` (the failure branch reads the key,
so a lost race reports the current value). The revision is etcd's own revision; keys are
the API server's ``/registry/...`` keys as they are (``root`` prepends a namespace, as
``--etcd-prefix`` would). Lists are one Range at one revision (``limit`` and a start key
give consistent pages); watches are etcd watches from a revision with ``prev_kv``.

A write whose outcome etcd left unknown (the member went away mid-request) is sent again
elsewhere; when the retry's compare then fails, reading back tells whether the first attempt
landed: the key holds exactly the value written. So an acknowledged write is never reported
as failed, and a failed-looking one that landed is acknowledged, across member failures.

A write with a time to live puts the key with a lease (shared, see ``leases.py``): etcd
deletes the key when the lease expires, and watchers see the delete.

Compaction to R compacts etcd at R-1 and treats R-1 itself as gone: etcd answers a watch
event's ``prev_kv`` by reading the revision before it, so keeping that one extra revision
lets every event from R on carry its previous value, as the contract promises. etcd does
not report its compacted revision directly; it is found by probing reads (see
:meth:`compacted_revision`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

import grpc
from aetcd import rpc

from kubedra.storage.compactor import compact_periodically
from kubedra.storage.contract import (
    CompactedError,
    ConflictError,
    EventType,
    FutureRevisionError,
    KeyExistsError,
    KeyValue,
    ListResult,
    NotFoundError,
    Store,
    StoreClosedError,
    StoreError,
    WatchEvent,
)
from kubedra.storage.etcd.client import RETRYABLE, Connection, EtcdConfig
from kubedra.storage.etcd.leases import Leases
from kubedra.storage.keys import prefix_end
from kubedra.tasks import cancel_and_wait

log = logging.getLogger(__name__)

_PROBE_KEY = b"\x00kubedra/revision-probe"
"""A key nothing writes: ranges over it read only the response header (the revision)."""

_PAGE = 1000
"""Keys per Range: a large list is read in pages of this size, all at the same revision."""

_MOD_EQUAL = rpc.Compare.CompareResult.Value("EQUAL")
_MOD_GREATER = rpc.Compare.CompareResult.Value("GREATER")
_MOD = rpc.Compare.CompareTarget.Value("MOD")
_PUT = rpc.Event.EventType.Value("PUT")
_LEASE_GONE = "requested lease not found"


class EtcdStore(Store):
    """Open with :meth:`open`; close with :meth:`close`."""

    def __init__(self, conn: Connection, root: str) -> None:
        self._conn = conn
        self._root = root
        self._root_end = (prefix_end(root) or "").encode() or b"\x00"
        self._closed = False
        self._compacted = 0  # the newest compacted revision this store has seen
        self._calls: set[Any] = set()
        self._compactor: asyncio.Task[None] | None = None
        self._leases = Leases(conn.lease_grant)

    @classmethod
    async def open(
        cls,
        config: EtcdConfig,
        *,
        root: str = "",
        compact_interval: float = 300.0,
        retain: int = 1000,
        rpc_timeout: float = 5.0,
        failover_timeout: float = 30.0,
    ) -> EtcdStore:
        """Connect (fails if no member answers within ``failover_timeout``).

        Every ``compact_interval`` seconds (0: never) history older than the newest ``retain``
        revisions is compacted; compacting is idempotent, so replicas may all do it.
        """
        if compact_interval < 0 or retain < 0:
            raise ValueError("compact_interval and retain must not be negative")
        conn = Connection(config, rpc_timeout=rpc_timeout, failover_timeout=failover_timeout)
        store = cls(conn, root)
        try:
            await store.compacted_revision()
        except BaseException:
            await conn.close()
            raise
        if compact_interval > 0:
            store._compactor = asyncio.create_task(
                compact_periodically(store, compact_interval, retain), name="etcd-compactor"
            )
        return store

    # -- plumbing --------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise StoreClosedError()

    def _key(self, key: str) -> bytes:
        return (self._root + key).encode()

    def _span(self, prefix: str) -> tuple[bytes, bytes]:
        end = prefix_end(self._root + prefix)
        return self._key(prefix), self._root_end if end is None else end.encode()

    def _kv(self, kv: Any) -> KeyValue:
        key = kv.key.decode()[len(self._root) :]
        return KeyValue(key, kv.value, kv.create_revision, kv.mod_revision)

    async def _call(self, method: str, request: Any, revision: int = 0) -> Any:
        self._check_open()
        try:
            return await self._conn.kv(method, request)
        except grpc.aio.AioRpcError as err:
            raise await self._error(err, revision) from None

    async def _error(self, err: grpc.aio.AioRpcError, revision: int) -> StoreError:
        details = err.details() or ""
        if err.code() == grpc.StatusCode.OUT_OF_RANGE:
            if "compacted" in details:
                return CompactedError(revision, await self.compacted_revision())
            if "future revision" in details:
                return FutureRevisionError(revision, await self.current_revision())
        return StoreError(f"etcd: {err.code().name}: {details}")

    def _check_revision(self, revision: int) -> int:
        """A read revision checked against the compaction this store knows; etcd's form."""
        if revision < 0:
            raise ValueError(f"revision must not be negative: {revision}")
        if revision < self._compacted:
            raise CompactedError(revision, self._compacted)
        return max(revision, 1)  # etcd's revision 1 is the empty store; 0 would mean "now"

    async def _txn(
        self, compare: list[Any], success: list[Any], failure: list[Any] | None = None
    ) -> tuple[Any, bool]:
        """The response, and whether an earlier attempt may have applied (its outcome unknown)."""
        self._check_open()
        request = rpc.TxnRequest(compare=compare, success=success, failure=failure or [])
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._conn.failover_timeout
        unsure, delay = False, 0.05
        while True:
            try:
                return await self._conn.kv("Txn", request, mutating=True), unsure
            except grpc.aio.AioRpcError as err:
                if err.code() not in RETRYABLE or loop.time() + delay > deadline:
                    raise await self._error(err, 0) from None
                log.info("etcd write outcome unknown (%s); sending it again", err.details())
            unsure = True
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)

    def _mod(self, key: bytes, result: int, revision: int) -> Any:
        return rpc.Compare(result=result, target=_MOD, key=key, mod_revision=revision)

    @staticmethod
    def _read(key: bytes) -> Any:
        return rpc.RequestOp(request_range=rpc.RangeRequest(key=key))

    def _lost(self, key: str, response: Any) -> StoreError:
        """The error for a compare that failed; ``response`` carries the failure-branch read."""
        kvs = response.responses[0].response_range.kvs
        if not kvs:
            return NotFoundError(key)
        return ConflictError(key, self._kv(kvs[0]))

    # -- reads -----------------------------------------------------------------------------

    async def get(self, key: str, *, revision: int | None = None) -> KeyValue | None:
        self._check_open()
        at = 0 if revision is None else self._check_revision(revision)
        request = rpc.RangeRequest(key=self._key(key), revision=at)
        response = await self._call("Range", request, at)
        return self._kv(response.kvs[0]) if response.kvs else None

    async def list(
        self,
        prefix: str,
        *,
        revision: int | None = None,
        limit: int = 0,
        start_after: str | None = None,
    ) -> ListResult:
        self._check_open()
        at = 0 if revision is None else self._check_revision(revision)
        start, end = self._span(prefix)
        if start_after is not None and start_after >= prefix:
            start = self._key(start_after) + b"\x00"
        items: list[KeyValue] = []
        while True:  # in pages at one revision, so no response grows without bound
            want = min(limit - len(items), _PAGE) if limit > 0 else _PAGE
            request = rpc.RangeRequest(key=start, range_end=end, revision=at, limit=want)
            response = await self._call("Range", request, at)
            items.extend(self._kv(kv) for kv in response.kvs)
            at = at or response.header.revision
            if not response.more or 0 < limit <= len(items):
                break
            start = response.kvs[-1].key + b"\x00"
        remaining = response.count - len(response.kvs) if response.more else 0
        return ListResult(items, at if revision is None else revision, response.more, remaining)

    async def current_revision(self) -> int:
        response = await self._call("Range", rpc.RangeRequest(key=_PROBE_KEY, count_only=True))
        return int(response.header.revision)

    async def compacted_revision(self) -> int:
        """The lowest readable revision, by binary search over reads at old revisions.

        etcd keeps R-1 when compacting to R (see the module docstring), so the oldest revision
        etcd still serves is one below ours; a store etcd never compacted reads from 1 on.
        """
        self._check_open()
        current = await self.current_revision()
        lo = max(self._compacted - 1, 1)  # etcd compactions only move forward
        if await self._readable(lo):
            oldest = lo
        else:
            hi = current  # readable; invariant: lo not readable, hi readable
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if await self._readable(mid):
                    hi = mid
                else:
                    lo = mid
            oldest = hi
        if oldest > 1:
            self._compacted = max(self._compacted, oldest + 1)
        return self._compacted

    async def _readable(self, revision: int) -> bool:
        request = rpc.RangeRequest(key=_PROBE_KEY, revision=revision, count_only=True)
        try:
            await self._conn.kv("Range", request)
        except grpc.aio.AioRpcError as err:
            if err.code() == grpc.StatusCode.OUT_OF_RANGE and "compacted" in (err.details() or ""):
                return False
            raise await self._error(err, revision) from None
        return True

    # -- writes ----------------------------------------------------------------------------

    async def _leased(self, ttl: int, txn: Callable[[int], Awaitable[tuple[Any, bool]]]
                      ) -> tuple[Any, bool]:
        """Run ``txn(lease id)`` (0: no lease); a lease etcd lost is replaced once."""
        if ttl <= 0:
            return await txn(0)
        lease = await self._call_lease(ttl)
        try:
            return await txn(lease)
        except StoreError as err:
            if _LEASE_GONE not in str(err):
                raise
            self._leases.forget(lease)
        return await txn(await self._call_lease(ttl))

    async def _call_lease(self, ttl: int) -> int:
        self._check_open()
        try:
            return await self._leases.get(ttl)
        except grpc.aio.AioRpcError as err:
            raise await self._error(err, 0) from None

    async def create(self, key: str, value: bytes, *, ttl: int = 0) -> KeyValue:
        k = self._key(key)

        def txn(lease: int) -> Awaitable[tuple[Any, bool]]:
            put = rpc.RequestOp(request_put=rpc.PutRequest(key=k, value=value, lease=lease))
            return self._txn([self._mod(k, _MOD_EQUAL, 0)], [put])

        response, unsure = await self._leased(ttl, txn)
        if not response.succeeded:
            if unsure:
                current = await self.get(key)
                if current is not None and current.value == value:
                    return current  # the first attempt landed
            raise KeyExistsError(key)
        revision = response.header.revision
        return KeyValue(key, bytes(value), revision, revision)

    async def update(
        self, key: str, value: bytes, expected_revision: int, *, ttl: int = 0
    ) -> KeyValue:
        k = self._key(key)
        if expected_revision < 1:  # ``mod_revision == 0`` would be a create, not an update
            current = await self.get(key)
            if current is None:
                raise NotFoundError(key)
            raise ConflictError(key, current)

        def txn(lease: int) -> Awaitable[tuple[Any, bool]]:
            put = rpc.RequestOp(
                request_put=rpc.PutRequest(key=k, value=value, prev_kv=True, lease=lease))
            return self._txn(
                [self._mod(k, _MOD_EQUAL, expected_revision)], [put], [self._read(k)]
            )

        response, unsure = await self._leased(ttl, txn)
        if not response.succeeded:
            lost = self._lost(key, response)
            if unsure and isinstance(lost, ConflictError) and lost.current is not None:
                current = lost.current
                if current.value == value and current.mod_revision > expected_revision:
                    return current  # the first attempt landed
            raise lost
        prev = response.responses[0].response_put.prev_kv
        return KeyValue(key, bytes(value), prev.create_revision, response.header.revision)

    async def delete(self, key: str, expected_revision: int | None = None) -> KeyValue:
        k = self._key(key)
        remove = rpc.RequestOp(request_delete_range=rpc.DeleteRangeRequest(key=k, prev_kv=True))
        if expected_revision is None:
            response, unsure = await self._txn([self._mod(k, _MOD_GREATER, 0)], [remove])
        else:
            response, unsure = await self._txn(
                [self._mod(k, _MOD_EQUAL, expected_revision)], [remove], [self._read(k)]
            )
        if not response.succeeded:
            lost = NotFoundError(key) if expected_revision is None else self._lost(key, response)
            if unsure and isinstance(lost, NotFoundError):
                # Gone, maybe by the first attempt; its last value is unknown here.
                raise StoreError(f"etcd: the delete of {key} may have been applied; read again")
            raise lost
        prev = response.responses[0].response_delete_range.prev_kvs[0]
        return KeyValue(key, prev.value, prev.create_revision, response.header.revision)

    async def compact(self, revision: int) -> None:
        current = await self.current_revision()
        if revision > current:
            raise FutureRevisionError(revision, current)
        if revision <= self._compacted:
            return
        if revision - 1 > 1:
            request = rpc.CompactionRequest(revision=revision - 1, physical=True)
            with contextlib.suppress(CompactedError):  # a replica compacted as far already
                await self._call("Compact", request, revision)
        self._compacted = max(self._compacted, revision)

    # -- watch -----------------------------------------------------------------------------

    def watch(self, prefix: str, after_revision: int) -> AsyncGenerator[WatchEvent, None]:
        self._check_open()
        return self._watch(prefix, after_revision)

    async def _watch(self, prefix: str, after: int) -> AsyncGenerator[WatchEvent, None]:
        if after + 1 < self._compacted:
            raise CompactedError(after + 1, self._compacted)
        start, end = self._span(prefix)
        last = after
        loop = asyncio.get_running_loop()
        give_up = loop.time() + self._conn.failover_timeout
        delay = 0.05
        while not self._closed:
            index, call = self._conn.watch_stream()
            self._calls.add(call)
            try:
                create = rpc.WatchCreateRequest(
                    key=start, range_end=end, start_revision=last + 1, prev_kv=True
                )
                await call.write(rpc.WatchRequest(create_request=create))
                while True:
                    response = await call.read()
                    if response is grpc.aio.EOF:
                        break
                    give_up, delay = loop.time() + self._conn.failover_timeout, 0.05
                    if response.compact_revision:
                        self._compacted = max(self._compacted, response.compact_revision + 1)
                        raise CompactedError(last + 1, self._compacted)
                    if response.canceled:
                        log.warning("etcd cancelled a watch: %s", response.cancel_reason)
                        break
                    for event in response.events:
                        converted = self._event(event)
                        if converted.revision > last:
                            last = converted.revision
                            yield converted
            except grpc.aio.AioRpcError as err:
                if self._closed:
                    return
                if err.code() not in RETRYABLE or loop.time() > give_up:
                    raise StoreError(f"etcd watch: {err.code().name}: {err.details()}") from None
                self._conn.stream_failed(index, err)
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if self._closed and (task is None or not task.cancelling()):
                    return  # close() cancelled the stream, not our consumer
                raise
            finally:
                self._calls.discard(call)
                call.cancel()
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)

    def _event(self, event: Any) -> WatchEvent:
        kv = self._kv(event.kv)
        prev = self._kv(event.prev_kv) if event.HasField("prev_kv") else None
        if event.type == _PUT:
            if kv.create_revision == kv.mod_revision:
                return WatchEvent(EventType.ADDED, kv, None, kv.mod_revision)
            return WatchEvent(EventType.MODIFIED, kv, prev, kv.mod_revision)
        if prev is None:  # the deleted value is already compacted away
            raise CompactedError(kv.mod_revision, kv.mod_revision + 1)
        gone = KeyValue(kv.key, prev.value, prev.create_revision, kv.mod_revision)
        return WatchEvent(EventType.DELETED, gone, prev, kv.mod_revision)

    # -- lifecycle -------------------------------------------------------------------------

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._compactor is not None:
            await cancel_and_wait(self._compactor)
        for call in list(self._calls):
            call.cancel()
        await asyncio.sleep(0)  # let cancelled watches finish before the channels go
        await self._conn.close()
