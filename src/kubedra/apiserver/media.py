"""Content negotiation as kube-apiserver's: which media types a body may have, which an
answer is written in (the first acceptable clause of ``Accept``), and the protobuf side of
both (``kubedra.proto.kube``). Kinds without a protobuf message are JSON (and YAML) only, so
a protobuf ``Accept`` with a JSON fallback gets JSON and a protobuf body gets 415."""

from __future__ import annotations

import contextlib
import functools
import logging
from typing import Any, Final

from aiohttp import web

from kubedra.api import codec
from kubedra.apiserver import errors, objects
from kubedra.apiserver.replies import JSON, Reply, json_reply
from kubedra.proto import kube

YAML = "application/yaml"
PROTOBUF = kube.MEDIA_TYPE
WATCH_PROTOBUF = kube.WATCH_MEDIA_TYPE
_log = logging.getLogger(__name__)
_SHARED_KEPT: Final = 1024
_shared: Final[dict[int, tuple[Any, bytes]]] = {}


def body_types(protobuf: bool) -> tuple[str, ...]:
    """What a create or update body of a kind may be (upstream's serializers, in order)."""
    return (JSON, YAML, PROTOBUF) if protobuf else (JSON, YAML)


def _summary(data: bytes) -> str:
    """apiserver's summarizeData: the first 30 bytes, as text if JSON-like, else hex."""
    if not data:
        return "<empty>"
    head = data[:30]
    text = head.decode("utf-8", "replace") if data[:1] == b"{" else head.hex()
    return text + " ..." if len(data) > 30 else text


def decode_body(raw: bytes, api_version: str, kind: str) -> Any:
    """A protobuf body -> its JSON form, or 400 with upstream's words (transformDecodeError):
    the envelope's kind and apiVersion are then checked as a JSON body's are."""
    try:
        env_version, env_kind, message = kube.envelope(raw)
    except kube.ConversionError as err:
        raise errors.bad_request(f"the object provided is unrecognized (must be of type "
                                 f"{kind}): {err} ({_summary(raw)})") from None
    try:
        return kube.decode_message(env_version or api_version, env_kind or kind, message)
    except kube.ConversionError as err:
        version = (env_version or api_version).rpartition("/")[2]
        raise errors.bad_request(f'{env_kind or kind} in version "{version}" cannot be '
                                 f"handled as a {kind}: {err}") from None


def answer_type(request: web.BaseRequest, protobuf: bool) -> str:
    """The media type of the answer: the first clause of ``Accept`` we can write (q=0 is
    refusal); none (and an ``Accept`` given): 406 with the types we could have written."""
    kind = _negotiated(request.headers.get("Accept", ""), protobuf)
    if kind is None:
        raise errors.not_acceptable(body_types(protobuf))
    return kind


@functools.lru_cache(maxsize=256)
def _negotiated(accept: str, protobuf: bool) -> str | None:
    """:func:`answer_type` of one ``Accept`` (None: nothing acceptable), parsed once per
    distinct header: a client sends the same one with every request."""
    if not accept.strip():
        return JSON
    for clause in accept.split(","):
        parts = [p.strip() for p in clause.split(";")]
        options: dict[str, str] = {}
        for param in parts[1:]:
            key, _, value = param.partition("=")
            options[key.strip()] = value.strip()
        if options.get("q", "1") in ("0", "0.0", "0.00", "0.000"):
            continue
        if set(options) - {"q", "charset"}:
            continue  # as=Table and the like are answered by tables.py, else not here
        kind = parts[0].lower()
        if kind in (JSON, YAML, "application/*", "*/*"):
            return JSON
        if kind == PROTOBUF and protobuf:
            return PROTOBUF
    return None


def status_reply(request: web.BaseRequest, err: errors.ApiError) -> web.Response:
    """An error's Status in the negotiated type, as upstream's ``ErrorNegotiated`` writes it
    (Status has a message in every group); a 406, or an ``Accept`` nothing satisfies, gets
    JSON, as its ``WriteObjectNegotiated`` answers a failed negotiation."""
    kind = JSON
    if err.code != 406:
        with contextlib.suppress(errors.ApiError):
            kind = answer_type(request, True)
    if kind == PROTOBUF:
        resp: web.Response = Reply(body=kube.encode(err.status), status=err.code,
                                   content_type=PROTOBUF)
    else:
        resp = json_reply(objects.encode(err.status), err.code)
    for k, v in err.headers.items():
        resp.headers[k] = v
    return resp


def shared_protobuf(obj: Any) -> bytes:
    """The protobuf bytes of a shared object (a stored revision as an answer or a watch
    event gives it, never mutated), encoded once for both, as upstream's ``cachingObject``:
    a write's answer and its watch event are one encoding, as their JSON is. Kept by
    identity for the objects encoded lately (all forgotten at once when they are many), each
    held so that its id stays its own."""
    hit = _shared.get(id(obj))
    if hit is not None and hit[0] is obj:
        return hit[1]
    encoded = kube.encode(obj)
    if len(_shared) >= _SHARED_KEPT:
        _shared.clear()
    _shared[id(obj)] = (obj, encoded)
    return encoded


def reply(request: web.BaseRequest, obj: Any, code: int = 200, data: bytes | None = None,
          protobuf: bool = True) -> web.Response:
    """``obj`` (or its JSON ``data``) in the negotiated media type; a list's items may be
    encoded JSON (``msgspec.Raw``), read again for protobuf. With ``data``, ``obj`` is a
    shared object (:func:`shared_protobuf`)."""
    if answer_type(request, protobuf) == PROTOBUF:
        raw = obj if isinstance(obj, dict) and "items" not in obj else codec.parse_json(
            data if data is not None else objects.encode(obj))
        if isinstance(raw, dict):
            try:
                body = shared_protobuf(raw) if raw is obj and data is not None else kube.encode(
                    raw)
                return Reply(body=body, status=code, content_type=PROTOBUF)
            except kube.ConversionError as err:  # a field our .proto lacks: JSON is exact
                _log.warning("answering %s in JSON: %s", raw.get("kind"), err)
    return json_reply(data if data is not None else objects.encode(obj), code)
