"""Query parameters as upstream parses them (Go ``strconv``, ListOptions validation)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kubedra.api.goformat import go_quote
from kubedra.apiserver import errors
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
