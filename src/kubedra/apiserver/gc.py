"""Garbage collection inside the server: ownerReferences, the orphan and foregroundDeletion
finalizers, and namespace termination (upstream's GC and namespace controllers, reduced).

It keeps an index of every object's uid and owners, fed by the watch hub, and queues work:
- an object whose owners are all gone is deleted (background propagation); dangling
  references next to live owners are removed;
- a deleting owner with ``orphan`` has the reference removed from its dependents, then the
  finalizer; with ``foregroundDeletion`` its dependents are deleted first;
- a terminating namespace has its content deleted, then its ``kubernetes`` finalizer removed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass

from kubedra.api.base import Obj
from kubedra.apiserver import errors
from kubedra.apiserver.hub import Change, Overflow, Subscription, WatchHub
from kubedra.apiserver.params import DeleteOptions
from kubedra.apiserver.registry import Registry, Resource
from kubedra.apiserver.rest import FOREGROUND, ORPHAN, Rest
from kubedra.registry.strategies.base import sub_dict
from kubedra.tasks import cancel_and_wait

log = logging.getLogger(__name__)


@dataclass(slots=True)
class _Entry:
    uid: str
    owners: list[str]  # owner uids whose kinds we serve
    deleting: bool
    finalizers: tuple[str, ...]


class GarbageCollector:
    def __init__(self, registry: Registry, rest: Rest, hub: WatchHub) -> None:
        self.registry = registry
        self.rest = rest
        self.hub = hub
        self.by_key: dict[str, _Entry] = {}
        self.by_uid: dict[str, str] = {}
        self.dependents: dict[str, set[str]] = {}
        self.terminating: set[str] = set()
        self.queue: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
        self._pending: set[tuple[str, str]] = set()
        self._served = {(r.kind.api_version, r.kind.kind) for r in registry}
        self._by_prefix = registry.by_prefix()
        self._tasks: list[asyncio.Task[None]] = []

    # --- lifecycle --------------------------------------------------------------------------

    async def start(self) -> None:
        """Start (again, after :meth:`stop`: a replica that regains its Lease)."""
        self.queue = asyncio.Queue()
        self._pending.clear()
        sub = await self._sync()
        self._tasks = [
            asyncio.create_task(self._follow(sub), name="gc-follow"),
            asyncio.create_task(self._work(), name="gc-work"),
        ]

    async def _sync(self) -> Subscription:
        """(Re)build the index from a list and follow the hub from the list's revision."""
        lr = await self.rest.store.list("/registry/")
        self.by_key.clear()
        self.by_uid.clear()
        self.dependents.clear()
        for kv in lr.items:
            obj, _ = self.rest.cache.get(kv)
            self._index(kv.key, obj, self._entry(obj))
        for key in list(self.by_key):
            self._schedule_for(key)
        return self.hub.subscribe("/registry/", lr.revision)

    async def stop(self) -> None:
        await cancel_and_wait(*self._tasks, ignore=(Exception,))

    async def idle(self, timeout: float = 5.0) -> bool:
        """Wait until no work is queued (for tests)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self._pending or not self.queue.empty():
            if loop.time() > deadline:
                return False
            await asyncio.sleep(0.01)
        return True

    # --- index ------------------------------------------------------------------------------

    def _resource_of(self, key: str) -> Resource | None:
        parts = key.split("/")
        if len(parts) < 5:
            return None
        return self._by_prefix.get("/".join(parts[:4]) + "/")

    def _entry(self, obj: Obj) -> _Entry:
        meta = obj.get("metadata") or {}
        owners = [
            str(ref.get("uid"))
            for ref in meta.get("ownerReferences") or []
            if isinstance(ref, dict) and (ref.get("apiVersion"), ref.get("kind")) in self._served
        ]
        return _Entry(str(meta.get("uid") or ""), owners, bool(meta.get("deletionTimestamp")),
                      tuple(meta.get("finalizers") or ()))

    def _index(self, key: str, obj: Obj, entry: _Entry) -> None:
        """Record ``entry`` (what :meth:`_entry` read from ``obj``) as ``key``'s."""
        self._unindex(key)
        self.by_key[key] = entry
        if entry.uid:
            self.by_uid[entry.uid] = key
        for o in entry.owners:
            self.dependents.setdefault(o, set()).add(key)
        res = self._resource_of(key)
        if res is not None and res.kind.kind == "Namespace" and entry.deleting:
            self.terminating.add(str((obj.get("metadata") or {}).get("name")))

    def _unindex(self, key: str) -> None:
        entry = self.by_key.pop(key, None)
        if entry is None:
            return
        if self.by_uid.get(entry.uid) == key:
            del self.by_uid[entry.uid]
        for o in entry.owners:
            deps = self.dependents.get(o)
            if deps is not None:
                deps.discard(key)
                if not deps:
                    del self.dependents[o]

    async def _follow(self, sub: Subscription) -> None:
        """Apply the hub's changes; when the hub drops us (too slow, or reset), re-sync."""
        try:
            while True:
                try:
                    ch = await sub.next()
                except Overflow:
                    ch = None
                if ch is not None:
                    self._observe(ch)
                    continue
                sub.close()
                if self.hub.stopped:
                    return
                log.warning("gc: lost the change stream; re-syncing")
                sub = await self._sync()
        finally:
            sub.close()  # also when stopped: a stopped collector leaves no subscriber behind

    def _observe(self, ch: Change) -> None:
        old = self.by_key.get(ch.key)
        if ch.type == "DELETED":
            self._unindex(ch.key)
            if old is not None:
                for dep in list(self.dependents.get(old.uid, ())):
                    self._enqueue("owners", dep)
                for o in old.owners:
                    owner_key = self.by_uid.get(o)
                    if owner_key is not None:
                        self._enqueue("owner", owner_key)
            ns = self._namespace_of(ch.key)
            if ns in self.terminating:
                self._enqueue("namespace", ns)
            res = self._resource_of(ch.key)
            if res is not None and res.kind.kind == "Namespace":
                self.terminating.discard(str((ch.obj.get("metadata") or {}).get("name")))
            return
        entry = self._entry(ch.obj)
        if entry == old:
            return  # nothing the collector follows changed: what it queued for it stands
        self._index(ch.key, ch.obj, entry)
        self._schedule_for(ch.key)

    def _schedule_for(self, key: str) -> None:
        entry = self.by_key.get(key)
        if entry is None:
            return
        if entry.owners and any(o not in self.by_uid for o in entry.owners):
            self._enqueue("owners", key)
        if entry.deleting and (ORPHAN in entry.finalizers or FOREGROUND in entry.finalizers):
            self._enqueue("owner", key)
        res = self._resource_of(key)
        if res is not None and res.kind.kind == "Namespace" and entry.deleting:
            self._enqueue("namespace", key.rsplit("/", 1)[-1])

    def _namespace_of(self, key: str) -> str:
        res = self._resource_of(key)
        if res is None or not res.kind.namespaced:
            return ""
        return key[len(res.prefix):].split("/", 1)[0]

    def _enqueue(self, action: str, target: str) -> None:
        item = (action, target)
        if item not in self._pending:
            self._pending.add(item)
            self.queue.put_nowait(item)

    # --- work -------------------------------------------------------------------------------

    async def _work(self) -> None:
        while True:
            item = await self.queue.get()
            self._pending.discard(item)
            action, target = item
            try:
                if action == "owners":
                    await self._check_owners(target)
                elif action == "owner":
                    await self._finish_owner(target)
                else:
                    await self._finish_namespace(target)
            except asyncio.CancelledError:
                raise
            except errors.ApiError as err:
                if err.code not in (404, 409):
                    log.warning("gc %s %s: %s", action, target, err)
                    await self._retry(item)
                elif err.code == 409:
                    await self._retry(item)
            except Exception:
                log.exception("gc %s %s failed", action, target)
                await self._retry(item)

    async def _retry(self, item: tuple[str, str]) -> None:
        async def later() -> None:
            await asyncio.sleep(0.2)
            self._enqueue(*item)

        self._tasks.append(asyncio.create_task(later()))
        self._tasks = [t for t in self._tasks if not t.done()]

    def _locate(self, key: str) -> tuple[Resource, str, str] | None:
        res = self._resource_of(key)
        if res is None:
            return None
        rest = key[len(res.prefix):]
        if res.kind.namespaced:
            ns, _, name = rest.partition("/")
            return res, ns, name
        return res, "", rest

    async def _check_owners(self, key: str) -> None:
        entry = self.by_key.get(key)
        where = self._locate(key)
        if entry is None or where is None or not entry.owners:
            return
        res, ns, name = where
        gone = [o for o in entry.owners if o not in self.by_uid]
        if not gone:
            return
        if len(gone) == len(entry.owners):
            if not entry.deleting:
                # attemptToDeleteItem: background unless the object asks otherwise
                keeps_own = ORPHAN in entry.finalizers or FOREGROUND in entry.finalizers
                policy = None if keeps_own else "Background"
                await self.rest.delete(res, ns, name, DeleteOptions(propagation_policy=policy))
            return

        async def drop_dangling(obj: Obj) -> Obj:
            meta = obj.setdefault("metadata", {})
            refs = [r for r in meta.get("ownerReferences") or []
                    if not (isinstance(r, dict) and r.get("uid") in gone)]
            meta["ownerReferences"] = refs
            if not refs:
                meta.pop("ownerReferences")
            return obj

        await self.rest.update(res, ns, name, drop_dangling, admit=False)

    async def _finish_owner(self, key: str) -> None:
        """Orphan or delete the dependents of a deleting owner, then drop its finalizer."""
        entry = self.by_key.get(key)
        where = self._locate(key)
        if entry is None or where is None or not entry.deleting:
            return
        res, ns, name = where
        deps = list(self.dependents.get(entry.uid, ()))
        if ORPHAN in entry.finalizers:
            for dep in deps:
                await self._orphan(dep, entry.uid)
            await self._drop_finalizer(res, ns, name, ORPHAN)
        elif FOREGROUND in entry.finalizers:
            if deps:
                for dep in deps:
                    d = self._locate(dep)
                    dep_entry = self.by_key.get(dep)
                    if d is not None and dep_entry is not None and not dep_entry.deleting:
                        with contextlib.suppress(errors.ApiError):
                            await self.rest.delete(*d, DeleteOptions(
                                propagation_policy="Background"))
                return  # the dependents' DELETED events bring us back here
            await self._drop_finalizer(res, ns, name, FOREGROUND)

    async def _orphan(self, dep: str, owner_uid: str) -> None:
        where = self._locate(dep)
        if where is None:
            return

        async def unown(obj: Obj) -> Obj:
            meta = obj.setdefault("metadata", {})
            refs = [r for r in meta.get("ownerReferences") or []
                    if not (isinstance(r, dict) and r.get("uid") == owner_uid)]
            meta["ownerReferences"] = refs
            if not refs:
                meta.pop("ownerReferences")
            return obj

        with contextlib.suppress(errors.ApiError):
            await self.rest.update(*where, unown, admit=False)

    async def _drop_finalizer(self, res: Resource, ns: str, name: str, finalizer: str) -> None:
        async def drop(obj: Obj) -> Obj:
            meta = obj.setdefault("metadata", {})
            left = [f for f in meta.get("finalizers") or [] if f != finalizer]
            meta["finalizers"] = left
            if not left:
                meta.pop("finalizers")
            return obj

        await self.rest.update(res, ns, name, drop, admit=False)

    async def _finish_namespace(self, name: str) -> None:
        """Delete everything in a terminating namespace, then finalize it."""
        ns_res = self.registry.namespaces()
        kv = await self.rest.store.get(ns_res.key("", name))
        if kv is None:
            return
        ns_obj, _ = self.rest.cache.get(kv)
        if not (ns_obj.get("metadata") or {}).get("deletionTimestamp"):
            return
        remaining = 0
        for res in self.registry.by_prefix().values():
            if not res.kind.namespaced:
                continue
            lr = await self.rest.store.list(res.list_prefix(name))
            for item in lr.items:
                remaining += 1
                obj, _ = self.rest.cache.get(item)
                if (obj.get("metadata") or {}).get("deletionTimestamp"):
                    continue
                with contextlib.suppress(errors.ApiError):
                    await self.rest.delete(
                        res, name, str((obj.get("metadata") or {}).get("name")),
                        DeleteOptions(propagation_policy="Background"),
                    )
        if remaining:
            return

        async def finalize(obj: Obj) -> Obj:
            spec = sub_dict(obj, "spec")
            left = [f for f in spec.get("finalizers") or [] if f != "kubernetes"]
            if left:
                spec["finalizers"] = left
            else:
                spec.pop("finalizers", None)
            obj["spec"] = spec
            return obj

        await self.rest.update(ns_res, "", name, finalize, admit=False)
