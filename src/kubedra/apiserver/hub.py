"""One store watch fanned out to every API watcher (upstream's watch cache, reduced).

The hub follows the whole ``/registry/`` prefix from the revision the server started at,
decodes and encodes each change once, and keeps a window of recent events so a watch that
resumes from a recent resourceVersion is served from memory. A watch from before the window
falls back to the store's own history (which answers 410 once compacted).

A watcher's selection is asked before its queue takes a change. Pod watches on one
``spec.nodeName`` are indexed by it (the strategy's trigger field, as upstream's cacher
triggers), the others by resource; a change's previous object is the one its key's previous
change in the window holds, decoded again only once that change has left it.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import AsyncIterator, Callable

from kubedra.api.base import Obj
from kubedra.apiserver import malloc, objects
from kubedra.storage.contract import CompactedError, EventType, KeyValue, Store, WatchEvent
from kubedra.tasks import cancel_and_wait

log = logging.getLogger(__name__)

# evicted bytes after which freed memory is handed back (a trim costs about a millisecond)
_RELEASE_EVERY = 64 << 20


_REGISTRY = "/registry/"


def resource_prefix(key: str) -> str:
    """``/registry/<group>/<plural>/`` of a key or a watch prefix below it; "" for a
    prefix above every resource (``/registry/``)."""
    group_end = key.find("/", len(_REGISTRY))
    plural_end = key.find("/", group_end + 1) if group_end >= 0 else -1
    return key[:plural_end + 1] if plural_end >= 0 else ""


class Change:
    """A decoded store event: objects are shared, never mutate them.

    Memory matters more than anything else here, since the window holds thousands: the wire
    line is the only copy of the encoded object (``data`` is cut from it on demand); the
    previous value, needed only for selector transitions of a MODIFIED event, is kept as
    stored bytes and decoded only when a filtered watcher asks."""

    __slots__ = ("_fields", "_prev", "_prev_fields", "_prev_kv", "_start", "_versions", "key",
                 "line", "obj", "protobuf", "revision", "size", "type")

    def __init__(self, typ: str, key: str, revision: int, obj: Obj, data: bytes,
                 prev: KeyValue | None) -> None:
        self.type = typ  # ADDED, MODIFIED, DELETED
        self.key = key
        self.revision = revision
        self.obj = obj
        # only a MODIFIED event can move an object into or out of a selection
        self._prev_kv = prev if typ == "MODIFIED" else None
        self._prev: Obj | None = None
        # selectable fields of obj and prev, computed for the first filtered watcher and
        # shared by the others
        self._fields: dict[str, str] | None = None
        self._prev_fields: dict[str, str] | None = None
        # the object in other served versions, converted for their first watcher
        self._versions: dict[str, tuple[Obj, bytes]] | None = None
        # the protobuf watch frame, built by the first protobuf watcher of the stored version
        # (watch.py) and shared by the others (not counted in ``size``)
        self.protobuf: bytes | None = None
        # the watch-stream line, built once and shared by every watcher
        head = b'{"type":"' + typ.encode() + b'","object":'
        self.line = head + data + b"}\n"
        self._start = len(head)
        # what the window pays for this event: the line, the decoded object (about as large
        # as its JSON) and the previous stored value
        self.size = 2 * len(self.line) + (len(prev.value) if self._prev_kv is not None
                                          and prev is not None else 0)

    @property
    def data(self) -> bytes:
        """The encoded object (for watchers that rewrite the line)."""
        return self.line[self._start:-2]

    def served(self, version: str,
               convert: Callable[[Obj, bytes], tuple[Obj, bytes]]) -> tuple[Obj, bytes]:
        """The object in served ``version`` (shared): converted once, for every watcher of
        that version."""
        if self._versions is None:
            self._versions = {}
        hit = self._versions.get(version)
        if hit is None:
            hit = self._versions[version] = convert(self.obj, self.data)
        return hit

    def follows(self, before: Change) -> None:
        """Take the previous object from the change that wrote it, when it is that one:
        already decoded (and its selectable fields perhaps computed), shared as it is."""
        if self._prev_kv is not None and self._prev_kv.mod_revision == before.revision:
            self._prev = before.obj
            self._prev_fields = before._fields

    @property
    def prev(self) -> Obj | None:
        if self._prev is None and self._prev_kv is not None:
            self._prev = objects.from_kv(self._prev_kv)
        return self._prev

    def fields(self, selectable: Callable[[Obj], dict[str, str]]) -> dict[str, str]:
        """``selectable(obj)`` (the resource's field-selector values), computed once."""
        if self._fields is None:
            self._fields = selectable(self.obj)
        return self._fields

    def prev_fields(self, selectable: Callable[[Obj], dict[str, str]]) -> dict[str, str]:
        """``selectable(prev)``, computed once (``prev`` must exist)."""
        if self._prev_fields is None:
            prev = self.prev
            assert prev is not None
            self._prev_fields = selectable(prev)
        return self._prev_fields


class Overflow(Exception):
    """A watcher fell too far behind; its stream ends and the client re-watches."""


class Expired(Overflow):
    """The hub lost history it had not delivered (store compaction): the watcher's stream
    ends with a 410 and the client re-lists."""

    def __init__(self, revision: int, compacted: int) -> None:
        super().__init__(f"too old resource version: {revision} ({compacted})")
        self.revision = revision
        self.compacted = compacted


def change_of(ev: WatchEvent, cache: objects.WireCache | None = None) -> Change:
    kv = ev.kv
    if ev.type is EventType.DELETED:
        obj, data = objects.wire(kv, ev.revision)
        if cache is not None:
            cache.forget(kv.key)
    elif cache is not None:
        obj, data = cache.get(kv)
    else:
        obj, data = objects.wire(kv)
    return Change(ev.type.value, kv.key, ev.revision, obj, data, ev.prev)


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class Subscription:
    """Changes under a prefix after a revision, in order. The queue is bounded in events
    and in bytes: a watcher that does not keep up (its client stopped reading) overflows,
    ``on_overflow`` ends its stream, and the client re-watches, as upstream's cacher
    terminates a watcher whose buffer stays full.

    ``relevant`` (a watcher's selection) is asked at offer time, as upstream's cacher
    filters before it queues: a change the watcher would skip neither wakes it nor takes
    room in its queue. The queue is a deque and one waiter future (a watch wakes for each
    burst of changes, so this is on the fan-out path)."""

    def __init__(self, hub: WatchHub, prefix: str, after: int, limit: int,
                 limit_bytes: int, relevant: Callable[[Change], bool] | None = None) -> None:
        self.hub = hub
        self.prefix = prefix
        self.after = after
        self.pending: deque[Change | None] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self.limit = limit
        self.limit_bytes = limit_bytes
        self.relevant = relevant
        self.queued_bytes = 0
        self.overflowed = False
        self.expired: Expired | None = None
        self.last = after  # the newest revision offered to this watcher
        self.on_overflow: Callable[[], None] | None = None

    def _push(self, item: Change | None) -> None:
        self.pending.append(item)
        if self._waiter is not None:
            _wake(self._waiter)

    def offer(self, ch: Change) -> None:
        if ch.revision <= self.after or not ch.key.startswith(self.prefix):
            return
        self.last = ch.revision
        if self.relevant is not None and not self.relevant(ch):
            return
        if len(self.pending) >= self.limit or self.queued_bytes >= self.limit_bytes:
            self.overflowed = True
            self._push(None)
            self.hub.unsubscribe(self)
            if self.on_overflow is not None:
                self.on_overflow()
            return
        self.queued_bytes += len(ch.line)
        self._push(ch)

    def expire(self, compacted: int) -> None:
        """End the stream after what is queued: history after ``last`` is gone."""
        self.overflowed = True
        self.expired = Expired(self.last, compacted)
        self._push(None)

    def end(self) -> None:
        """End the stream after what is queued (the hub or the server stops)."""
        self._push(None)

    async def next(self, timeout: float | None = None) -> Change | None:
        """The next change, or None when the stream ended (raises Overflow when too slow,
        Expired when the hub lost history, TimeoutError when nothing came in ``timeout``
        seconds)."""
        if not self.pending:
            loop = asyncio.get_running_loop()
            waiter = self._waiter = loop.create_future()
            timer = None if timeout is None else loop.call_later(timeout, _wake, waiter)
            try:
                await waiter
            finally:
                self._waiter = None
                if timer is not None:
                    timer.cancel()
            if not self.pending:
                raise TimeoutError
        ch = self.pending.popleft()
        if ch is None:
            self.pending.appendleft(None)  # the end stays the end
            if self.overflowed:
                raise self.expired or Overflow()
            return None
        self.queued_bytes -= len(ch.line)
        return ch

    def queued(self, max_bytes: int) -> tuple[list[Change], bool]:
        """What is queued now, up to about ``max_bytes`` of lines, and whether the stream
        ends after it (the hub stopped, lost history or dropped this watcher)."""
        out: list[Change] = []
        size = 0
        pending = self.pending
        while size < max_bytes and pending:
            ch = pending[0]
            if ch is None:
                self.queued_bytes -= size
                return out, True
            pending.popleft()
            out.append(ch)
            size += len(ch.line)
        self.queued_bytes -= size
        return out, False

    def close(self) -> None:
        self.hub.unsubscribe(self)


class Trigger:
    """Subscriptions indexed by one selectable field of one resource, as upstream's cacher
    triggers pod watchers by ``spec.nodeName``: a change is offered only to those
    subscribed to its value, or to its previous value (so one leaving the selection is
    seen too), instead of to every watcher of the resource."""

    __slots__ = ("field", "prefix", "selectable", "subs")

    def __init__(self, prefix: str, field: str,
                 selectable: Callable[[Obj], dict[str, str]]) -> None:
        self.prefix = prefix
        self.field = field
        self.selectable = selectable
        self.subs: dict[str, set[Subscription]] = {}

    def values(self, ch: Change) -> tuple[str, ...]:
        now = ch.fields(self.selectable).get(self.field, "")
        if ch.type == "MODIFIED" and ch.prev is not None:
            before = ch.prev_fields(self.selectable).get(self.field, "")
            if before != now:
                return now, before
        return (now,)


class WatchHub:
    """The window is bounded twice: by event count and by the bytes its events hold, so a
    client that writes large objects cannot grow the server without bound."""

    def __init__(self, store: Store, cache: objects.WireCache, window: int = 20_000,
                 window_bytes: int = 256 << 20, subscriber_bytes: int = 16 << 20) -> None:
        self.store = store
        self.cache = cache
        self.window: deque[Change] = deque()
        self.window_limit = window
        self.window_bytes_limit = window_bytes
        self.window_bytes = 0
        self.window_start = 0  # changes with revision > window_start are all in the window
        # each key's last change in the window: the previous object of its next change
        self._latest: dict[str, Change] = {}
        self.revision = 0
        self.subs: set[Subscription] = set()  # all of them
        # offered every change of their resource (by its key prefix; "": of every resource)
        self._untriggered: dict[str, set[Subscription]] = {}
        self._triggers: dict[tuple[str, str], Trigger] = {}
        self._triggered: dict[Subscription, tuple[Trigger, str]] = {}
        self.subscriber_limit = 50_000
        self.subscriber_bytes = subscriber_bytes
        self._task: asyncio.Task[None] | None = None
        self._released = 0  # bytes evicted since freed memory was last handed back
        self.stopped = False

    async def start(self) -> None:
        self.revision = self.window_start = await self.store.current_revision()
        self._task = asyncio.create_task(self._run(), name="watch-hub")

    async def stop(self) -> None:
        self.stopped = True
        if self._task is not None:
            await cancel_and_wait(self._task, ignore=(Exception,))
        for sub in list(self.subs):
            sub.end()
            self.unsubscribe(sub)

    async def _run(self) -> None:
        while True:
            try:
                async for ev in self.store.watch("/registry/", self.revision):
                    self._publish(change_of(ev, self.cache))
            except asyncio.CancelledError:
                raise
            except CompactedError as err:
                # History we never saw is gone: restart from the current revision (never
                # from the lost one again) and end every watch with a 410; clients re-list.
                log.warning("watch hub: fell behind compaction (%s); resetting", err)
                await self._reset(err.compacted)
                continue
            except Exception:  # a lost store watch: resume from the last revision seen
                log.exception("watch hub: store watch failed; resuming")
                await asyncio.sleep(0.1)
                continue
            return

    async def _reset(self, compacted: int | None = None) -> None:
        self._released += self.window_bytes
        self.window.clear()
        self._latest.clear()
        self.window_bytes = 0
        self.revision = self.window_start = await self.store.current_revision()
        if compacted is None:
            compacted = await self.store.compacted_revision()
        for sub in list(self.subs):
            sub.expire(compacted)
            self.unsubscribe(sub)
        self._release()

    def _publish(self, ch: Change) -> None:
        window = self.window
        window.append(ch)
        self.window_bytes += ch.size
        latest = self._latest
        if ch.type == "DELETED":
            latest.pop(ch.key, None)
        else:
            before = latest.get(ch.key)
            if before is not None:
                ch.follows(before)
            latest[ch.key] = ch
        while len(window) > self.window_limit or (
            self.window_bytes > self.window_bytes_limit and len(window) > 1
        ):
            old = window.popleft()
            if latest.get(old.key) is old:
                del latest[old.key]
            self.window_bytes -= old.size
            self._released += old.size
            self.window_start = old.revision
        self.revision = ch.revision
        untriggered = self._untriggered
        for resource in (resource_prefix(ch.key), ""):
            subs = untriggered.get(resource)
            if subs:
                for sub in list(subs):
                    sub.offer(ch)
        for trigger in self._triggers.values():
            if trigger.subs and ch.key.startswith(trigger.prefix):
                for value in trigger.values(ch):
                    for sub in list(trigger.subs.get(value, ())):
                        sub.offer(ch)
        if self._released >= _RELEASE_EVERY:
            self._release()

    def _release(self) -> None:
        """Hand memory freed by evictions back to the system (the allocator keeps it)."""
        self._released = 0
        malloc.release_free_memory()

    def covers(self, after: int) -> bool:
        return after >= self.window_start

    def trigger(self, prefix: str, field: str,
                selectable: Callable[[Obj], dict[str, str]]) -> Trigger:
        """The index of subscriptions by ``field`` of the objects under ``prefix``."""
        trigger = self._triggers.get((prefix, field))
        if trigger is None:
            trigger = self._triggers[prefix, field] = Trigger(prefix, field, selectable)
        return trigger

    def subscribe(self, prefix: str, after: int,
                  relevant: Callable[[Change], bool] | None = None,
                  triggered: tuple[Trigger, str] | None = None) -> Subscription:
        """Changes after ``after`` (those ``relevant`` accepts, if given; only those whose
        trigger field has the given value before or after, if ``triggered``); the caller
        checks :meth:`covers` first."""
        sub = Subscription(self, prefix, after, self.subscriber_limit,
                           self.subscriber_bytes, relevant)
        for ch in self.window:
            sub.offer(ch)
        self.subs.add(sub)
        if triggered is None:
            self._untriggered.setdefault(resource_prefix(prefix), set()).add(sub)
        else:
            trigger, value = triggered
            trigger.subs.setdefault(value, set()).add(sub)
            self._triggered[sub] = triggered
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        self.subs.discard(sub)
        untriggered = self._untriggered.get(resource_prefix(sub.prefix))
        if untriggered is not None:
            untriggered.discard(sub)
        triggered = self._triggered.pop(sub, None)
        if triggered is not None:
            trigger, value = triggered
            bucket = trigger.subs.get(value)
            if bucket is not None:
                bucket.discard(sub)
                if not bucket:
                    del trigger.subs[value]


async def store_changes(
    store: Store, prefix: str, after: int, cache: objects.WireCache | None = None
) -> AsyncIterator[Change]:
    """Changes straight from the store's history (for resumes older than the hub window)."""
    async for ev in store.watch(prefix, after):
        yield change_of(ev, cache)


def kv_change(kv: KeyValue, revision: int, cache: objects.WireCache) -> Change:
    """An ADDED change for an object that exists (initial events of a watch)."""
    obj, data = cache.get(kv)
    return Change("ADDED", kv.key, revision, obj, data, None)
