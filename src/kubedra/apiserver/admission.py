"""The API server's side of the write pipeline (:mod:`kubedra.registry.pipeline`): its steps
on a served resource, with every rejection turned into the Status answer upstream gives.

Creates stay typed from the decoded body to the store; updates meet the stored JSON, so they
decode the new and the stored object once each and hand back the admitted JSON.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kubedra.api import codec
from kubedra.api.base import Obj
from kubedra.api.meta import TypedObject
from kubedra.apiserver import errors
from kubedra.apiserver.registry import Resource
from kubedra.registry import pipeline
from kubedra.registry.pipeline import Decoded


@contextmanager
def answers() -> Iterator[None]:
    """Pipeline rejections → ``ApiError`` (400, 413 or 422)."""
    try:
        yield
    except pipeline.Invalid as err:
        raise errors.invalid(err.kind.kind, err.kind.group, err.name, err.errors) from None
    except pipeline.TooLarge as err:
        raise errors.too_large(err.limit) from None
    except pipeline.BadRequest as err:
        raise errors.bad_request(err.message) from None


def decode(res: Resource, raw: Any, mode: str, raw_bytes: bytes | None = None) -> Decoded:
    """A parsed body → the kind's typed object. Duplicate keys are looked for (a second
    parse) only under ``fieldValidation=Strict``."""
    duplicates = None
    if raw_bytes is not None and mode == "Strict":
        duplicates = codec.duplicate_fields(raw_bytes)
    with answers():
        return pipeline.decode(res.kind, raw, mode, duplicates)


def decode_patched(res: Resource, patched: Obj, mode: str) -> Decoded:
    """A patched object through the decoder, normalized back to JSON for the update. Strict
    field errors of a patch carry no kind prefix (upstream's patch handler words them so)."""
    with answers():
        try:
            dec = pipeline.decode(res.kind, patched, mode)
        except pipeline.StrictDecodingError as err:
            raise pipeline.BadRequest(err.detail) from None
    dec.obj = codec.to_builtins(dec.obj)
    return dec


def ensure_namespace(res: Resource, obj: TypedObject, namespace: str) -> None:
    with answers():
        pipeline.ensure_namespace(res.kind, obj, namespace)


def before_create(res: Resource, obj: TypedObject) -> None:
    with answers():
        pipeline.before_create(res.strategy, res.kind, obj)


def _typed(res: Resource, obj: Obj) -> Any:
    try:
        return codec.decode(obj, res.kind.model)
    except codec.DecodeError as err:  # normalized bodies always decode; keep it a 400 anyway
        raise errors.bad_request(pipeline.cannot_handle(res.kind, str(err))) from None


def before_update(res: Resource, new: Obj, old: Obj, *, status: bool = False) -> Obj:
    """The main or status update pipeline over JSON; returns the admitted new object."""
    typed_new, typed_old = _typed(res, new), _typed(res, old)
    step = pipeline.before_status_update if status else pipeline.before_update
    with answers():
        step(res.strategy, res.kind, typed_new, typed_old)
    out: Obj = codec.to_builtins(typed_new)
    return out
