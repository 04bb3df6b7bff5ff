"""HTTP endpoints of the served resources: parse the request, call :mod:`.rest`, answer.

Paths follow upstream's RequestInfo: ``/api/v1/...`` and ``/apis/<group>/<version>/...``,
then ``[namespaces/<ns>/]<plural>[/<name>[/<subresource>]]``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any

import msgspec
from aiohttp import web

from kubedra.apiserver import admission, errors, objects, params, patching, tables
from kubedra.apiserver.auth import ANONYMOUS_ADMIN, USER, NodeAuthorizer, User
from kubedra.apiserver.hub import (
    Change,
    Expired,
    Overflow,
    WatchHub,
    kv_change,
    store_changes,
)
from kubedra.apiserver.metrics import RESOURCE, VERB
from kubedra.apiserver.objects import Obj
from kubedra.apiserver.registry import Registry, Resource
from kubedra.apiserver.rest import DeleteOptions, Filter, Rest, Result, list_object
from kubedra.apiserver.selectors import (
    FieldSelector,
    FieldTerm,
    SelectorError,
    parse_field_selector,
    parse_label_selector,
)
from kubedra.storage.contract import CompactedError, Store

MAX_BODY = 3 * 1024 * 1024
JSON = "application/json"
_NS_SUBRESOURCES = frozenset({"status", "finalize"})


@dataclass(frozen=True, slots=True)
class Target:
    res: Resource
    namespace: str
    name: str
    subresource: str
    watch_path: bool = False


def resolve(registry: Registry, group: str, version: str, parts: list[str]) -> Target:
    """The resource a path (after ``/api/v1`` or ``/apis/g/v``) names, or 404."""
    watch_path = False
    if parts and parts[0] == "watch":
        watch_path = True
        parts = parts[1:]
    namespace = ""
    if len(parts) >= 3 and parts[0] == "namespaces" and parts[2] not in _NS_SUBRESOURCES:
        namespace = parts[1]
        parts = parts[2:]
    if not parts or len(parts) > 3 or any(p == "" for p in parts):
        raise errors.path_not_found()
    res = registry.get(group, version, parts[0])
    if res is None:
        raise errors.path_not_found()
    name = parts[1] if len(parts) > 1 else ""
    sub = parts[2] if len(parts) > 2 else ""
    if res.kind.kind == "Namespace" and name:
        namespace = ""
    if res.kind.namespaced is False and namespace:
        raise errors.path_not_found()
    if res.kind.namespaced and not namespace and name:  # /api/v1/pods/x has no meaning
        raise errors.path_not_found()
    if sub and sub not in res.kind.subresources:
        raise errors.path_not_found()
    return Target(res, namespace, name, sub, watch_path)


class ResourceHandlers:
    def __init__(
        self, registry: Registry, store: Store, hub: WatchHub, rest: Rest,
        *, bookmark_interval: float = 60.0, max_watch_seconds: float = 1800.0,
    ) -> None:
        self.registry = registry
        self.store = store
        self.hub = hub
        self.rest = rest
        self.bookmark_interval = bookmark_interval
        self.max_watch_seconds = max_watch_seconds
        self.stopping = asyncio.Event()
        self.authz: NodeAuthorizer | None = None

    # --- entry ---------------------------------------------------------------------------

    async def serve(self, request: web.BaseRequest, t: Target) -> web.StreamResponse:
        method = request.method
        verb = _verb(method, t, request)
        request[VERB] = verb
        request[RESOURCE] = t.res.kind.plural + (f"/{t.subresource}" if t.subresource else "")
        if self.authz is not None:
            self.authz.authorize(_user(request), verb, t.res, t.namespace, t.name,
                                 t.subresource)
        if verb not in t.res.kind.verbs:
            raise errors.method_not_allowed(method)
        if t.subresource == "binding":
            if method != "POST":
                raise errors.method_not_allowed(method)
            return await self._bind(request, t)
        if t.subresource == "finalize":
            if method != "PUT":
                raise errors.method_not_allowed(method)
            return await self._update(request, t, subresource="finalize")
        if t.subresource == "status":
            if method == "GET":
                return await self._get(request, t)
            if method == "PUT":
                return await self._update(request, t, subresource="status")
            if method == "PATCH":
                return await self._patch(request, t, subresource="status")
            raise errors.method_not_allowed(method)
        if t.name:
            if method == "GET":
                if t.watch_path:
                    return await self._watch(request, t)
                return await self._get(request, t)
            if method == "PUT":
                return await self._update(request, t)
            if method == "PATCH":
                return await self._patch(request, t)
            if method == "DELETE":
                return await self._delete(request, t)
            raise errors.method_not_allowed(method)
        if method == "GET":
            if verb == "watch":
                return await self._watch(request, t)
            return await self._list(request, t)
        if t.res.kind.namespaced and not t.namespace:  # all namespaces: list and watch only
            raise errors.method_not_allowed(method)
        if method == "POST":
            return await self._create(request, t)
        if method == "DELETE":
            return await self._delete_collection(request, t)
        raise errors.method_not_allowed(method)

    # --- reads ---------------------------------------------------------------------------

    async def _get(self, request: web.BaseRequest, t: Target) -> web.StreamResponse:
        obj, data = await self.rest.get(t.res, t.namespace, t.name)
        if tables.wants_table(request):
            return _json(tables.table(t.res, [obj], _include_object(request)))
        return _raw(data)

    def _filter(self, request: web.BaseRequest, t: Target, opts: params.ListOptions) -> Filter:
        try:
            labels = parse_label_selector(opts.label_selector) if opts.label_selector else None
            fields = (
                parse_field_selector(opts.field_selector, t.res.check_field_label)
                if opts.field_selector else None
            )
        except SelectorError as err:
            raise errors.bad_request(str(err)) from None
        return Filter(labels, fields)

    async def _list(self, request: web.BaseRequest, t: Target) -> web.StreamResponse:
        opts = params.parse_list_options(request.query)
        flt = self._filter(request, t, opts)
        revision = await self._list_revision(opts)
        items, rev, token, remaining = await self.rest.list_objects(
            t.res, t.namespace, flt, limit=opts.limit, continue_token=opts.continue_token,
            revision=revision,
        )
        if tables.wants_table(request):
            tbl = tables.table(t.res, [o for o, _ in items], _include_object(request))
            tbl["metadata"] = {"resourceVersion": str(rev)}
            if token:
                tbl["metadata"]["continue"] = token
            return _json(tbl)
        return _json(list_object(t.res, [d for _, d in items], rev, token, remaining))

    async def _list_revision(self, opts: params.ListOptions) -> int | None:
        """resourceVersion/resourceVersionMatch → the revision to read at (None: latest)."""
        if opts.continue_token or opts.resource_version in ("", "0"):
            return None
        rv = params.parse_resource_version(opts.resource_version)
        if opts.resource_version_match == "Exact":
            return rv
        current = await self.store.current_revision()
        if rv > current:
            raise errors.timeout(f"Too large resource version: {rv}, current: {current}")
        return None

    # --- watch ----------------------------------------------------------------------------

    async def _watch(self, request: web.BaseRequest, t: Target) -> web.StreamResponse:
        opts = params.parse_list_options(request.query)
        flt = self._filter(request, t, opts)
        as_table = tables.wants_table(request)
        prefix = t.res.list_prefix(t.namespace)
        if t.name:  # /watch/.../<name>: the deprecated single-object watch
            name_term = FieldTerm("metadata.name", t.name, True)
            terms = flt.fields.terms if flt.fields is not None else ()
            flt = Filter(flt.labels, FieldSelector((*terms, name_term)))
        initial: list[Change] = []
        rv = opts.resource_version
        send_initial = opts.send_initial_events
        if send_initial is None:
            send_initial = rv in ("", "0")
        if rv in ("", "0") or send_initial:
            lr = await self.store.list(prefix)
            after = lr.revision
            initial = [kv_change(kv, kv.mod_revision, self.rest.cache) for kv in lr.items]
        else:
            after = params.parse_resource_version(rv)
        resp = web.StreamResponse(status=200, headers={"Content-Type": JSON})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        writer = _EventWriter(resp, t.res, flt, as_table, _include_object(request))
        timeout = float(opts.timeout_seconds) if opts.timeout_seconds else self.max_watch_seconds
        loop = asyncio.get_running_loop()
        deadline = loop.time() + min(timeout, self.max_watch_seconds)
        try:
            for ch in initial:
                await writer.change(ch)
            if send_initial and opts.allow_bookmarks and opts.send_initial_events:
                await writer.bookmark(after, initial_end=True)
            await self._stream(writer, prefix, after, deadline, opts.allow_bookmarks)
            await resp.write_eof()
        except ConnectionResetError:
            pass  # the client went away; nothing to answer
        return resp

    async def _stream(
        self, writer: _EventWriter, prefix: str, after: int, deadline: float, bookmarks: bool
    ) -> None:
        loop = asyncio.get_running_loop()
        if not self.hub.covers(after):
            await self._stream_from_store(writer, prefix, after, deadline)
            return
        sub = self.hub.subscribe(prefix, after)
        stop = asyncio.ensure_future(self.stopping.wait())
        try:
            last_bookmark = loop.time()
            while True:
                left = deadline - loop.time()
                if left <= 0:
                    return
                wait = min(left, self.bookmark_interval) if bookmarks else left
                nxt = asyncio.ensure_future(sub.next())
                done, _ = await asyncio.wait({nxt, stop}, timeout=wait,
                                             return_when=asyncio.FIRST_COMPLETED)
                if nxt not in done:
                    nxt.cancel()
                    if stop in done:
                        return
                    if bookmarks and loop.time() - last_bookmark >= self.bookmark_interval:
                        await writer.bookmark(self.hub.revision)
                        last_bookmark = loop.time()
                    continue
                try:
                    ch = nxt.result()
                except Expired as err:
                    await _expired(writer, err)
                    return
                except Overflow:
                    return
                if ch is None:
                    return
                batch = [ch]  # whatever else is queued goes out in the same write
                while not sub.queue.empty():
                    more = sub.queue.get_nowait()
                    if more is None:
                        await writer.changes(batch)
                        await _expired(writer, sub.expired)
                        return
                    batch.append(more)
                await writer.changes(batch)
        finally:
            stop.cancel()
            sub.close()

    async def _stream_from_store(
        self, writer: _EventWriter, prefix: str, after: int, deadline: float
    ) -> None:
        loop = asyncio.get_running_loop()
        changes = store_changes(self.store, prefix, after, self.rest.cache)
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

    # --- writes ---------------------------------------------------------------------------

    async def _create(self, request: web.BaseRequest, t: Target) -> web.StreamResponse:
        raw, body = await read_json(request)
        dry = _dry_run(request)
        mode = admission.field_validation_mode(request.query.get("fieldValidation"))
        dec = admission.decode_body(t.res, body, mode, raw)
        if self.authz is not None:
            self.authz.admit_create(_user(request), t.res, dec.obj)
        result = await self.rest.create(t.res, t.namespace, dec.obj, dry_run=dry,
                                        manager=_manager(request))
        result.warnings += dec.warnings
        return self._answer(request, t, result)

    async def _update(
        self, request: web.BaseRequest, t: Target, subresource: str = ""
    ) -> web.StreamResponse:
        raw, body = await read_json(request)
        mode = admission.field_validation_mode(request.query.get("fieldValidation"))
        dec = admission.decode_body(t.res, body, mode, raw)
        if subresource == "finalize":
            result = await self._finalize(t, dec.obj)
        else:
            result = await self.rest.replace(
                t.res, t.namespace, t.name, dec.obj, subresource=subresource,
                dry_run=_dry_run(request), manager=_manager(request),
            )
        result.warnings += dec.warnings
        return self._answer(request, t, result)

    async def _finalize(self, t: Target, body: Obj) -> Result:
        """namespaces/finalize: only spec.finalizers may change."""
        finalizers = (body.get("spec") or {}).get("finalizers")

        async def mutate(old: Obj) -> Obj:
            spec = old.setdefault("spec", {})
            if finalizers:
                spec["finalizers"] = finalizers
            else:
                spec.pop("finalizers", None)
            return old

        return await self.rest.update(t.res, "", t.name, mutate, admit=False)

    async def _patch(
        self, request: web.BaseRequest, t: Target, subresource: str = ""
    ) -> web.StreamResponse:
        content_type = request.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if content_type not in patching.PATCH_TYPES:
            raise errors.unsupported_media_type(patching.PATCH_TYPES)
        raw = await read_body(request)
        mode = admission.field_validation_mode(request.query.get("fieldValidation"))
        force = params.parse_bool("force", request.query.get("force"))
        manager = request.query.get("fieldManager", "")
        patching.validate_options(content_type, manager, force)
        patch = patching.parse(content_type, raw)
        dry = _dry_run(request)
        warnings: list[str] = []

        async def mutate(old: Obj) -> Obj:
            patched = patching.apply(content_type, t.res, old, patch, manager, force,
                                     subresource)
            dec = admission.decode_body(t.res, patched, mode)
            warnings[:] = dec.warnings
            return dec.obj

        create_missing = None
        if content_type == patching.APPLY and not subresource:
            async def create_missing() -> Result:
                obj = patching.apply(content_type, t.res, None, patch, manager, force, "")
                objects.meta(obj).setdefault("name", t.name)
                dec = admission.decode_body(t.res, obj, mode)
                if objects.meta(dec.obj).get("name") != t.name:
                    raise errors.bad_request(
                        f"the name of the object ({objects.meta(dec.obj).get('name')}) does "
                        f"not match the name on the URL ({t.name})"
                    )
                return await self.rest.create(t.res, t.namespace, dec.obj, dry_run=dry)

        result = await self.rest.update(
            t.res, t.namespace, t.name, mutate, subresource=subresource, dry_run=dry,
            create_missing=create_missing,
            manager="" if content_type == patching.APPLY else _manager(request),
        )
        result.warnings += warnings
        return self._answer(request, t, result)

    async def _delete(self, request: web.BaseRequest, t: Target) -> web.StreamResponse:
        opts = await delete_options(request)
        result = await self.rest.delete(t.res, t.namespace, t.name, opts)
        return self._answer(request, t, result)

    async def _delete_collection(self, request: web.BaseRequest, t: Target) -> web.StreamResponse:
        opts = await delete_options(request)
        lopts = params.parse_list_options(request.query)
        flt = self._filter(request, t, lopts)
        result = await self.rest.delete_collection(t.res, t.namespace, flt, opts)
        return self._answer(request, t, result)

    async def _bind(self, request: web.BaseRequest, t: Target) -> web.StreamResponse:
        _, body = await read_json(request)
        if not isinstance(body, dict):
            raise errors.bad_request("Binding in version \"v1\" cannot be handled as a Binding")
        result = await self.rest.bind_pod(t.res, t.namespace, t.name, body)
        return _json(result.obj, result.code)

    def _answer(self, request: web.BaseRequest, t: Target, result: Result) -> web.StreamResponse:
        if tables.wants_table(request) and result.obj.get("kind") == t.res.kind.kind:
            resp = _json(tables.table(t.res, [result.obj], _include_object(request)),
                         result.code)
        elif result.data is not None:
            resp = _raw(result.data, result.code)
        else:
            resp = _json(result.obj, result.code)
        for w in result.warnings:
            resp.headers.add("Warning", f'299 - "{_warning_text(w)}"')
        return resp


class _EventWriter:
    """Writes watch events as ``{"type":...,"object":...}`` lines, filtered per watcher."""

    def __init__(
        self, resp: web.StreamResponse, res: Resource, flt: Filter, as_table: bool,
        include_object: str,
    ) -> None:
        self.resp = resp
        self.res = res
        self.flt = flt
        self.as_table = as_table
        self.include_object = include_object
        self.first_table = True

    async def change(self, ch: Change) -> None:
        await self.changes([ch])

    async def changes(self, batch: list[Change]) -> None:
        """Write the lines of several changes at once (one write for a burst)."""
        if self.flt.everything and not self.as_table:
            await self.resp.write(b"".join(ch.line for ch in batch))
            return
        lines = [line for line in map(self._line, batch) if line is not None]
        if lines:
            await self.resp.write(b"".join(lines))

    def _line(self, ch: Change) -> bytes | None:
        """The line a filtered (or Table) watcher gets for ``ch``, or None to skip it."""
        typ = ch.type
        obj, data = ch.obj, ch.data
        if typ == "DELETED":
            if not self.flt.everything and not self.flt.matches(self.res, obj):
                return None
        elif not self.flt.everything:
            # cacheWatcher.convertToWatchEvent: entering or leaving the selection
            now = self.flt.matches(self.res, obj)
            prev = ch.prev
            before = prev is not None and self.flt.matches(self.res, prev)
            if now and not before:
                typ = "ADDED"
            elif before and not now:
                assert prev is not None
                typ = "DELETED"
                obj = dict(prev)
                obj["metadata"] = dict(obj.get("metadata") or {},
                                       resourceVersion=str(ch.revision))
                data = objects.encode(obj)
            elif not now:
                return None
        if self.as_table:
            data = objects.encode(self._table(obj))
        return b'{"type":"' + typ.encode() + b'","object":' + data + b"}\n"

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
        await self.resp.write(
            b'{"type":"BOOKMARK","object":' + objects.encode(obj) + b"}\n"
        )

    async def error(self, status: Obj) -> None:
        await self.resp.write(b'{"type":"ERROR","object":' + objects.encode(status) + b"}\n")


async def _expired(writer: _EventWriter, err: Expired | None) -> None:
    """The ERROR event that ends a watch whose history the hub lost (clients re-list)."""
    if err is not None:
        await writer.error(errors.resource_expired(str(err)).status)


# --- request helpers ----------------------------------------------------------------------


def _verb(method: str, t: Target, request: web.BaseRequest) -> str:
    if method == "GET":
        if t.watch_path:
            return "watch"
        if t.name:
            return "get"
        if params.parse_bool("watch", request.query.get("watch")):
            return "watch"
        return "list"
    return {
        "POST": "create", "PUT": "update", "PATCH": "patch",
        "DELETE": "delete" if t.name else "deletecollection",
    }.get(method, method.lower())


async def read_body(request: web.BaseRequest) -> bytes:
    if request.content_length is not None and request.content_length > MAX_BODY:
        raise errors.too_large(MAX_BODY)
    try:
        return await request.read()
    except web.HTTPRequestEntityTooLarge:
        raise errors.too_large(MAX_BODY) from None


async def read_json(request: web.BaseRequest) -> tuple[bytes, Any]:
    raw = await read_body(request)
    try:
        return raw, objects.decode(raw)
    except (msgspec.MsgspecError, RecursionError, UnicodeDecodeError) as err:
        raise errors.bad_request(
            f"couldn't get version/kind; json parse error: {err}"
        ) from None


def _dry_run(request: web.BaseRequest) -> bool:
    values = request.query.getall("dryRun", [])
    for v in values:
        if v != "All":
            raise errors.invalid(_options_kind(request.method), "meta.k8s.io", "", [
                params.dry_run_unsupported(v)
            ])
    return bool(values)


def _options_kind(method: str) -> str:
    return {"DELETE": "DeleteOptions", "PATCH": "PatchOptions", "PUT": "UpdateOptions"}.get(
        method, "CreateOptions"
    )


async def delete_options(request: web.BaseRequest) -> DeleteOptions:
    q = request.query
    opts = DeleteOptions(
        grace_period_seconds=params.parse_int("gracePeriodSeconds", q.get("gracePeriodSeconds")),
        propagation_policy=q.get("propagationPolicy") or None,
        orphan_dependents=(params.parse_bool("orphanDependents", q["orphanDependents"])
                           if "orphanDependents" in q else None),
        dry_run=_dry_run(request),
    )
    raw = await read_body(request)
    if raw.strip():
        try:
            body = objects.decode(raw)
        except (msgspec.MsgspecError, RecursionError, UnicodeDecodeError) as err:
            raise errors.bad_request(f"the body of the request could not be decoded: {err}") \
                from None
        if not isinstance(body, dict):
            raise errors.bad_request("DeleteOptions must be a JSON object")
        try:
            _apply_delete_body(opts, body)
        except (TypeError, ValueError) as err:
            raise errors.bad_request(f"invalid DeleteOptions: {err}") from None
    if opts.propagation_policy not in (None, "Orphan", "Background", "Foreground"):
        raise errors.invalid("DeleteOptions", "meta.k8s.io", "", [
            params.propagation_unsupported(opts.propagation_policy)
        ])
    if opts.grace_period_seconds is not None and opts.grace_period_seconds < 0:
        opts.grace_period_seconds = 1
    return opts


def _apply_delete_body(opts: DeleteOptions, body: Obj) -> None:
    g = body.get("gracePeriodSeconds")
    if g is not None:
        if not isinstance(g, int) or isinstance(g, bool):
            raise TypeError("gracePeriodSeconds must be an integer")
        opts.grace_period_seconds = g
    p = body.get("propagationPolicy")
    if p is not None:
        if not isinstance(p, str):
            raise TypeError("propagationPolicy must be a string")
        opts.propagation_policy = p or None
    o = body.get("orphanDependents")
    if o is not None:
        if not isinstance(o, bool):
            raise TypeError("orphanDependents must be a boolean")
        opts.orphan_dependents = o
    pre = body.get("preconditions")
    if pre is not None:
        if not isinstance(pre, dict):
            raise TypeError("preconditions must be an object")
        uid, rv = pre.get("uid"), pre.get("resourceVersion")
        if uid is not None and not isinstance(uid, str):
            raise TypeError("preconditions.uid must be a string")
        if rv is not None and not isinstance(rv, str):
            raise TypeError("preconditions.resourceVersion must be a string")
        opts.precondition_uid = uid or None
        opts.precondition_rv = rv or None
    dry = body.get("dryRun")
    if dry is not None:
        if not isinstance(dry, list) or any(d != "All" for d in dry):
            raise ValueError("dryRun may only contain \"All\"")
        opts.dry_run = opts.dry_run or bool(dry)


def _user(request: web.BaseRequest) -> User:
    user = request.get(USER)
    return user if isinstance(user, User) else ANONYMOUS_ADMIN


def _manager(request: web.BaseRequest) -> str:
    return patching.manager_of(request.query.get("fieldManager", ""),
                               request.headers.get("User-Agent", ""))


def _include_object(request: web.BaseRequest) -> str:
    return request.query.get("includeObject", "Metadata") or "Metadata"


def _warning_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _json(obj: Any, code: int = 200) -> web.Response:
    return web.Response(body=objects.encode(obj), status=code, content_type=JSON)


def _raw(data: bytes, code: int = 200) -> web.Response:
    return web.Response(body=data, status=code, content_type=JSON)
