"""Request options as upstream parses them: list/watch, delete, dryRun and fieldValidation
query parameters (Go ``strconv``, ``ValidateListOptions``) and the DeleteOptions body."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from kubedra.api.base import Obj
from kubedra.api.goformat import go_quote
from kubedra.apiserver import errors
from kubedra.registry.pipeline import FIELD_VALIDATION
from kubedra.validation import field

_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def parse_bool(name: str, value: str | None) -> bool:
    """Go's ``strconv.ParseBool``; anything else is a 400 as upstream's query decoder gives."""
    if value is None:
        return False
    if value in _TRUE:
        return True
    if value in _FALSE or value == "":
        return False
    raise errors.bad_request(
        f"strconv.ParseBool: parsing {go_quote(value)}: invalid syntax ({name})"
    )


def parse_int(name: str, value: str | None) -> int | None:
    if value is None or value == "":
        return None
    try:
        return int(value, 10)
    except ValueError:
        raise errors.bad_request(
            f"strconv.ParseInt: parsing {go_quote(value)}: invalid syntax ({name})"
        ) from None


@dataclass(frozen=True, slots=True)
class ListOptions:
    label_selector: str = ""
    field_selector: str = ""
    watch: bool = False
    allow_bookmarks: bool = False
    resource_version: str = ""
    resource_version_match: str = ""
    timeout_seconds: int | None = None
    limit: int = 0
    continue_token: str = ""
    send_initial_events: bool | None = None


_MATCHES = ("Exact", "NotOlderThan", "")


def parse_list_options(q: Mapping[str, str]) -> ListOptions:
    sie = q.get("sendInitialEvents")
    opts = ListOptions(
        label_selector=q.get("labelSelector", ""),
        field_selector=q.get("fieldSelector", ""),
        watch=parse_bool("watch", q.get("watch")),
        allow_bookmarks=parse_bool("allowWatchBookmarks", q.get("allowWatchBookmarks")),
        resource_version=q.get("resourceVersion", ""),
        resource_version_match=q.get("resourceVersionMatch", ""),
        timeout_seconds=parse_int("timeoutSeconds", q.get("timeoutSeconds")),
        limit=parse_int("limit", q.get("limit")) or 0,
        continue_token=q.get("continue", ""),
        send_initial_events=None if sie is None else parse_bool("sendInitialEvents", sie),
    )
    _validate(opts)
    return opts


def _validate(o: ListOptions) -> None:
    """``ValidateListOptions``: 422 on ``ListOptions.meta.k8s.io``."""
    errs: list[field.FieldError] = []
    root = field.ROOT
    if o.resource_version_match not in _MATCHES:
        errs.append(
            field.not_supported(root.child("resourceVersionMatch"), o.resource_version_match,
                                list(_MATCHES))
        )
    elif o.resource_version_match:
        if o.watch:
            errs.append(field.forbidden(root.child("resourceVersionMatch"),
                                        "resourceVersionMatch is forbidden for watch"))
        if not o.resource_version:
            errs.append(field.forbidden(root.child("resourceVersionMatch"),
                                        "resourceVersionMatch is forbidden unless "
                                        "resourceVersion is provided"))
        if o.continue_token:
            errs.append(field.forbidden(root.child("resourceVersionMatch"),
                                        "resourceVersionMatch is forbidden when continue is "
                                        "provided"))
        if o.resource_version_match == "Exact" and o.resource_version == "0":
            errs.append(field.forbidden(root.child("resourceVersionMatch"),
                                        'resourceVersionMatch "exact" is forbidden for '
                                        'resourceVersion "0"'))
    if o.continue_token and o.resource_version and o.resource_version != "0":
        errs.append(field.forbidden(root.child("resourceVersion"),
                                    "specifying resource version is not allowed when using "
                                    "continue"))
    if o.send_initial_events is not None:
        if not o.watch:
            errs.append(field.forbidden(root.child("sendInitialEvents"),
                                        "sendInitialEvents is forbidden for list"))
        elif not o.allow_bookmarks:
            errs.append(field.forbidden(root.child("allowWatchBookmarks"),
                                        "allowWatchBookmarks must be set to true when "
                                        "sendInitialEvents is specified"))
    if o.limit < 0:
        errs.append(field.invalid(root.child("limit"), o.limit,
                                  "must be greater than or equal to 0"))
    if errs:
        raise errors.invalid("ListOptions", "meta.k8s.io", "", errs)


def parse_resource_version(value: str, what: str = "resourceVersion") -> int:
    """A resourceVersion string as a revision; non-integers are upstream's 400."""
    try:
        rv = int(value, 10)
    except ValueError:
        raise errors.bad_request(f'invalid {what}: "{value}"') from None
    if rv < 0:
        raise errors.bad_request(f'invalid {what}: "{value}"')
    return rv


def dry_run_unsupported(value: str) -> field.FieldError:
    return field.not_supported(field.ROOT.child("dryRun"), value, ["All"])


def propagation_unsupported(value: str) -> field.FieldError:
    return field.not_supported(
        field.ROOT.child("propagationPolicy"), value, ["Foreground", "Background", "Orphan", "nil"]
    )


def field_validation_mode(value: str | None) -> str:
    """``fieldValidation``: Ignore, Warn (the default) or Strict."""
    mode = value or ""
    if mode and mode not in FIELD_VALIDATION:
        raise errors.bad_request(
            f'fieldValidation must be one of "Ignore", "Warn", or "Strict", got "{mode}"'
        )
    return mode or "Warn"


def parse_dry_run(values: Sequence[str], options_kind: str) -> bool:
    """``dryRun``: only ``All`` is known; anything else is a 422 on the options kind."""
    for v in values:
        if v != "All":
            raise errors.invalid(options_kind, "meta.k8s.io", "", [dry_run_unsupported(v)])
    return bool(values)


@dataclass(slots=True)
class DeleteOptions:
    grace_period_seconds: int | None = None
    propagation_policy: str | None = None
    orphan_dependents: bool | None = None
    precondition_uid: str | None = None
    precondition_rv: str | None = None
    dry_run: bool = False


def parse_delete_options(q: Mapping[str, str], dry_run: bool, body: bytes) -> DeleteOptions:
    """DeleteOptions from the query and an optional JSON body (the body wins)."""
    opts = DeleteOptions(
        grace_period_seconds=parse_int("gracePeriodSeconds", q.get("gracePeriodSeconds")),
        propagation_policy=q.get("propagationPolicy") or None,
        orphan_dependents=(parse_bool("orphanDependents", q["orphanDependents"])
                           if "orphanDependents" in q else None),
        dry_run=dry_run,
    )
    if body.strip():
        try:
            decoded: Any = msgspec.json.decode(body)
        except (msgspec.MsgspecError, RecursionError, UnicodeDecodeError) as err:
            raise errors.bad_request(f"the body of the request could not be decoded: {err}") \
                from None
        if not isinstance(decoded, dict):
            raise errors.bad_request("DeleteOptions must be a JSON object")
        try:
            _apply_delete_body(opts, decoded)
        except (TypeError, ValueError) as wrong:
            raise errors.bad_request(f"invalid DeleteOptions: {wrong}") from None
    if opts.propagation_policy not in (None, "Orphan", "Background", "Foreground"):
        raise errors.invalid("DeleteOptions", "meta.k8s.io", "", [
            propagation_unsupported(opts.propagation_policy)
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
