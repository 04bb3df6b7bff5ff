"""The generic REST operations over a Store: get, list, create, update, delete,
deletecollection, status updates and pod binding (upstream's generic registry ``Store``).

Everything works on dicts; the HTTP layer (:mod:`.handlers`) parses requests and writes
answers. Every write goes through :mod:`.admission` before it reaches the store.

The server's own managedFields record stays JSON beside the typed object: it is never
validated or copied again (an update's server-made record skips admission's typed round
trip too), and a create encodes the object once and caches what it stored rather than
decoding the stored bytes (:meth:`.objects.WireCache.put`).
"""

from __future__ import annotations

import base64
import datetime as dt
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec
from mypy_extensions import mypyc_attr

from kubedra.api import codec
from kubedra.api.base import Obj
from kubedra.api.meta import TypedObject
from kubedra.apiserver import admission, errors, objects, patch
from kubedra.apiserver.hub import Change, kv_change, store_changes
from kubedra.apiserver.params import DeleteOptions, ListOptions, parse_resource_version
from kubedra.apiserver.registry import Registry, Resource
from kubedra.apiserver.selectors import FieldSelector, LabelSelector
from kubedra.registry import pipeline
from kubedra.registry.strategies.core import bind
from kubedra.storage.contract import (
    CompactedError,
    ConflictError,
    FutureRevisionError,
    KeyExistsError,
    KeyValue,
    NotFoundError,
    Store,
)
from kubedra.validation import field as fielderr

ORPHAN = "orphan"
FOREGROUND = "foregroundDeletion"
_GENERATE_RETRIES = 8
_UPDATE_RETRIES = 100

@dataclass(slots=True)
class Result:
    obj: Obj
    code: int = 200
    warnings: list[str] = field(default_factory=list)
    data: bytes | None = None  # the encoded object when already at hand


@dataclass(frozen=True, slots=True)
class Filter:
    labels: LabelSelector | None = None
    fields: FieldSelector | None = None

    def matches(self, res: Resource, obj: Obj) -> bool:
        return self._matches(obj, lambda: res.strategy.selectable_fields(obj))

    def selects(self, res: Resource, ch: Change) -> tuple[bool, bool]:
        """Whether the object of ``ch`` is selected, and whether its previous value was
        (MODIFIED events only; False otherwise). The selectable fields are computed once
        per change and shared by every watcher."""
        selectable = res.strategy.selectable_fields
        now = self._matches(ch.obj, lambda: ch.fields(selectable))
        prev = ch.prev if ch.type == "MODIFIED" else None
        before = prev is not None and self._matches(prev, lambda: ch.prev_fields(selectable))
        return now, before

    def _matches(self, obj: Obj, fields: Callable[[], dict[str, str]]) -> bool:
        labels = self.labels
        if labels is not None and not labels.matches((obj.get("metadata") or {}).get("labels")):
            return False
        if self.fields is not None and self.fields.terms:
            return self.fields.matches(fields())
        return True

    @property
    def everything(self) -> bool:
        no_labels = self.labels is None or self.labels.empty
        return no_labels and (self.fields is None or not self.fields.terms)


Judge = Callable[[Obj | None], None]
"""A request's admission of its write (the request holds the new object), given the stored
object it replaces, or None when it creates one; raises to refuse."""


class Rest:
    """The operations, bound to a registry, a store and the wire cache."""

    def __init__(self, registry: Registry, store: Store, cache: objects.WireCache) -> None:
        self.registry = registry
        self.store = store
        self.cache = cache
        self.namespaces = registry.namespaces()

    # --- reads --------------------------------------------------------------------------

    async def get_kv(self, res: Resource, namespace: str, name: str) -> KeyValue:
        kv = await self.store.get(res.key(namespace, name)) if name else None
        if kv is None:
            raise errors.not_found(res.kind.plural, res.kind.group, name)
        return kv

    async def get(self, res: Resource, namespace: str, name: str) -> tuple[Obj, bytes]:
        """The object in the version ``res`` serves (shared: do not mutate)."""
        kv = await self.get_kv(res, namespace, name)
        return self.served(res, kv)

    def served(self, res: Resource, kv: KeyValue) -> tuple[Obj, bytes]:
        """A stored object as ``res`` serves it, through the wire cache (shared)."""
        if res.converts:
            return self.cache.served(kv, res.kind.version, res.served)
        return self.cache.get(kv)

    async def list_objects(
        self,
        res: Resource,
        namespace: str,
        flt: Filter,
        *,
        limit: int = 0,
        continue_token: str = "",
        revision: int | None = None,
    ) -> tuple[list[tuple[Obj, bytes]], int, str, int | None]:
        """Matching objects (in the version ``res`` serves), the list revision, the next
        continue token and the remaining count (only known for unfiltered pages)."""
        prefix = res.list_prefix(namespace)
        start_after: str | None = None
        if continue_token:
            revision, start_after = decode_continue(continue_token, prefix)
        out: list[tuple[Obj, bytes]] = []
        page = limit if limit > 0 else 0
        everything = flt.everything  # asked once, not per item
        cached = (self.cache.get if not res.converts
                  else lambda kv: self.served(res, kv))
        while True:
            try:
                lr = await self.store.list(
                    prefix, revision=revision, limit=page, start_after=start_after
                )
            except CompactedError:
                if continue_token:
                    raise errors.resource_expired(_CONTINUE_EXPIRED) from None
                raise errors.resource_expired(
                    "The resourceVersion for the provided list is too old."
                ) from None
            except FutureRevisionError as err:
                raise errors.timeout(
                    f"Too large resource version: {err.revision}, current: {err.current}"
                ) from None
            revision = lr.revision
            for i, kv in enumerate(lr.items):
                obj, data = cached(kv)
                if everything or flt.matches(res, obj):
                    out.append((obj, data))
                    if limit and len(out) >= limit:
                        left_in_page = len(lr.items) - i - 1
                        more = lr.more or left_in_page > 0
                        token = encode_continue(revision, kv.key, prefix) if more else ""
                        remaining = lr.remaining + left_in_page
                        return out, revision, token, remaining if everything and more else None
            if not lr.more or not lr.items:
                return out, revision, "", None
            start_after = lr.items[-1].key
            page = max(limit - len(out), 1) if limit else 0

    async def list_revision(self, opts: ListOptions) -> int | None:
        """resourceVersion/resourceVersionMatch → the revision to read at (None: latest)."""
        if opts.continue_token or opts.resource_version in ("", "0"):
            return None
        rv = parse_resource_version(opts.resource_version)
        if opts.resource_version_match == "Exact":
            return rv
        current = await self.store.current_revision()
        if rv > current:
            raise errors.timeout(f"Too large resource version: {rv}, current: {current}")
        return None

    async def current_changes(self, prefix: str) -> tuple[list[Change], int]:
        """A watch's initial events: every object under ``prefix`` as ADDED, and the revision
        they are current at."""
        lr = await self.store.list(prefix)
        return [kv_change(kv, kv.mod_revision, self.cache) for kv in lr.items], lr.revision

    def changes_since(self, prefix: str, after: int) -> AsyncIterator[Change]:
        """The store's own history after ``after`` (for watches the hub cannot serve)."""
        return store_changes(self.store, prefix, after, self.cache)

    # --- create ---------------------------------------------------------------------------

    async def check_namespace(self, res: Resource, namespace: str, name: str) -> Obj | None:
        """NamespaceLifecycle admission: no objects in missing or terminating namespaces.
        The namespace's labels (None for a cluster-scoped kind)."""
        if not res.kind.namespaced:
            return None
        kv = await self.store.get(self.namespaces.key("", namespace)) if namespace else None
        if kv is None:
            raise errors.not_found("namespaces", "", namespace)
        ns, _ = self.cache.get(kv)
        meta = ns.get("metadata") or {}
        if meta.get("deletionTimestamp"):
            raise errors.forbidden_object(
                res.kind.plural, res.kind.group, name,
                f"unable to create new content in namespace {namespace} because it is being "
                "terminated",
            )
        return dict(meta.get("labels") or {})

    async def namespace_labels(self, res: Resource, namespace: str) -> Obj | None:
        """The labels of ``namespace`` for a kind whose validation reads them (else None:
        not read); a missing namespace has none."""
        if not res.strategy.reads_namespace_labels or not namespace:
            return None
        kv = await self.store.get(self.namespaces.key("", namespace))
        if kv is None:
            return {}
        ns, _ = self.cache.get(kv)
        return dict((ns.get("metadata") or {}).get("labels") or {})

    async def create(
        self, res: Resource, namespace: str, obj: TypedObject, *, dry_run: bool = False,
        manager: str = "",
    ) -> Result:
        """``Store.Create``: the request namespace, NamespaceLifecycle, managedFields, then
        the pipeline's ``before_create`` per attempt (from a fresh copy when a generated
        name collided, as ``RetryGenerateName``)."""
        admission.ensure_namespace(res, obj, namespace)
        meta = obj.metadata
        labels = await self.check_namespace(res, namespace, meta.name or "")
        entries = None  # the server's record of ownership: it stays JSON, off the typed path
        if manager:  # ownership is the server's to record: the body's go unread
            meta.managed_fields = None
            managed = managed_fields(res, None, codec.to_builtins(obj), manager, "")
            entries = objects.meta(managed).get("managedFields")
        generated = not meta.name and bool(meta.generate_name)
        # what a retry starts from again (the first attempt changes obj itself): encoded,
        # which costs a fraction of a deep copy, and decoded only if a name collides
        pristine = codec.encode(obj) if generated else b""
        for attempt_no in range(_GENERATE_RETRIES):
            attempt = obj if attempt_no == 0 else codec.decode(pristine, type(obj))
            await admission.before_create(
                res, attempt, labels if res.strategy.reads_namespace_labels else None)
            name = attempt.metadata.name or ""
            key = res.key(namespace, name)
            created = codec.to_builtins(attempt)
            if entries is not None:
                objects.put_managed_fields(created, entries)
            if dry_run:
                if await self.store.get(key) is not None:
                    raise errors.already_exists(res.kind.plural, res.kind.group, name)
                return Result(created, 201, res.strategy.write_warnings(created))
            try:
                kv = await self.store.create(key, objects.encode(created), ttl=res.ttl)
            except KeyExistsError:
                if generated:
                    continue
                raise errors.already_exists(res.kind.plural, res.kind.group, name) from None
            warnings = res.strategy.write_warnings(created)
            out, data = self.cache.put(kv, created)
            return Result(out, 201, warnings, data)
        raise errors.ApiError(errors.status_body(
            500, "AlreadyExists",
            f'{res.kind.plural} "{name}" already exists, the server was not able '
            "to generate a unique name for the object",
            {"kind": res.kind.plural, "retryAfterSeconds": 1},
        ))

    # --- update -----------------------------------------------------------------------------

    async def update(
        self,
        res: Resource,
        namespace: str,
        name: str,
        mutate: Callable[[Obj], Awaitable[Obj]],
        *,
        subresource: str = "",
        dry_run: bool = False,
        create_missing: Callable[[], Awaitable[Result]] | None = None,
        admit: bool = True,
        manager: str = "",
        keeps_given: bool = False,
        judge: Judge | None = None,
    ) -> Result:
        """GuaranteedUpdate: read, ``mutate`` a copy, admit, compare-and-swap, retry on a
        lost race. A resourceVersion in the new object that is not the stored one is a 409.
        ``admit=False`` is for the server's own writes (binding, GC, finalize).
        ``keeps_given``: ``mutate`` never changes the object it is given (a PUT ignores it,
        most patch types copy what they change), so it gets the stored object itself rather
        than a copy. ``judge`` (the request's admission) gets the stored object after
        ``mutate``, untouched even when ``mutate`` changed its copy in place."""
        key = res.key(namespace, name)
        labels = (await self.namespace_labels(res, namespace)
                  if admit and subresource == "status" else None)
        for _ in range(_UPDATE_RETRIES):
            kv = await self.store.get(key)
            if kv is None:
                if create_missing is not None:
                    return await create_missing()
                raise errors.not_found(res.kind.plural, res.kind.group, name)
            old = self.cache.decoded(kv)  # read, never changed, by everything below
            # a fresh decode for mutate to change: cheaper than deepcopy
            new = await mutate(old if keeps_given else objects.from_kv(kv))
            if judge is not None:
                judge(old)
            new_meta = objects.meta(new)
            pinned = str(new_meta.get("resourceVersion") or "")
            if pinned and pinned != str(kv.mod_revision):
                raise errors.conflict(res.kind.plural, res.kind.group, name, errors.MODIFIED)
            if not pinned:
                new_meta["resourceVersion"] = str(kv.mod_revision)
            self._keep_system_meta(new_meta, old)
            if manager:
                new = managed_fields(res, old, new, manager, subresource)
            if admit:
                new = await admission.before_update(res, new, old,
                                                    status=subresource == "status",
                                                    own_managed_fields=bool(manager),
                                                    namespace_labels=labels)
            warned = res.strategy.write_warnings(new) if admit and not subresource else []
            if new == old:
                return Result(new, warnings=warned)
            if dry_run:
                return Result(new, warnings=warned)
            # On a lost race read again: a resourceVersion the request pinned (PUT body, or
            # set by the patch) no longer matches then and becomes the 409 above.
            if _should_delete_during_update(new) and not res.strategy.blocks_deletion(new):
                gone = await self._cas(res, name, self.store.delete(key, kv.mod_revision))
                if gone is None:
                    continue
                objects.meta(new)["resourceVersion"] = str(gone.mod_revision)
                return Result(new, warnings=warned)
            result = await self._swap(res, name, key, new, kv.mod_revision)
            if result is not None:
                result.warnings += warned
                return result
        raise errors.conflict(res.kind.plural, res.kind.group, name, errors.MODIFIED)

    async def _cas(
        self, res: Resource, name: str, write: Awaitable[KeyValue]
    ) -> KeyValue | None:
        """Await a compare-and-swap write; None when a race was lost (the caller reads
        again), 404 when the object went away."""
        try:
            return await write
        except ConflictError:
            return None
        except NotFoundError:
            raise errors.not_found(res.kind.plural, res.kind.group, name) from None

    async def _swap(self, res: Resource, name: str, key: str, obj: Obj,
                    revision: int) -> Result | None:
        """Write ``obj`` over ``revision``: the stored answer, or None on a lost race."""
        out_kv = await self._cas(res, name, self.store.update(key, objects.to_storage(obj),
                                                              revision, ttl=res.ttl))
        if out_kv is None:
            return None
        out, data = self.cache.put(out_kv, obj)
        return Result(out, data=data)

    @staticmethod
    def _keep_system_meta(new_meta: Obj, old: Obj) -> None:
        """Fields clients cannot set on update: reset from the stored object as upstream's
        ``FillObjectMetaSystemFields``/``BeforeUpdate`` do."""
        old_meta = old.get("metadata") or {}
        for k in ("creationTimestamp", "deletionTimestamp"):
            # metav1.Time compares instants: the Python client sends "+00:00" for "Z".
            new_t, old_t = new_meta.get(k), old_meta.get(k)
            if isinstance(new_t, str) and isinstance(old_t, str) and new_t != old_t:
                try:
                    if dt.datetime.fromisoformat(new_t) == dt.datetime.fromisoformat(old_t):
                        new_meta[k] = old_t
                except ValueError:
                    pass
        for k in ("uid", "creationTimestamp", "selfLink", "deletionTimestamp",
                  "deletionGracePeriodSeconds"):
            if new_meta.get(k) in (None, "") or k in ("selfLink",):
                if k in old_meta:
                    new_meta[k] = old_meta[k]
                else:
                    new_meta.pop(k, None)
        if new_meta.get("managedFields") is None and "managedFields" in old_meta:
            new_meta["managedFields"] = old_meta["managedFields"]

    async def replace(
        self,
        res: Resource,
        namespace: str,
        name: str,
        body: TypedObject,
        *,
        subresource: str = "",
        dry_run: bool = False,
        manager: str = "",
        judge: Judge | None = None,
    ) -> Result:
        meta = body.metadata
        if meta.name not in (None, "", name):
            raise errors.bad_request(
                f"the name of the object ({meta.name}) does not match the name on "
                f"the URL ({name})"
            )
        meta.name = name
        if res.kind.namespaced:
            admission.ensure_namespace(res, body, namespace)
        if manager:  # ownership is recorded from the stored object's: the body's go unread
            meta.managed_fields = None
        # to_builtins builds new containers throughout: the first attempt takes them as they
        # are, a retry after a conflict converts the (unchanged) body again
        first: list[Obj] = [codec.to_builtins(body)]

        async def mutate(old: Obj) -> Obj:
            return first.pop() if first else codec.to_builtins(body)

        create_missing = None
        if res.strategy.allow_create_on_update and not subresource:
            async def create_missing() -> Result:
                if judge is not None:
                    judge(None)
                return await self.create(res, namespace, pipeline.fresh_copy(body),
                                         dry_run=dry_run, manager=manager)

        return await self.update(
            res, namespace, name, mutate, subresource=subresource, dry_run=dry_run,
            create_missing=create_missing, manager=manager, keeps_given=True, judge=judge,
        )

    # --- delete -----------------------------------------------------------------------------

    async def delete(
        self, res: Resource, namespace: str, name: str, opts: DeleteOptions
    ) -> Result:
        """Delete now, or mark deleting and wait for finalizers / the grace period."""
        key = res.key(namespace, name)
        for _ in range(_UPDATE_RETRIES):
            kv = await self.store.get(key)
            if kv is None:
                raise errors.not_found(res.kind.plural, res.kind.group, name)
            stored = self.cache.decoded(kv)  # read, never changed, by everything below
            meta = stored.get("metadata") or {}
            self._check_preconditions(res, name, meta, opts)
            finalizers = self._gc_finalizers(res, opts, list(meta.get("finalizers") or []))
            grace = 0
            if res.strategy.graceful_delete:
                grace = res.strategy.grace_period(stored, opts.grace_period_seconds)
            if not finalizers and grace == 0 and not res.strategy.blocks_deletion(stored):
                if opts.dry_run:
                    return self._deleted_result(res, objects.from_kv(kv))
                out_kv = await self._cas(res, name, self.store.delete(key, kv.mod_revision))
                if out_kv is None:
                    continue
                return self._deleted_result(res, *objects.at_revision(kv, stored,
                                                                      out_kv.mod_revision))
            obj = objects.from_kv(kv)
            self._mark_deleting(obj, finalizers, grace, res)
            if obj == stored or opts.dry_run:
                return Result(obj)
            result = await self._swap(res, name, key, obj, kv.mod_revision)
            if result is not None:
                return result
        raise errors.conflict(res.kind.plural, res.kind.group, name, errors.MODIFIED)

    @staticmethod
    def _check_preconditions(res: Resource, name: str, meta: Obj, opts: DeleteOptions) -> None:
        if opts.precondition_uid and opts.precondition_uid != meta.get("uid"):
            raise errors.conflict(
                res.kind.plural, res.kind.group, name,
                f"Precondition failed: UID in precondition: {opts.precondition_uid}, UID in "
                f"object meta: {meta.get('uid')}",
            )
        if opts.precondition_rv and opts.precondition_rv != meta.get("resourceVersion"):
            raise errors.conflict(
                res.kind.plural, res.kind.group, name,
                f"Precondition failed: ResourceVersion in precondition: {opts.precondition_rv}, "
                f"ResourceVersion in object meta: {meta.get('resourceVersion')}",
            )

    @staticmethod
    def _gc_finalizers(res: Resource, opts: DeleteOptions, finalizers: list[str]) -> list[str]:
        """``deletionFinalizersForGarbageCollection``: the orphan/foreground finalizer the
        propagation policy asks for (an existing one wins when the request names none)."""
        policy = opts.propagation_policy
        if not policy and opts.orphan_dependents is not None:
            policy = "Orphan" if opts.orphan_dependents else "Background"
        if not policy:
            if ORPHAN in finalizers:
                policy = "Orphan"
            elif FOREGROUND in finalizers:
                policy = "Foreground"
            else:
                policy = res.strategy.default_propagation
        out = [f for f in finalizers if f not in (ORPHAN, FOREGROUND)]
        if policy == "Orphan":
            out.append(ORPHAN)
        elif policy == "Foreground":
            out.append(FOREGROUND)
        return out

    @staticmethod
    def _mark_deleting(obj: Obj, finalizers: list[str], grace: int, res: Resource) -> None:
        """BeforeDelete: set deletionTimestamp (now + grace) once; shorten a pending grace."""
        meta = objects.meta(obj)
        if finalizers:
            meta["finalizers"] = finalizers
        else:
            meta.pop("finalizers", None)
        now = dt.datetime.now(dt.UTC).replace(microsecond=0)
        current = meta.get("deletionGracePeriodSeconds")
        if not meta.get("deletionTimestamp"):
            meta["deletionTimestamp"] = (now + dt.timedelta(seconds=grace)).strftime(
                "%Y-%m-%dT%H:%M:%SZ"
            )
            meta["deletionGracePeriodSeconds"] = grace
            res.strategy.prepare_for_delete(obj)
            if isinstance(meta.get("generation"), int) and meta["generation"] > 0:
                meta["generation"] += 1
        elif res.strategy.graceful_delete and isinstance(current, int) and grace < current:
            meta["deletionTimestamp"] = (now + dt.timedelta(seconds=grace)).strftime(
                "%Y-%m-%dT%H:%M:%SZ"
            )
            meta["deletionGracePeriodSeconds"] = grace

    @staticmethod
    def _deleted_result(res: Resource, obj: Obj, data: bytes | None = None) -> Result:
        if res.strategy.return_deleted_object:
            return Result(obj, data=data)
        meta = obj.get("metadata") or {}
        details: dict[str, Any] = {"name": meta.get("name", "")}
        if res.kind.group:
            details["group"] = res.kind.group
        details["kind"] = res.kind.plural
        if meta.get("uid"):
            details["uid"] = meta["uid"]
        return Result(errors.success_status(details))

    async def delete_collection(
        self, res: Resource, namespace: str, flt: Filter, opts: DeleteOptions
    ) -> Result:
        items, revision, _, _ = await self.list_objects(res, namespace, flt)
        deleted: list[Obj] = []
        for obj, _data in items:
            meta = obj.get("metadata") or {}
            try:
                r = await self.delete(
                    res, str(meta.get("namespace") or ""), str(meta.get("name")), opts
                )
            except errors.ApiError as err:
                if err.code == 404:
                    continue
                raise
            deleted.append(r.obj if r.obj.get("kind") != "Status" else obj)
        return Result(list_object(res, [objects.encode(o) for o in deleted], revision, ""))

    # --- pods/binding ---------------------------------------------------------------------

    async def bind_pod(self, res: Resource, namespace: str, name: str, binding: Obj) -> Result:
        meta = objects.meta(binding)
        if meta.get("name") not in (None, "", name):
            raise errors.bad_request(
                f"the name of the object ({meta.get('name')}) does not match the name on the "
                f"URL ({name})"
            )
        target = binding.get("target")
        if not isinstance(target, dict) or not target.get("name"):
            raise errors.invalid("Binding", "", name, [
                fielderr.required(fielderr.ROOT.child("target", "name"))
            ])

        async def mutate(pod: Obj) -> Obj:
            outcome = bind(pod, binding)
            if isinstance(outcome, str):
                raise errors.conflict("pods", "", name, outcome)
            if outcome:
                raise errors.invalid("Binding", "", name, outcome)
            return pod

        await self.update(res, namespace, name, mutate, admit=False)
        return Result(dict(errors.success_status(), code=201), 201)

    # --- pods/eviction --------------------------------------------------------------------

    async def evict_pod(self, res: Resource, namespace: str, name: str,
                        opts: DeleteOptions) -> Result:
        """EvictionREST: no PodDisruptionBudget is served, so nothing can refuse the
        eviction; the pod is deleted with the eviction's options (gracefully, as a DELETE
        of a running pod is), and the answer is 201 with a Success Status."""
        await self.delete(res, namespace, name, opts)
        return Result(dict(errors.success_status(), code=201), 201)


def managed_fields(res: Resource, old: Obj | None, new: Obj, manager: str,
                   subresource: str) -> Obj:
    """Record ``manager``'s Update ownership in metadata.managedFields."""
    return patch.update_managed_fields(
        old, new, manager, subresource=subresource,
        reset_fields=res.strategy.reset_fields(subresource, old, new),
    )


_CONTINUE_EXPIRED = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this "
    "response to retrieve the remainder of the results. Continuing with the provided token "
    "results in an inconsistent list - objects that were created, modified, or deleted between "
    "the time the first chunk was returned and now may show up in the list."
)


def _should_delete_during_update(obj: Obj) -> bool:
    """Removing the last finalizer of a deleting object (grace over) deletes it."""
    meta = obj.get("metadata") or {}
    if not meta.get("deletionTimestamp") or meta.get("finalizers"):
        return False
    return meta.get("deletionGracePeriodSeconds") in (0, None)


@mypyc_attr(native_class=False)  # a subclass of a library class
class _ContinueToken(msgspec.Struct):
    v: str
    rv: int
    start: str


def encode_continue(revision: int, last_key: str, prefix: str) -> str:
    """Opaque token as upstream: base64 of ``{"v","rv","start"}`` (start is key-relative)."""
    tok = _ContinueToken("meta.k8s.io/v1", revision, last_key[len(prefix):] + "\x00")
    return base64.urlsafe_b64encode(msgspec.json.encode(tok)).decode().rstrip("=")


def decode_continue(token: str, prefix: str) -> tuple[int, str]:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        tok = msgspec.json.decode(raw, type=_ContinueToken)
    except (ValueError, msgspec.MsgspecError):
        raise errors.bad_request("continue key is not valid: illegal base64 data") from None
    if tok.v != "meta.k8s.io/v1" or tok.rv <= 0 or not tok.start.endswith("\x00"):
        raise errors.bad_request("continue key is not valid: incorrect encoded start "
                                 "resourceVersion (version meta.k8s.io/v1)")
    start = tok.start[:-1]
    if start.startswith("/") or "/../" in f"/{start}/":
        raise errors.bad_request("continue key is not valid: path traversal not allowed")
    return tok.rv, prefix + start


def list_object(res: Resource, items: list[bytes], revision: int, token: str,
                remaining: int | None = None) -> Obj:
    """A ``<Kind>List`` dict with raw item bytes (encoded by :func:`encode_list`)."""
    meta: Obj = {"resourceVersion": str(revision)}
    if token:
        meta["continue"] = token
    if remaining is not None and token:
        meta["remainingItemCount"] = remaining
    return {
        "kind": res.kind.list_kind,
        "apiVersion": res.kind.api_version,
        "metadata": meta,
        "items": [msgspec.Raw(b) for b in items],
    }
