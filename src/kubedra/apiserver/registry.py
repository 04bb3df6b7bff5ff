"""Every served resource: its kind-table row, its strategy (:mod:`kubedra.registry.table`),
its storage keys and how long its objects live (Events: ``--event-ttl``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from kubedra.api import kinds
from kubedra.api.features import FeatureGates
from kubedra.api.kinds import Kind
from kubedra.registry import table
from kubedra.registry.strategies.base import AnyStrategy


@dataclass(frozen=True, slots=True)
class Resource:
    kind: Kind
    strategy: AnyStrategy
    ttl: int = 0
    """Seconds the store keeps an object after each write (0: until deleted)."""

    @property
    def prefix(self) -> str:
        return f"/registry/{self.kind.group or 'core'}/{self.kind.plural}/"

    def key(self, namespace: str, name: str) -> str:
        if self.kind.namespaced:
            return f"{self.prefix}{namespace}/{name}"
        return f"{self.prefix}{name}"

    def list_prefix(self, namespace: str) -> str:
        """Keys of one namespace, or of all objects when ``namespace`` is empty."""
        if self.kind.namespaced and namespace:
            return f"{self.prefix}{namespace}/"
        return self.prefix

    @property
    def field_labels(self) -> frozenset[str]:
        return frozenset((*self.strategy.generic_field_labels,
                          *self.strategy.extra_field_labels))

    def check_field_label(self, label: str) -> str | None:
        if label in self.field_labels:
            return None
        return self.strategy.field_label_error(label)


EVENT_TTL = 3600
"""kube-apiserver's ``--event-ttl`` default (1h0m0s), in seconds."""


class Registry:
    def __init__(self, gates: FeatureGates | None = None, event_ttl: int = EVENT_TTL) -> None:
        self.gates = gates or FeatureGates()
        strategies = table.strategies(self.gates)
        self._by_resource: dict[tuple[str, str, str], Resource] = {}
        self._by_kind: dict[tuple[str, str], Resource] = {}
        for kind in kinds.KINDS:
            ttl = event_ttl if (kind.group, kind.plural) == ("", "events") else 0
            res = Resource(kind, strategies[kind.kind], ttl)
            self._by_resource[(kind.group, kind.version, kind.plural)] = res
            self._by_kind[(kind.api_version, kind.kind)] = res

    def __iter__(self) -> Iterator[Resource]:
        return iter(self._by_resource.values())

    def get(self, group: str, version: str, plural: str) -> Resource | None:
        return self._by_resource.get((group, version, plural))

    def by_kind(self, api_version: str, kind: str) -> Resource | None:
        return self._by_kind.get((api_version, kind))

    def namespaces(self) -> Resource:
        res = self.get("", "v1", "namespaces")
        assert res is not None
        return res

    def group_versions(self) -> dict[str, list[str]]:
        """group → served versions, in kinds-table order ("" is the legacy core group)."""
        out: dict[str, list[str]] = {}
        for k in kinds.KINDS:
            versions = out.setdefault(k.group, [])
            if k.version not in versions:
                versions.append(k.version)
        return out
