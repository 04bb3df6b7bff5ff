"""Watch streams (upstream ``cacheWatcher`` and ``serveWatch``): live changes from the hub,
the store's history when the hub no longer reaches back far enough, bookmarks, the deadline,
and one JSON line per event, rewritten for watchers whose selection an object enters or
leaves.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable

from aiohttp import web

from kubedra.api.base import Obj
from kubedra.apiserver import errors, media, objects, tables
from kubedra.apiserver.hub import (
    Change,
    Expired,
    Overflow,
    Subscription,
    Trigger,
    WatchHub,
)
from kubedra.apiserver.registry import Resource
from kubedra.apiserver.replies import write_chunk
from kubedra.apiserver.rest import Filter, Rest
from kubedra.proto import kube
from kubedra.storage.contract import CompactedError

# the most bytes of queued events joined into one write
_BATCH_BYTES = 1 << 20


class Streamer:
    """Feeds a watcher's :class:`EventWriter` after its initial events."""

    def __init__(self, hub: WatchHub, rest: Rest, stopping: asyncio.Event,
                 bookmark_interval: float) -> None:
        self.hub = hub
        self.rest = rest
        self.stopping = stopping
        self.bookmark_interval = bookmark_interval
        self._live: set[Subscription] = set()

    async def stream(
        self, writer: EventWriter, prefix: str, after: int, deadline: float, bookmarks: bool
    ) -> None:
        """Live changes after ``after`` until the deadline, the server stops, or the history
        is lost (an ERROR event): from the hub, or from the store when the hub no longer
        reaches back that far."""
        loop = asyncio.get_running_loop()
        if not self.hub.covers(after):
            await self._from_store(writer, prefix, after, deadline)
            return
        if self.stopping.is_set():
            return
        sub = self.hub.subscribe(prefix, after, writer.relevant, self._triggered(writer))
        sub.on_overflow = writer.abort
        self._live.add(sub)
        try:
            last_bookmark = loop.time()
            while True:
                left = deadline - loop.time()
                if left <= 0:
                    return
                wait = min(left, self.bookmark_interval) if bookmarks else left
                try:
                    ch = await sub.next(wait)
                except TimeoutError:
                    if bookmarks and loop.time() - last_bookmark >= self.bookmark_interval:
                        await writer.bookmark(self.hub.revision)
                        last_bookmark = loop.time()
                    continue
                except Expired as err:
                    await _expired(writer, err)
                    return
                except Overflow:
                    return
                if ch is None:
                    return
                # whatever else is queued goes out in the same write, up to a bound (what
                # waits for a slow client is one write, not the whole queue)
                more, ended = sub.queued(_BATCH_BYTES)
                await writer.changes([ch, *more])
                if ended:
                    await _expired(writer, sub.expired)
                    return
        finally:
            self._live.discard(sub)
            sub.close()

    def _triggered(self, writer: EventWriter) -> tuple[Trigger, str] | None:
        """The hub's index to subscribe a watcher through, when its field selector asks
        for one value of the resource's trigger field."""
        res = writer.res
        field = res.strategy.trigger_field
        if field is None or writer.flt.fields is None:
            return None
        value = next((t.value for t in writer.flt.fields.terms if t.field == field and t.equal),
                     None)
        if value is None:
            return None
        return self.hub.trigger(res.prefix, field, res.strategy.selectable_fields), value

    def stop(self) -> None:
        """End every live stream after what it has queued (the server is stopping)."""
        self.stopping.set()
        for sub in list(self._live):
            sub.end()

    async def _from_store(
        self, writer: EventWriter, prefix: str, after: int, deadline: float
    ) -> None:
        loop = asyncio.get_running_loop()
        changes = self.rest.changes_since(prefix, after)
        assert isinstance(changes, AsyncGenerator)
        try:
            while True:
                left = deadline - loop.time()
                if left <= 0 or self.stopping.is_set():
                    return
                try:
                    ch = await asyncio.wait_for(anext(changes), timeout=min(left, 1.0))
                except TimeoutError:
                    continue
                except StopAsyncIteration:
                    return
                except CompactedError as err:
                    await writer.error(errors.resource_expired(
                        f"too old resource version: {after} ({err.compacted})"
                    ).status)
                    return
                await writer.change(ch)
        finally:
            await changes.aclose()


class EventWriter:
    """Writes watch events as ``{"type":...,"object":...}`` lines, filtered per watcher, or
    with ``protobuf`` as length-prefixed ``WatchEvent`` frames (``kubedra.proto.kube``)."""

    def __init__(
        self, resp: web.StreamResponse, res: Resource, flt: Filter, as_table: bool,
        include_object: str, transport: asyncio.Transport | None = None,
        protobuf: bool = False,
    ) -> None:
        self.protobuf = protobuf
        self.resp = resp
        self.transport = transport
        self.res = res
        self.flt = flt
        self.as_table = as_table
        self.include_object = include_object
        self.first_table = True

    def abort(self) -> None:
        """Drop the connection of a watcher too slow to keep (what it has not read is
        discarded; a pending write fails and the stream ends)."""
        if self.transport is not None:
            self.transport.abort()

    async def change(self, ch: Change) -> None:
        await self.changes([ch])

    async def changes(self, batch: list[Change]) -> None:
        """Write the lines of several changes at once (one write for a burst)."""
        if self.flt.everything and not self.as_table and not self.res.converts:
            await write_chunk(self.resp, b"".join([_shared_frame(ch) for ch in batch])
                              if self.protobuf else b"".join([ch.line for ch in batch]))
            return
        lines = [line for line in map(self._line, batch) if line is not None]
        if lines:
            await write_chunk(self.resp, b"".join(lines))

    @property
    def relevant(self) -> Callable[[Change], bool] | None:
        """What the hub asks before it queues a change for this watcher (None: all)."""
        return None if self.flt.everything else self._relevant

    def _relevant(self, ch: Change) -> bool:
        now, before = self.flt.selects(self.res, ch)
        return now or before

    def _line(self, ch: Change) -> bytes | None:
        """The line a filtered (or Table) watcher gets for ``ch``, or None to skip it."""
        typ = ch.type
        obj, data = ch.obj, ch.data
        if not self.flt.everything:
            # cacheWatcher.convertToWatchEvent: entering or leaving the selection
            now, before = self.flt.selects(self.res, ch)
            if typ == "MODIFIED" and now and not before:
                typ = "ADDED"
            elif typ == "MODIFIED" and before and not now:
                prev = ch.prev
                assert prev is not None
                typ = "DELETED"
                obj = dict(prev)
                obj["metadata"] = dict(obj.get("metadata") or {},
                                       resourceVersion=str(ch.revision))
                data = objects.encode(obj)
            elif not now:
                return None
        shared = obj is ch.obj  # else a DELETED made for this watcher alone
        if self.res.converts:  # another version than the stored one
            obj, data = (ch.served(self.res.kind.version, self.res.served) if shared
                         else self.res.served(obj))
        if self.as_table:
            data = objects.encode(self._table(obj))
        elif self.protobuf:
            return self._frame(typ, obj, shared)
        return _line(typ, data)

    @staticmethod
    def _frame(typ: str, obj: Obj, shared: bool = True) -> bytes:
        """One event of a protobuf stream; a ``shared`` object's encoding is the one its
        answer had, if it had one (:func:`media.shared_protobuf`)."""
        try:
            return kube.watch_frame(typ, media.shared_protobuf(obj) if shared
                                    else kube.encode(obj))
        except kube.ConversionError as err:  # a field our .proto lacks: the client relists
            status = errors.internal(f"{obj.get('kind')} cannot be written in protobuf: {err}")
            return kube.watch_frame("ERROR", kube.encode(status.status))

    def _table(self, obj: Obj) -> Obj:
        tbl = tables.table(self.res, [obj], self.include_object)
        if not self.first_table:
            tbl["columnDefinitions"] = []
        self.first_table = False
        tbl["metadata"] = {"resourceVersion": str((obj.get("metadata") or {}).get(
            "resourceVersion", ""))}
        return tbl

    async def bookmark(self, revision: int, initial_end: bool = False) -> None:
        meta: Obj = {"resourceVersion": str(revision)}
        if initial_end:
            meta["annotations"] = {"k8s.io/initial-events-end": "true"}
        obj = {"kind": self.res.kind.kind, "apiVersion": self.res.kind.api_version,
               "metadata": meta}
        await self.resp.write(self._event("BOOKMARK", obj))

    async def error(self, status: Obj) -> None:
        await self.resp.write(self._event("ERROR", status))

    def _event(self, typ: str, obj: Obj) -> bytes:
        """An event written whole (a bookmark, an error) in the stream's type."""
        if self.protobuf:
            return self._frame(typ, obj, shared=False)
        return _line(typ, objects.encode(obj))


def _shared_frame(ch: Change) -> bytes:
    """The protobuf frame of a change as stored, built for its first watcher and kept with
    it for the others (``Change.protobuf``)."""
    frame = ch.protobuf
    if frame is None:
        frame = ch.protobuf = EventWriter._frame(ch.type, ch.obj)
    return frame


def _line(typ: str, data: bytes) -> bytes:
    """One event of a JSON stream, the object given as its JSON."""
    return b'{"type":"' + typ.encode() + b'","object":' + data + b"}\n"


async def _expired(writer: EventWriter, err: Expired | None) -> None:
    """The ERROR event that ends a watch whose history the hub lost (clients re-list)."""
    if err is not None:
        await writer.error(errors.resource_expired(str(err)).status)
