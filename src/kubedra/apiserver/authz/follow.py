"""In-memory views of stored objects for the authorizers: a full read of some key prefixes,
then the watch hub's changes (a fresh read when the hub drops a subscriber). Eventually
consistent, as upstream's informer-fed authorizer graphs are."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from kubedra.api.base import Obj
from kubedra.apiserver import objects
from kubedra.apiserver.hub import Overflow, WatchHub
from kubedra.storage.contract import Store

log = logging.getLogger(__name__)

#: ``observe(prefix, key, obj)``: ``obj`` is None when the key was deleted.
Observe = Callable[[str, str, Obj | None], None]


class Follower:
    """Feeds ``observe`` every object under ``prefixes``; ``reset`` runs before each full
    read, ``changed`` after each change and each full read."""

    def __init__(self, hub: WatchHub, store: Store, prefixes: tuple[str, ...],
                 observe: Observe, reset: Callable[[], None],
                 changed: Callable[[], None] = lambda: None, name: str = "authz") -> None:
        self.hub = hub
        self.store = store
        self.prefixes = prefixes
        self.observe = observe
        self.reset = reset
        self.changed = changed
        self.name = name
        self._tasks: list[asyncio.Task[None]] = []
        self._keys: dict[str, set[str]] = {p: set() for p in prefixes}

    async def start(self) -> None:
        """The first full read happens before start returns: the view is complete."""
        self.reset()
        for prefix in self.prefixes:
            after = await self._load(prefix)
            self._tasks.append(asyncio.create_task(self._follow(prefix, after),
                                                   name=f"{self.name}:{prefix}"))
        self.changed()

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()

    async def _load(self, prefix: str) -> int:
        lr = await self.store.list(prefix)
        for kv in lr.items:
            self._see(prefix, kv.key, objects.decode(kv.value))
        return lr.revision

    def _see(self, prefix: str, key: str, obj: Obj | None) -> None:
        keys = self._keys[prefix]
        if obj is None:
            keys.discard(key)
        else:
            keys.add(key)
        self.observe(prefix, key, obj)

    async def _follow(self, prefix: str, after: int) -> None:
        sub = self.hub.subscribe(prefix, after)
        while True:
            try:
                ch = await sub.next()
            except Overflow:
                ch = None
            if ch is None:
                sub.close()
                if self.hub.stopped:
                    return
                log.info("%s: re-reading %s", self.name, prefix)
                sub = self.hub.subscribe(prefix, await self._reload(prefix))
                continue
            self._see(prefix, ch.key, None if ch.type == "DELETED" else ch.obj)
            self.changed()

    async def _reload(self, prefix: str) -> int:
        """Drop what this prefix held, then read it again (other prefixes stay)."""
        for key in list(self._keys[prefix]):
            self._see(prefix, key, None)
        after = await self._load(prefix)
        self.changed()
        return after
