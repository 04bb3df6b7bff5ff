"""What a controller wrote, kept until its informer shows it (client-go's MutationCache).

A controller syncs from its informer, which shows the controller's own writes one watch
delivery later. A sync in that gap acts on the older copy: its update is refused with 409
Conflict, or is sent for an object its last write already removed (404). Reading through this
cache gives the newer of the informer's copy and the controller's own write. After a conflict
it tells the sync to wait instead: the server has a newer version than any the controller
knows of, and the watch event that brings it queues the key again.

With a ``ttl`` it also shows the objects the controller created before their watch event
(client-go's ``includeAdds``), for that long: a sync in the gap would otherwise create them
again. An object someone deletes before the informer ever shows it stays visible until then.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Container
from typing import Generic, TypeVar

from kubedra.api.meta import TypedObject, revision
from kubedra.client.errors import ApiError, is_conflict
from kubedra.client.informer import object_key

T = TypeVar("T", bound=TypedObject)


class MutationCache(Generic[T]):
    def __init__(self, ttl: float | None = None) -> None:
        self._ttl = ttl
        self._written: dict[str, T] = {}
        self._written_at: dict[str, float] = {}  # key -> when (monotonic), for ttl
        # key -> (uid, the revision a conflict refused): the informer must show a later one
        self._refused: dict[str, tuple[str | None, int]] = {}

    async def write(self, sent: T, send: Callable[[T], Awaitable[T]]) -> T:
        """``send(sent)`` (an update with ``sent``'s resourceVersion), keeping the answer,
        or noting the conflict before the error goes on to the caller."""
        try:
            return self.wrote(await send(sent))
        except ApiError as e:
            if is_conflict(e):
                self.conflicted(sent)
            raise

    def wrote(self, obj: T) -> T:
        """Keep what the server answered to our write; returns it."""
        key = object_key(obj)
        self._written[key] = obj
        self._written_at[key] = time.monotonic()
        self._refused.pop(key, None)
        return obj

    def added(self, known: Container[str]) -> list[T]:
        """Our writes of objects whose keys ``known`` (the informer's) lacks, younger than
        the ``ttl`` (none without one); older ones are dropped."""
        if self._ttl is None:
            return []
        now = time.monotonic()
        found = []
        for key, obj in list(self._written.items()):
            if key in known:
                continue
            if now - self._written_at[key] > self._ttl:
                self._drop(key)
            else:
                found.append(obj)
        return found

    def _drop(self, key: str) -> None:
        self._written.pop(key, None)
        self._written_at.pop(key, None)

    def conflicted(self, sent: T) -> None:
        """The server refused ``sent`` with a conflict: it holds a newer version."""
        key = object_key(sent)
        self._drop(key)
        self._refused[key] = (sent.metadata.uid, revision(sent))

    def newest(self, cached: T) -> T | None:
        """The newer of the informer's ``cached`` and our own write of the same object, or
        None while ``cached`` is no newer than a version the server refused (the watch
        event of the newer one queues the object again)."""
        key = object_key(cached)
        refused = self._refused.get(key)
        if refused is not None and refused[0] == cached.metadata.uid:
            if revision(cached) <= refused[1]:
                return None
            del self._refused[key]
        written = self._written.get(key)
        if written is None or written.metadata.uid != cached.metadata.uid:
            return cached
        return written if revision(written) > revision(cached) else cached

    def observed(self, cur: T) -> None:
        """The informer shows ``cur``: forget what it has caught up with."""
        key = object_key(cur)
        written = self._written.get(key)
        if written is not None and revision(written) <= revision(cur):
            self._drop(key)
        refused = self._refused.get(key)
        if refused is not None and refused[1] < revision(cur):
            del self._refused[key]

    def forget(self, obj: T) -> None:
        """The object is gone."""
        key = object_key(obj)
        self._drop(key)
        self._refused.pop(key, None)
