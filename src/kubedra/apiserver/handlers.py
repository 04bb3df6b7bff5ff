"""HTTP endpoints of the served resources: parse the request, call :mod:`.rest`, answer.

Paths follow upstream's RequestInfo: ``/api/v1/...`` and ``/apis/<group>/<version>/...``,
then ``[namespaces/<ns>/]<plural>[/<name>[/<subresource>]]``.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final, final

import msgspec
from aiohttp import web

from kubedra.api import codec
from kubedra.api.authentication import SelfSubjectReview
from kubedra.api.base import Obj
from kubedra.api.core import Namespace
from kubedra.apiserver import admission, errors, media, objects, params, tables
from kubedra.apiserver.auth import ANONYMOUS_ADMIN, USER, User
from kubedra.apiserver.authn import selfreview
from kubedra.apiserver.authn.tokenrequest import TokenRequests
from kubedra.apiserver.authz.access import Access
from kubedra.apiserver.authz.attributes import Attributes
from kubedra.apiserver.hub import Change, WatchHub
from kubedra.apiserver.metrics import RESOURCE, VERB
from kubedra.apiserver.patch import dispatch
from kubedra.apiserver.podlogs import PodLogs
from kubedra.apiserver.registry import Registry, Resource
from kubedra.apiserver.replies import JSON, json_reply
from kubedra.apiserver.rest import Filter, Rest, Result, list_object
from kubedra.apiserver.selectors import (
    FieldSelector,
    FieldTerm,
    SelectorError,
    parse_field_selector,
    parse_label_selector,
)
from kubedra.apiserver.tolerationseconds import DefaultTolerationSeconds
from kubedra.apiserver.watch import EventWriter, Streamer
from kubedra.registry.pipeline import MAX_REQUEST_BYTES, check_size

_TOKEN_REQUEST = ("authentication.k8s.io/v1", "TokenRequest")
_EVICTION = ("policy/v1", "Eviction")
_EVICTION_VERSIONS = ("policy/v1", "policy/v1beta1")
_NS_SUBRESOURCES = frozenset({"status", "finalize"})


@final
class Target:
    """The resource, namespace, name and subresource a request's path names (a plain class:
    one per request)."""

    def __init__(self, res: Resource, namespace: str, name: str, subresource: str,
                 watch_path: bool = False) -> None:
        self.res: Final = res
        self.namespace: Final = namespace
        self.name: Final = name
        self.subresource: Final = subresource
        self.watch_path: Final = watch_path


#: The resolved target of a resource request (upstream's RequestInfo, read by the audit log).
TARGET = web.RequestKey("target", Target)


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
    """One short method per verb; everything past HTTP is :class:`~.rest.Rest`'s."""

    def __init__(
        self, hub: WatchHub, rest: Rest,
        *, bookmark_interval: float = 60.0, max_watch_seconds: float = 1800.0,
    ) -> None:
        self.rest = rest
        self.max_watch_seconds = max_watch_seconds
        self.stopping = asyncio.Event()
        self.streamer = Streamer(hub, rest, self.stopping, bookmark_interval)
        self.authz: Access | None = None
        self.tokens: TokenRequests | None = None
        self.logs: PodLogs | None = None
        # the mutating admission of a create or update body (never of a subresource's)
        self.default_tolerations = DefaultTolerationSeconds()

    # --- entry ---------------------------------------------------------------------------

    async def serve(self, request: web.BaseRequest, t: Target) -> web.StreamResponse:
        method = request.method
        verb = _verb(method, t, request)
        request[VERB] = verb
        request[TARGET] = t
        request[RESOURCE] = t.res.kind.plural + (f"/{t.subresource}" if t.subresource else "")
        if self.authz is not None:
            await self.authz.check(Attributes(_user(request), verb, True, t.res.kind.group,
                                              t.res.kind.plural, t.subresource, t.namespace,
                                              t.name, field_selector=request.query.get(
                                                  "fieldSelector", "")))
        if verb not in t.res.kind.verbs:
            raise errors.method_not_allowed(method)
        if verb != "watch" and not tables.wants_table(request):
            media.answer_type(request, t.res.protobuf)  # 406 before anything is done
        if t.subresource == "binding":
            if method != "POST":
                raise errors.method_not_allowed(method)
            return await self._bind(request, t)
        if t.subresource == "eviction":
            if method != "POST":
                raise errors.method_not_allowed(method)
            return await self._evict(request, t)
        if t.subresource == "log":
            if method != "GET" or self.logs is None:
                raise errors.method_not_allowed(method)
            return await self.logs.serve(request, t.namespace, t.name)
        if t.subresource == "token":
            if method != "POST" or self.tokens is None:
                raise errors.method_not_allowed(method)
            body, _ = await read_object(request, "Ignore", _TOKEN_REQUEST)
            return media.reply(request, await self.tokens.create(t.namespace, t.name, body),
                               201)
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
        return media.reply(request, obj, data=data, protobuf=t.res.protobuf)

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
        revision = await self.rest.list_revision(opts)
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
        return media.reply(request, list_object(t.res, [d for _, d in items], rev, token,
                                                remaining), protobuf=t.res.protobuf)

    # --- watch ----------------------------------------------------------------------------

    async def _watch(self, request: web.BaseRequest, t: Target) -> web.StreamResponse:
        opts = params.parse_list_options(request.query)
        flt = self._filter(request, t, opts)
        as_table = tables.wants_table(request)
        protobuf = not as_table and media.answer_type(request, t.res.protobuf) == media.PROTOBUF
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
            initial, after = await self.rest.current_changes(prefix)
        else:
            after = params.parse_resource_version(rv)
        resp = web.StreamResponse(status=200, headers={
            "Content-Type": media.WATCH_PROTOBUF if protobuf else JSON})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        writer = EventWriter(resp, t.res, flt, as_table, _include_object(request),
                             request.transport, protobuf)
        timeout = float(opts.timeout_seconds) if opts.timeout_seconds else self.max_watch_seconds
        loop = asyncio.get_running_loop()
        deadline = loop.time() + min(timeout, self.max_watch_seconds)
        try:
            for ch in initial:
                await writer.change(ch)
            if send_initial and opts.allow_bookmarks and opts.send_initial_events:
                await writer.bookmark(after, initial_end=True)
            await self.streamer.stream(writer, prefix, after, deadline, opts.allow_bookmarks)
            await resp.write_eof()
        except ConnectionResetError:
            pass  # the client went away; nothing to answer
        return resp

    # --- writes ---------------------------------------------------------------------------

    async def _create(self, request: web.BaseRequest, t: Target) -> web.StreamResponse:
        mode = _field_validation(request, t)
        body, duplicates = await read_object(request, mode, _body_kind(t))
        dry = _dry_run(request)
        dec = admission.decode(t.res, body, mode, duplicates)
        if isinstance(dec.obj, SelfSubjectReview):
            return media.reply(request, selfreview.answer(_user(request)), 201)
        self.default_tolerations.admit(dec.obj)
        if self.authz is not None:
            if self.authz.answers(dec.obj):
                return media.reply(request, self.authz.review(_user(request), dec.obj), 201)
            self.authz.admit_write(_user(request), t.res, t.namespace, dec.obj)
        result = await self.rest.create(t.res, t.namespace, dec.obj, dry_run=dry,
                                        manager=_manager(request))
        result.warnings += dec.warnings
        return self._answer(request, t, result)

    async def _update(
        self, request: web.BaseRequest, t: Target, subresource: str = ""
    ) -> web.StreamResponse:
        mode = _field_validation(request, t)
        body, duplicates = await read_object(request, mode, _body_kind(t))
        dec = admission.decode(t.res, body, mode, duplicates)
        if not subresource:
            self.default_tolerations.admit(dec.obj)
        if subresource == "finalize":
            result = await self._finalize(t, dec.obj)
        else:
            result = await self.rest.replace(
                t.res, t.namespace, t.name, dec.obj, subresource=subresource,
                dry_run=_dry_run(request), manager=_manager(request),
                judge=lambda stored: self._admit_update(request, t, dec.obj, stored),
            )
        result.warnings += dec.warnings
        return self._answer(request, t, result)

    async def _finalize(self, t: Target, body: Namespace) -> Result:
        """namespaces/finalize: only spec.finalizers may change."""
        finalizers = body.spec.finalizers

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
        content_type = _media_type(request)
        if content_type not in dispatch.PATCH_TYPES:
            raise errors.unsupported_media_type(dispatch.PATCH_TYPES)
        raw = await read_body(request)
        mode = params.field_validation_mode(request.query.get("fieldValidation"))
        force = params.parse_bool("force", request.query.get("force"))
        manager = request.query.get("fieldManager", "")
        dispatch.validate_options(content_type, manager, force)
        patch = dispatch.parse(content_type, raw)
        dry = _dry_run(request)
        warnings: list[str] = []
        typed: list[Any] = []  # the last attempt's patched object, typed, for admission

        async def mutate(old: Obj) -> Obj:
            live = t.res.served(old)[0] if t.res.converts else old
            patched = dispatch.apply(content_type, t.res, live, patch, manager, force,
                                     subresource)
            dec = admission.decode_patched(t.res, patched, mode)
            if not subresource:
                self.default_tolerations.admit(dec.obj)
            warnings[:] = dec.warnings
            typed[:] = [dec.obj]
            out: Obj = codec.to_builtins(dec.obj)
            return out

        create_missing = None
        if content_type == dispatch.APPLY and not subresource:
            async def create_missing() -> Result:
                obj = dispatch.apply(content_type, t.res, None, patch, manager, force, "")
                objects.meta(obj).setdefault("name", t.name)
                dec = admission.decode(t.res, obj, mode)
                if dec.obj.metadata.name != t.name:
                    raise errors.bad_request(
                        f"the name of the object ({dec.obj.metadata.name}) does "
                        f"not match the name on the URL ({t.name})"
                    )
                self.default_tolerations.admit(dec.obj)
                if self.authz is not None:
                    self.authz.admit_write(_user(request), t.res, t.namespace, dec.obj)
                return await self.rest.create(t.res, t.namespace, dec.obj, dry_run=dry)

        result = await self.rest.update(
            t.res, t.namespace, t.name, mutate, subresource=subresource, dry_run=dry,
            create_missing=create_missing, keeps_given=not dispatch.changes_live(content_type),
            judge=lambda stored: self._admit_update(request, t, typed[0], stored),
            manager="" if content_type == dispatch.APPLY else _manager(request),
        )
        result.warnings += warnings
        return self._answer(request, t, result)

    async def _delete(self, request: web.BaseRequest, t: Target) -> web.StreamResponse:
        opts = await _delete_options(request)
        result = await self.rest.delete(t.res, t.namespace, t.name, opts)
        return self._answer(request, t, result)

    async def _delete_collection(self, request: web.BaseRequest, t: Target) -> web.StreamResponse:
        opts = await _delete_options(request)
        lopts = params.parse_list_options(request.query)
        flt = self._filter(request, t, lopts)
        result = await self.rest.delete_collection(t.res, t.namespace, flt, opts)
        return self._answer(request, t, result)

    async def _bind(self, request: web.BaseRequest, t: Target) -> web.StreamResponse:
        body, _ = await read_object(request, "Ignore")
        if not isinstance(body, dict):
            raise errors.bad_request("Binding in version \"v1\" cannot be handled as a Binding")
        result = await self.rest.bind_pod(t.res, t.namespace, t.name, body)
        return _json(result.obj, result.code)

    async def _evict(self, request: web.BaseRequest, t: Target) -> web.StreamResponse:
        body, _ = await read_object(request, "Ignore", _EVICTION)
        result = await self.rest.evict_pod(t.res, t.namespace, t.name,
                                           _eviction_options(body, t.name, _dry_run(request)))
        return media.reply(request, result.obj, result.code)

    def _admit_update(self, request: web.BaseRequest, t: Target, obj: Any,
                      old: Obj | None) -> None:
        """Admission of an update's new object over the stored ``old`` (None: a PUT that
        creates)."""
        if self.authz is not None:
            self.authz.admit_write(_user(request), t.res, t.namespace, obj, old, t.subresource)

    def _answer(self, request: web.BaseRequest, t: Target, result: Result) -> web.StreamResponse:
        if t.res.converts:
            _served_result(t.res, result)
        if tables.wants_table(request) and result.obj.get("kind") == t.res.kind.kind:
            resp = _json(tables.table(t.res, [result.obj], _include_object(request)),
                         result.code)
        else:
            resp = media.reply(request, result.obj, result.code, result.data, t.res.protobuf)
        for w in result.warnings:
            resp.headers.add("Warning", f'299 - "{_warning_text(w)}"')
        return resp


# --- request helpers ----------------------------------------------------------------------


def _served_result(res: Resource, result: Result) -> None:
    """A write's or delete's answer in the version served (objects and lists of them; a
    Status stays as it is)."""
    kind = result.obj.get("kind")
    if kind == res.kind.kind:
        result.obj, result.data = res.served(result.obj)
    elif kind == res.kind.list_kind:
        result.obj = dict(result.obj, items=[
            msgspec.Raw(res.served(codec.parse_json(bytes(item)))[1])
            for item in result.obj.get("items") or ()])


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
    if request.content_length is not None:
        with admission.answers():
            check_size(request.content_length)
    try:
        return await request.read()
    except web.HTTPRequestEntityTooLarge:
        raise errors.too_large(MAX_REQUEST_BYTES) from None


def _media_type(request: web.BaseRequest) -> str:
    return request.headers.get("Content-Type", "").split(";")[0].strip().lower()


def _field_validation(request: web.BaseRequest, t: Target) -> str:
    """``fieldValidation`` for a create's or update's body. A protobuf body is decoded as
    ``Ignore`` asks: upstream's protobuf serializer is also its strict one, and ours gives
    only the fields our messages know (an unknown number is a 400 already)."""
    mode = params.field_validation_mode(request.query.get("fieldValidation"))
    return "Ignore" if _media_type(request) == media.PROTOBUF and t.res.protobuf else mode


def _body_kind(t: Target) -> tuple[str, str] | None:
    """The apiVersion and kind a protobuf body of the target is read as (None: no protobuf)."""
    return (t.res.kind.api_version, t.res.kind.kind) if t.res.protobuf else None


async def read_object(
    request: web.BaseRequest, mode: str, protobuf: tuple[str, str] | None = None,
) -> tuple[Any, list[str] | None]:
    """The body of a create, update or binding, parsed by its media type, and under
    ``fieldValidation=Strict`` its repeated keys; ``protobuf`` is the apiVersion and kind
    a protobuf body is read as (None: the body's kind has no protobuf form). Other types
    are refused before the body is read (415), as ``NegotiateInputSerializer`` does; that
    also refuses what a browser page may send another origin unasked (forms, plain text)."""
    kind = _media_type(request) or JSON  # no Content-Type: the first serializer, JSON
    accepted = media.body_types(protobuf is not None)
    if kind not in accepted:
        raise errors.unsupported_media_type(accepted)
    raw = await read_body(request)
    if protobuf is not None and kind == media.PROTOBUF:
        return media.decode_body(raw, *protobuf), None
    strict = mode == "Strict"
    if kind == media.YAML:
        try:
            docs = codec.load_documents(raw)
        except codec.DecodeError as err:
            raise errors.bad_request(
                f"couldn't get version/kind; yaml parse error: {err.reason}"
            ) from None
        repeated = codec.yaml_duplicate_fields(raw) if strict else []
        return (docs[0] if docs else None), (repeated[0] if repeated else None)
    try:
        body = objects.decode(raw)
    except (msgspec.MsgspecError, RecursionError, UnicodeDecodeError) as bad:
        raise errors.bad_request(
            f"couldn't get version/kind; json parse error: {bad}"
        ) from None
    return body, codec.duplicate_fields(raw) if strict else None


def _dry_run(request: web.BaseRequest) -> bool:
    return params.parse_dry_run(request.query.getall("dryRun", []),
                                _options_kind(request.method))


def _options_kind(method: str) -> str:
    return {"DELETE": "DeleteOptions", "PATCH": "PatchOptions", "PUT": "UpdateOptions"}.get(
        method, "CreateOptions"
    )


async def _delete_options(request: web.BaseRequest) -> params.DeleteOptions:
    """The query's and the body's DeleteOptions (a typed Go client sends them in protobuf)."""
    body = await read_body(request)
    if body and _media_type(request) == media.PROTOBUF:
        body = objects.encode(media.decode_body(body, "v1", "DeleteOptions"))
    return params.parse_delete_options(request.query, _dry_run(request), body)


def _eviction_options(body: Any, name: str, dry_run: bool) -> params.DeleteOptions:
    """The DeleteOptions of a policy/v1 (or v1beta1) Eviction naming the URL's pod, as
    EvictionREST checks it; a dry run of the eviction is one of the delete."""
    if not isinstance(body, dict):
        raise errors.bad_request("not a Eviction object")
    version, kind = body.get("apiVersion"), body.get("kind")
    if kind != "Eviction" or version not in _EVICTION_VERSIONS:
        raise errors.bad_request(f'{kind} in version "{str(version).rpartition("/")[2]}" '
                                 "cannot be handled as a Eviction")
    if objects.meta(body).get("name") != name:
        raise errors.bad_request("name in URL does not match name in Eviction object")
    options = body.get("deleteOptions")
    return params.parse_delete_options(
        {}, dry_run, objects.encode(options) if isinstance(options, dict) else b"")


def _user(request: web.BaseRequest) -> User:
    user = request.get(USER)
    return user if isinstance(user, User) else ANONYMOUS_ADMIN


def _manager(request: web.BaseRequest) -> str:
    return dispatch.manager_of(request.query.get("fieldManager", ""),
                               request.headers.get("User-Agent", ""))


def _include_object(request: web.BaseRequest) -> str:
    return request.query.get("includeObject", "Metadata") or "Metadata"


def _warning_text(text: str) -> str:
    """The quoted text of a ``Warning`` header (RFC 7234): backslashes and quotes escaped,
    control characters, which a header cannot carry, dropped (a stored write must still be
    answered)."""
    text = text.replace("\\", "\\\\").replace('"', '\\"')
    return text.translate(_UNSENDABLE)


# C0 controls but tab, and DEL
_UNSENDABLE: dict[int, None] = {c: None for c in (*range(0x20), 0x7F) if c != 0x09}


def _json(obj: Any, code: int = 200) -> web.Response:
    return json_reply(objects.encode(obj), code)
