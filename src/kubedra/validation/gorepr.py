"""Bad values rendered as Go prints them in ``field.Error`` messages.

``ErrorBody`` prints a struct, map or time bad value with ``%#v`` or its ``String()``; a 422
response carries that text. These wrappers hold the rendered text so that
:func:`kubedra.validation.field.go_value` (which falls back to ``str()``) reproduces it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

import msgspec

from kubedra.api import codec
from kubedra.api.batch import UncountedTerminatedPods
from kubedra.api.goformat import go_quote
from kubedra.api.meta import LabelSelector


class GoRepr:
    """A bad value whose message form is fixed text (never quoted again); ``json_value`` is
    what ``json.Marshal`` writes for it where that differs (apimachinery v0.34 prints that)."""

    __slots__ = ("json_value", "text")

    def __init__(self, text: str, json_value: str | None = None) -> None:
        self.text = text
        self.json_value = json_value

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"GoRepr({self.text!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GoRepr) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)


def go_time(rfc3339: str) -> GoRepr:
    """``metav1.Time`` through ``time.Time.String()`` in UTC: ``2024-01-01 00:00:00 +0000 UTC``
    (its JSON form: RFC 3339 in seconds, ``2024-01-01T00:00:00Z``)."""
    try:
        t = datetime.fromisoformat(rfc3339).astimezone(UTC)
    except ValueError:
        return GoRepr(rfc3339)
    text = t.strftime("%Y-%m-%d %H:%M:%S")
    if t.microsecond:
        text += f".{t.microsecond:06d}".rstrip("0")
    return GoRepr(text + " +0000 UTC", t.strftime("%Y-%m-%dT%H:%M:%SZ"))


def string_slice(values: Sequence[str] | None, elem: str = "string") -> str:
    if values is None:
        return f"[]{elem}(nil)"
    return f"[]{elem}{{" + ", ".join(go_quote(v) for v in values) + "}"


def string_map(values: Mapping[str, str] | None) -> str:
    if values is None:
        return "map[string]string(nil)"
    items = ", ".join(f"{go_quote(k)}:{go_quote(values[k])}" for k in sorted(values))
    return "map[string]string{" + items + "}"


def label_selector(sel: LabelSelector) -> GoRepr:
    """``%#v`` of a ``metav1.LabelSelector`` value."""
    if sel.match_expressions is None:
        exprs = "[]v1.LabelSelectorRequirement(nil)"
    else:
        exprs = (
            "[]v1.LabelSelectorRequirement{"
            + ", ".join(
                f"v1.LabelSelectorRequirement{{Key:{go_quote(r.key)}, "
                f"Operator:{go_quote(r.operator)}, Values:{string_slice(r.values)}}}"
                for r in sel.match_expressions
            )
            + "}"
        )
    return GoRepr(
        f"v1.LabelSelector{{MatchLabels:{string_map(sel.match_labels)}, MatchExpressions:{exprs}}}"
    )


def uncounted_terminated_pods(pods: UncountedTerminatedPods) -> GoRepr:
    """``%#v`` of a ``batch.UncountedTerminatedPods`` value."""
    return GoRepr(
        f"batch.UncountedTerminatedPods{{Succeeded:{string_slice(pods.succeeded, 'types.UID')}, "
        f"Failed:{string_slice(pods.failed, 'types.UID')}}}"
    )


def struct_json(value: msgspec.Struct) -> GoRepr:
    """A struct bad value: Go prints ``%#v``, we print its JSON (see docs/deviations.md)."""
    return GoRepr(codec.encode(value).decode())
