"""An async REST client for every kind of the kinds table, with typed results.

Paths, verbs and query parameters follow the Kubernetes REST conventions, so the client works
against any conforming server. Components reach the API server only through this module.
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar
from urllib.parse import quote, urlencode

import msgspec

from kubedra.api import codec
from kubedra.api.core import Pod
from kubedra.api.kinds import Kind, by_model
from kubedra.api.meta import Status, TypedObject
from kubedra.client.errors import ApiError
from kubedra.client.http import HttpConnectionError, Pool
from kubedra.client.kubeconfig import ClientConfig
from kubedra.client.wire import JSON, ObjectWire

T = TypeVar("T", bound=TypedObject)
Item = TypeVar("Item")

PATCH_TYPES = {
    "json": "application/json-patch+json",
    "merge": "application/merge-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",
}

_TYPED = "Ignore"
"""fieldValidation of every write: bodies encoded from our typed models cannot carry unknown
or duplicate fields, and nothing here reads the warnings a patch's unknown fields would
bring (the server's default, Warn, walks the whole patched object for them)."""

def kind_of(model: type[Any]) -> Kind:
    """The kind a model is sent as (its preferred version where versions share it)."""
    found = by_model(model)
    if found is None or found.model is not model:
        raise TypeError(f"{model.__name__} is not a kind of the kinds table")
    return found


@dataclass(frozen=True, slots=True)
class Page(Generic[Item]):
    items: list[Item]
    resource_version: str
    continue_: str | None


@dataclass(frozen=True, slots=True)
class WatchEvent(Generic[Item]):
    type: str
    """ADDED, MODIFIED, DELETED or BOOKMARK."""
    object: Item


class _RawList(msgspec.Struct):
    metadata: dict[str, Any] = {}
    items: list[msgspec.Raw] = []


class _RawEvent(msgspec.Struct):
    type: str
    object: msgspec.Raw


_list_decoder = msgspec.json.Decoder(_RawList)
_event_decoder = msgspec.json.Decoder(_RawEvent)


def object_path(kind: Kind, namespace: str | None = None, name: str | None = None,
                subresource: str | None = None) -> str:
    base = f"/apis/{kind.group}/{kind.version}" if kind.group else f"/api/{kind.version}"
    if kind.namespaced and namespace:
        base += f"/namespaces/{quote(namespace, safe='')}"
    base += f"/{kind.plural}"
    if name is not None:
        base += f"/{quote(name, safe='')}"
        if subresource:
            base += f"/{subresource}"
    return base


def _query(**params: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in params.items():
        if value is None or value is False:
            continue
        out[key] = "true" if value is True else str(value)
    return out


class Client:
    """Connections to one API server (:mod:`kubedra.client.http`): a pool of at most 64 for
    requests, and one per watch, so that long-running streams never starve requests.
    ``wire``: another media type for objects (:mod:`kubedra.client.wire`), else JSON."""

    def __init__(self, config: ClientConfig, *, user_agent: str = "kubedra",
                 wire: ObjectWire | None = None) -> None:
        self.config = config
        self._wire = wire
        accept = f"{wire.media_type},{JSON}" if wire is not None else JSON
        headers = {"User-Agent": user_agent, "Accept": accept}
        if config.token:
            headers["Authorization"] = f"Bearer {config.token}"
        tls = config.ssl_context()
        self._pool = Pool(config.server, tls if isinstance(tls, ssl.SSLContext) else None,
                          headers, limit=64)

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self._pool.close()

    async def _request(self, method: str, path: str, *, params: Mapping[str, str] | None = None,
                       body: bytes | None = None, content_type: str = JSON) -> bytes:
        status, data = await self._pool.request(method, _target(path, params), body,
                                                content_type)
        if status >= 400:
            raise self._api_error(status, data)
        return data

    # --- the media types ------------------------------------------------------------------

    def _body(self, obj: Any) -> tuple[bytes, str]:
        """An object (a model or a mapping with its type meta) as a request body: in the
        wire's type when its kind has a form there, else JSON."""
        wire = self._wire
        if wire is not None:
            try:
                return wire.encode(codec.to_builtins(obj)), wire.media_type
            except ValueError:
                pass  # no form for the kind, or for a field of this object
        return codec.encode(obj), JSON

    def _parsed(self, data: bytes) -> Any:
        """An answer in the wire's type -> its JSON form; a JSON answer stays bytes."""
        wire = self._wire
        if wire is not None and data.startswith(wire.magic):
            return wire.decode(data)
        return data

    def _decode(self, data: bytes, model: type[Item]) -> Item:
        return codec.decode(self._parsed(data), model)

    def _api_error(self, code: int, data: bytes) -> ApiError:
        try:
            status = self._decode(data, Status)
        except Exception:
            status = Status(status="Failure", message=data.decode(errors="replace")[:500],
                            code=code)
        return ApiError(code, status)

    async def get_path(self, path: str) -> bytes:
        """The body a GET on ``path`` answers (discovery, ``/version``); ApiError otherwise."""
        return await self._request("GET", path)

    async def get(self, model: type[T], name: str, namespace: str | None = None) -> T:
        data = await self._request("GET", object_path(kind_of(model), namespace, name))
        return self._decode(data, model)

    async def list(self, model: type[T], namespace: str | None = None, *,
                   label_selector: str | None = None, field_selector: str | None = None,
                   limit: int | None = None, continue_: str | None = None,
                   resource_version: str | None = None) -> Page[T]:
        params = _query(labelSelector=label_selector, fieldSelector=field_selector,
                        limit=limit, resourceVersion=resource_version,
                        **{"continue": continue_})
        data = await self._request("GET", object_path(kind_of(model), namespace), params=params)
        parsed = self._parsed(data)
        if isinstance(parsed, dict):
            items = [codec.decode(item, model) for item in parsed.get("items") or ()]
            meta = parsed.get("metadata") or {}
        else:
            raw = _list_decoder.decode(data)
            items = [codec.decode(bytes(item), model) for item in raw.items]
            meta = raw.metadata
        return Page(items, str(meta.get("resourceVersion", "")), meta.get("continue") or None)

    async def list_all(self, model: type[T], namespace: str | None = None, *,
                       label_selector: str | None = None, field_selector: str | None = None,
                       page_size: int = 500) -> Page[T]:
        """Every object, read page by page at one resourceVersion."""
        items: list[T] = []
        cont: str | None = None
        while True:
            page = await self.list(model, namespace, label_selector=label_selector,
                                   field_selector=field_selector, limit=page_size,
                                   continue_=cont)
            items.extend(page.items)
            if not page.continue_:
                return Page(items, page.resource_version, None)
            cont = page.continue_

    async def create(self, obj: T, *, field_manager: str | None = None) -> T:
        kind = kind_of(type(obj))
        body, content_type = self._body(_typed(obj, kind))
        data = await self._request(
            "POST", object_path(kind, obj.metadata.namespace),
            params=_query(fieldManager=field_manager, fieldValidation=_TYPED),
            body=body, content_type=content_type)
        return self._decode(data, type(obj))

    async def update(self, obj: T, *, subresource: str | None = None) -> T:
        kind = kind_of(type(obj))
        name = obj.metadata.name or ""
        body, content_type = self._body(_typed(obj, kind))
        data = await self._request(
            "PUT", object_path(kind, obj.metadata.namespace, name, subresource),
            params=_query(fieldValidation=_TYPED), body=body, content_type=content_type)
        return self._decode(data, type(obj))

    async def update_status(self, obj: T) -> T:
        return await self.update(obj, subresource="status")

    async def patch(self, model: type[T], name: str, patch: Any, *,
                    namespace: str | None = None, patch_type: str = "merge",
                    subresource: str | None = None, field_manager: str | None = None,
                    force: bool | None = None) -> T:
        data = await self._patch(model, name, patch, namespace, patch_type, subresource,
                                 field_manager, force)
        return self._decode(data, model)

    async def send_patch(self, model: type[Any], name: str, patch: Any, *,
                         namespace: str | None = None, patch_type: str = "merge",
                         subresource: str | None = None) -> None:
        """A patch whose answer the caller does not read: errors are raised as by
        :meth:`patch`, the patched object is not decoded (a pod's answer: ~10 us)."""
        await self._patch(model, name, patch, namespace, patch_type, subresource, None, None)

    async def _patch(self, model: type[Any], name: str, patch: Any, namespace: str | None,
                     patch_type: str, subresource: str | None, field_manager: str | None,
                     force: bool | None) -> bytes:
        body = patch if isinstance(patch, bytes) else codec.encode(patch)
        return await self._request(
            "PATCH", object_path(kind_of(model), namespace, name, subresource),
            params=_query(fieldManager=field_manager, force=force, fieldValidation=_TYPED),
            body=body, content_type=PATCH_TYPES[patch_type])

    async def delete(self, model: type[Any], name: str, namespace: str | None = None, *,
                     uid: str | None = None, resource_version: str | None = None,
                     propagation_policy: str | None = None,
                     grace_period_seconds: int | None = None) -> None:
        options: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
        preconditions = {k: v for k, v in (("uid", uid), ("resourceVersion", resource_version))
                         if v is not None}
        if preconditions:
            options["preconditions"] = preconditions
        if propagation_policy:
            options["propagationPolicy"] = propagation_policy
        if grace_period_seconds is not None:
            options["gracePeriodSeconds"] = grace_period_seconds
        await self._request("DELETE", object_path(kind_of(model), namespace, name),
                            body=codec.encode(options))

    async def delete_collection(self, model: type[Any], namespace: str | None = None, *,
                                field_selector: str | None = None) -> None:
        """DELETE on the collection: every object the selector matches."""
        await self._request("DELETE", object_path(kind_of(model), namespace),
                            params=_query(fieldSelector=field_selector),
                            body=codec.encode({"kind": "DeleteOptions", "apiVersion": "v1"}))

    async def bind(self, namespace: str, pod_name: str, node_name: str,
                   pod_uid: str | None = None) -> None:
        """POST pods/<name>/binding, as the scheduler does."""
        kind = kind_of(Pod)
        body = {
            "apiVersion": "v1", "kind": "Binding",
            "metadata": {"name": pod_name, "namespace": namespace,
                         **({"uid": pod_uid} if pod_uid else {})},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node_name},
        }
        data, content_type = self._body(body)
        await self._request("POST", object_path(kind, namespace, pod_name, "binding"),
                            body=data, content_type=content_type)

    async def create_raw(self, kind: Kind, body: Mapping[str, Any],
                         namespace: str | None = None) -> dict[str, Any]:
        """Create from a plain mapping (manifests, events) and return the stored object."""
        payload, content_type = self._body(body)
        data = await self._request("POST", object_path(kind, namespace), body=payload,
                                   content_type=content_type)
        parsed = self._parsed(data)
        result: dict[str, Any] = parsed if isinstance(parsed, dict) else codec.parse_json(data)
        return result

    async def watch(self, model: type[T], namespace: str | None = None, *,
                    resource_version: str | None = None, label_selector: str | None = None,
                    field_selector: str | None = None, timeout_seconds: int | None = None,
                    allow_bookmarks: bool = True) -> AsyncIterator[WatchEvent[T]]:
        """Stream changes after ``resource_version``. A 410 (expired version) raises ApiError
        so informers can relist; the stream simply ends when the server closes it."""
        params = _query(watch=True, resourceVersion=resource_version,
                        labelSelector=label_selector, fieldSelector=field_selector,
                        timeoutSeconds=timeout_seconds, allowWatchBookmarks=allow_bookmarks)
        path = object_path(kind_of(model), namespace)
        wire = self._wire
        async with self._pool.stream(_target(path, params)) as resp:
            if resp.status >= 400:
                raise self._api_error(resp.status, await resp.read())
            if wire is not None and resp.content_type.split(";")[0] == wire.media_type:
                buffer = bytearray()
                async for chunk in resp.iter_chunks():
                    buffer += chunk
                    for kind, obj in wire.watch_events(buffer):
                        yield _event(kind, obj, model)
                if buffer:
                    raise HttpConnectionError("watch stream ended inside an event")
                return
            async for line in _lines(resp.iter_chunks()):
                if not line.strip():
                    continue
                found = codec.decode_watch_event(line, model)
                if found is not None:
                    yield WatchEvent(*found)
                    continue
                event = _event_decoder.decode(line)  # ERROR, BOOKMARK, or Go's nulls
                yield _event(event.type, bytes(event.object), model)


def _event(kind: str, obj: bytes | dict[str, Any], model: type[T]) -> WatchEvent[T]:
    """A watch event's object (JSON bytes or an already parsed form) as ``model``; an ERROR
    event raises its Status."""
    if kind == "ERROR":
        status = codec.decode(obj, Status)
        raise ApiError(status.code or 500, status)
    if kind == "BOOKMARK":
        return WatchEvent(kind, _bookmark(obj if isinstance(obj, dict) else
                                          codec.parse_json(obj), model))
    return WatchEvent(kind, codec.decode(obj, model))


def _target(path: str, params: Mapping[str, str] | None) -> str:
    """The request target: ``path`` is already quoted, the query is encoded here."""
    return f"{path}?{urlencode(params, quote_via=quote)}" if params else path


async def _lines(chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """The stream's newline-terminated lines, however long: like client-go's JSON framer it
    sets no limit of its own (the largest object the API server accepts is far above any
    line reader's buffer); a stream that ends inside a line raises
    :class:`HttpConnectionError` (a connection problem: the informer resumes)."""
    buffer = bytearray()
    searched = 0
    async for chunk in chunks:
        buffer += chunk
        start = 0
        while (end := buffer.find(b"\n", max(start, searched))) != -1:
            yield bytes(buffer[start:end])
            start = end + 1
        del buffer[:start]
        searched = len(buffer)
    if buffer.strip():
        raise HttpConnectionError("watch stream ended inside an event")


def _bookmark(head: dict[str, Any], model: type[T]) -> T:
    """A BOOKMARK carries only metadata.resourceVersion; decode it leniently."""
    obj = model()
    obj.metadata.resource_version = str(head.get("metadata", {}).get("resourceVersion", ""))
    return obj


def _typed(obj: T, kind: Kind) -> T:
    """``obj`` with its type meta set (a body names its kind)."""
    if not obj.api_version:
        obj.api_version = kind.api_version
    if not obj.kind:
        obj.kind = kind.kind
    return obj
