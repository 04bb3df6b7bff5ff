"""Deciding what becomes of an Event before it is written, as client-go's EventCorrelator
(``tools/record/events_cache.go``) does, so a component repeating itself produces one Event
with a growing ``count`` instead of thousands of objects.

Three steps, in upstream's order:

1. **spam filter**: a token bucket per source and involved object (burst 25, one more token
   every 5 minutes); an event without a token is dropped;
2. **aggregation**: once 10 events with the same source, object, type and reason but
   different messages arrive within 10 minutes, further ones are folded into one Event whose
   message starts with ``(combined from similar events): ``;
3. **observation**: an event whose key (source, object, type, reason, message) was seen
   before becomes a patch of the Event written last time (``count`` + 1, ``lastTimestamp``
   and ``message``), keeping its name and ``firstTimestamp``.

Pure bookkeeping (no I/O): the recorder writes what this returns and reports back the stored
Event. Caches are LRUs of 4096 entries, as upstream's.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from kubedra.api.core import Event
from kubedra.api.meta import ObjectMeta, format_time

MAX_CACHE_ENTRIES = 4096
AGGREGATE_MAX_EVENTS = 10
AGGREGATE_INTERVAL = 600.0
SPAM_BURST = 25
SPAM_QPS = 1.0 / 300.0
COMBINED_PREFIX = "(combined from similar events): "

K = TypeVar("K")
V = TypeVar("V")


class _Lru(Generic[K, V]):
    def __init__(self, size: int = MAX_CACHE_ENTRIES) -> None:
        self._items: OrderedDict[K, V] = OrderedDict()
        self._size = size

    def get(self, key: K) -> V | None:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self._size:
            self._items.popitem(last=False)


@dataclass
class _Bucket:
    tokens: float
    last: float


@dataclass
class _Aggregate:
    messages: set[str] = field(default_factory=set)
    last: float = 0.0


@dataclass(frozen=True, slots=True)
class _Seen:
    count: int
    first_timestamp: str | None
    name: str


@dataclass(frozen=True, slots=True)
class Decision:
    """Write ``event``: as a strategic-merge ``patch`` of the existing Event named
    ``event.metadata.name`` when there is one (create it if that Event is gone), else as a
    create. ``key`` names the serialization unit (writes of one key must not interleave)."""

    event: Event
    key: str
    patch: dict[str, object] | None


def _object_key(event: Event) -> list[str]:
    ref, source = event.involved_object, event.source
    return [source.component or "", source.host or "", ref.kind or "", ref.namespace or "",
            ref.name or "", ref.uid or "", ref.api_version or "", event.type or ""]


def event_key(event: Event) -> str:
    """upstream's getEventKey: everything that makes two events the same occurrence."""
    ref = event.involved_object
    parts = _object_key(event)
    parts.insert(5, ref.field_path or "")
    return "".join([*parts, event.reason or "", event.message or ""])


class EventCorrelator:
    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._buckets: _Lru[str, _Bucket] = _Lru()
        self._aggregates: _Lru[str, _Aggregate] = _Lru()
        self._seen: _Lru[str, _Seen] = _Lru()

    def correlate(self, event: Event) -> Decision | None:
        """What to write for ``event`` (``None``: drop it as spam)."""
        now = self._clock()
        if not self._allow(event, now):
            return None
        event, key = self._aggregate(event, now)
        return self._observe(event, key)

    def written(self, stored: Event) -> None:
        """Remember the Event the server stored, so the next repeat patches it."""
        self._seen.put(event_key(stored), _Seen(stored.count or 1, stored.first_timestamp,
                                                stored.metadata.name or ""))

    def _allow(self, event: Event, now: float) -> bool:
        key = "".join(_object_key(event))
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = _Bucket(float(SPAM_BURST), now)
        bucket.tokens = min(float(SPAM_BURST), bucket.tokens + (now - bucket.last) * SPAM_QPS)
        bucket.last = now
        self._buckets.put(key, bucket)
        if bucket.tokens < 1.0:
            return False
        bucket.tokens -= 1.0
        return True

    def _aggregate(self, event: Event, now: float) -> tuple[Event, str]:
        key = "".join([*_object_key(event)[:-1], event.type or "", event.reason or "",
                       event.reporting_component, event.reporting_instance])
        record = self._aggregates.get(key)
        if record is None or now - record.last > AGGREGATE_INTERVAL:
            record = _Aggregate()
        record.messages.add(event.message or "")
        record.last = now
        self._aggregates.put(key, record)
        if len(record.messages) < AGGREGATE_MAX_EVENTS:
            return event, event_key(event)
        record.messages.pop()  # the set never grows past the maximum
        stamp = format_time(now)
        combined = Event(
            metadata=ObjectMeta(name=f"{event.involved_object.name}.{int(now * 1e9):x}",
                                namespace=event.metadata.namespace),
            involved_object=event.involved_object, reason=event.reason, type=event.type,
            message=COMBINED_PREFIX + (event.message or ""), source=event.source,
            first_timestamp=stamp, last_timestamp=stamp, count=1,
            reporting_component=event.reporting_component,
            reporting_instance=event.reporting_instance)
        return combined, key

    def _observe(self, event: Event, key: str) -> Decision:
        seen = self._seen.get(key)
        patch: dict[str, object] | None = None
        if seen is not None:
            event.count = seen.count + 1
            event.first_timestamp = seen.first_timestamp
            event.metadata.name = seen.name
            patch = {"count": event.count, "lastTimestamp": event.last_timestamp,
                     "message": event.message}
        self._seen.put(key, _Seen(event.count or 1, event.first_timestamp,
                                  event.metadata.name or ""))
        return Decision(event, key, patch)
