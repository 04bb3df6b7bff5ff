"""The API server's side of the write pipeline (:mod:`kubedra.registry.pipeline`): its steps
on a served resource, with every rejection turned into the Status answer upstream gives.

Creates stay typed from the decoded body to the store; updates meet the stored JSON, so they
decode the new and the stored object once each and hand back the admitted JSON.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final, TypeVar

from kubedra.api import codec
from kubedra.api.base import Obj
from kubedra.api.meta import TypedObject
from kubedra.apiserver import errors, objects
from kubedra.apiserver.registry import Resource
from kubedra.registry import pipeline
from kubedra.registry.pipeline import Decoded
from kubedra.validation import field

T = TypeVar("T")


class _Answers:
    """Pipeline rejections → ``ApiError`` (400, 413 or 422). A class, not a generator
    context manager: it is entered several times on every write."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, _type: object, err: BaseException | None, _tb: object) -> None:
        if isinstance(err, pipeline.Invalid):
            raise errors.invalid(err.kind.kind, err.kind.group, err.name, err.errors) from None
        if isinstance(err, pipeline.TooLarge):
            raise errors.too_large(err.limit) from None
        if isinstance(err, pipeline.BadRequest):
            raise errors.bad_request(err.message) from None


_ANSWERS = _Answers()


def answers() -> _Answers:
    """``with answers():`` turns what the pipeline rejects into the server's answer."""
    return _ANSWERS


def decode(res: Resource, raw: Any, mode: str, duplicates: list[str] | None = None) -> Decoded:
    """A parsed body → the kind's typed object; ``duplicates`` are the body's repeated keys
    where the caller looked for them (only under ``fieldValidation=Strict``)."""
    with answers():
        return pipeline.decode(res.kind, raw, mode, duplicates, strategy=res.strategy)


def decode_patched(res: Resource, patched: Obj, mode: str) -> Decoded:
    """A patched object through the decoder (the caller normalizes it back to JSON for the
    update). Strict field errors of a patch carry no kind prefix (upstream's patch handler
    words them so)."""
    with answers():
        try:
            dec = pipeline.decode(res.kind, patched, mode, strategy=res.strategy)
        except pipeline.StrictDecodingError as err:
            raise pipeline.BadRequest(err.detail) from None
    return dec


def ensure_namespace(res: Resource, obj: TypedObject, namespace: str) -> None:
    with answers():
        pipeline.ensure_namespace(res.kind, obj, namespace)


# Admission whose validation compiles CEL (a 2.5 MB ResourceClaimParameters takes seconds)
# runs on this thread (unless every selector is compiled already), one request at a time,
# so the event loop keeps serving everyone else;
# at most HEAVY_WAITING such requests wait, more are told to retry (429). Each gets a budget
# of CPU seconds for compiling (docs/deviations.md).
_HEAVY: Final = ThreadPoolExecutor(max_workers=1, thread_name_prefix="admission")
HEAVY_WAITING: Final = 16
COMPILE_CPU_SECONDS: Final = 2.0
_waiting = 0


async def _admit(res: Resource, step: Callable[[], T]) -> T:
    """Run a pipeline step, off the event loop when the kind's validation is heavy, its
    field errors as the served release's apimachinery renders them."""
    global _waiting
    texts = field.apimachinery_of(res.release)
    if not res.strategy.compiles_cel:
        with answers(), field.apimachinery(texts):
            return step()
    try:  # every selector compiled before (pods from one template): no need to leave the loop
        with answers(), field.apimachinery(texts), pipeline.compiled_selectors_only():
            return step()
    except pipeline.CompileDeferred:
        pass  # the steps are repeatable: they set fields from the request, never accumulate
    if _waiting >= HEAVY_WAITING:
        raise errors.too_many_requests()
    _waiting += 1
    try:
        return await asyncio.get_running_loop().run_in_executor(_HEAVY, _budgeted, step, texts)
    finally:
        _waiting -= 1


def _budgeted(step: Callable[[], T], texts: field.Apimachinery) -> T:
    with answers(), field.apimachinery(texts), pipeline.compile_budget(COMPILE_CPU_SECONDS):
        return step()


async def before_create(res: Resource, obj: TypedObject,
                        namespace_labels: Mapping[str, str] | None = None) -> None:
    await _admit(res, lambda: pipeline.before_create(res.strategy, res.kind, obj,
                                                     namespace_labels))


def _typed(res: Resource, obj: Obj) -> Any:
    """A stored or admitted object (always the storage version's JSON) typed."""
    try:
        return codec.decode(obj, res.kind.storage_model)
    except codec.DecodeError as err:  # normalized bodies always decode; keep it a 400 anyway
        raise errors.bad_request(pipeline.cannot_handle(res.kind, str(err))) from None


async def before_update(res: Resource, new: Obj, old: Obj, *, status: bool = False,
                        own_managed_fields: bool = False,
                        namespace_labels: Mapping[str, str] | None = None) -> Obj:
    """The main or status update pipeline over JSON; returns the admitted new object.

    ``own_managed_fields``: the new object's managedFields are the server's record, made
    from the stored object's (valid by construction, and no hook reads them). They then
    stay out of the typed round trip and its validation: they are a third of a claim's
    bytes, copied twice and checked for nothing."""
    managed = None
    if own_managed_fields:
        new, managed = _without_managed_fields(new)
        old, _ = _without_managed_fields(old)
    typed_new, typed_old = _typed(res, new), _typed(res, old)
    if status:
        await _admit(res, lambda: pipeline.before_status_update(
            res.strategy, res.kind, typed_new, typed_old, namespace_labels))
    else:
        await _admit(res, lambda: pipeline.before_update(res.strategy, res.kind, typed_new,
                                                         typed_old))
    out: Obj = codec.to_builtins(typed_new)
    if managed is not None:
        objects.put_managed_fields(out, managed)
    return out


def _without_managed_fields(obj: Obj) -> tuple[Obj, Any]:
    """``obj`` without metadata.managedFields (a shallow copy: ``obj`` is not changed), and
    the managedFields (None when absent)."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or "managedFields" not in meta:
        return obj, None
    rest = dict(meta)
    managed = rest.pop("managedFields")
    return {**obj, "metadata": rest}, managed
