"""One named-resources instance as the allocator sees it, with its selector verdict cache.

The bottom of :mod:`kubedra.allocation`: pools hold instances, selectors evaluate them and
cache their verdicts here, the CEL adapter keeps its converted attributes here.
"""

from __future__ import annotations

from collections.abc import Sequence

from kubedra.api.resource.v1alpha2 import NamedResourcesAttribute

Verdict = bool | str
"""A selector's answer for one instance: True/False, or the CEL evaluation error text."""


class Instance:
    """One named-resources instance; carries its selector verdict cache."""

    __slots__ = ("attributes", "name", "position", "prepared", "slice_name", "verdicts")

    def __init__(
        self,
        name: str,
        attributes: Sequence[NamedResourcesAttribute],
        slice_name: str,
        position: int,
    ) -> None:
        self.name = name
        self.attributes = attributes
        self.slice_name = slice_name
        self.position = position  # index inside its slice
        self.verdicts: dict[str, Verdict] = {}
        self.prepared: object | None = None  # the evaluator's converted attributes
