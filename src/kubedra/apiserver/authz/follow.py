"""In-memory views of stored objects for the authorizers: a full read of some key prefixes,
then the watch hub's changes (a fresh read when the hub drops a subscriber). Eventually
consistent, as upstream's informer-fed authorizer graphs are."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from kubedra.api.base import Obj
from kubedra.apiserver import objects
from kubedra.apiserver.hub import Overflow, WatchHub
from kubedra.storage.contract import Store
from kubedra.tasks import cancel_and_wait

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
        await cancel_and_wait(*self._tasks, ignore=(Exception,))
        self._tasks.clear()

    async def _load(self, prefix: str) -> int:
        """Read ``prefix`` and apply it at once: keys gone from the store are dropped, so a
        re-read never shows the authorizers a half-empty view."""
        lr = await self.store.list(prefix)
        fresh = {kv.key for kv in lr.items}
        for key in self._keys[prefix] - fresh:
            self._see(prefix, key, None)
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

    async def _follow(self, prefix: str, after: int | None) -> None:
        """Stream changes; when the hub drops us, or anything fails, read the prefix again
        (a failure is logged and retried, never a silently dead view)."""
        while not self.hub.stopped:
            try:
                if after is None:
                    after = await self._reload(prefix)
                await self._stream(prefix, after)
                after = None
            except Exception:
                log.exception("%s: following %s failed; reading it again", self.name, prefix)
                after = None
                await asyncio.sleep(1.0)

    async def _stream(self, prefix: str, after: int) -> None:
        """Until the hub stops or drops this subscriber."""
        sub = self.hub.subscribe(prefix, after)
        try:
            while True:
                try:
                    ch = await sub.next()
                except Overflow:
                    log.info("%s: re-reading %s", self.name, prefix)
                    return
                if ch is None:
                    return
                self._see(prefix, ch.key, None if ch.type == "DELETED" else ch.obj)
                self.changed()
        finally:
            sub.close()

    async def _reload(self, prefix: str) -> int:
        after = await self._load(prefix)
        self.changed()
        return after
