"""Every served resource: its kind-table row, strategy and storage keys.

Strategies come from :mod:`.strategies.core` for the core kinds and from the
``strategies.resource`` and ``strategies.job`` modules, which export
``strategies(gates: FeatureGates) -> Mapping[str, Strategy]`` keyed by Kind name.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from kubedra.api import kinds
from kubedra.api.features import FeatureGates
from kubedra.api.kinds import Kind
from kubedra.apiserver.strategies import core
from kubedra.apiserver.strategies.base import Strategy

_CORE: dict[str, type[core.RulesStrategy]] = {
    "Namespace": core.NamespaceStrategy,
    "Node": core.NodeStrategy,
    "Pod": core.PodStrategy,
    "Event": core.EventStrategy,
    "Service": core.ServiceStrategy,
    "Lease": core.LeaseStrategy,
}

_EXTERNAL = ("kubedra.apiserver.strategies.resource", "kubedra.apiserver.strategies.job")


@dataclass(frozen=True, slots=True)
class Resource:
    kind: Kind
    strategy: Strategy

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


def _external_strategies(gates: FeatureGates) -> dict[str, Strategy]:
    out: dict[str, Strategy] = {}
    for name in _EXTERNAL:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as err:
            if err.name != name:
                raise
            continue
        factory = getattr(module, "strategies", None)
        if callable(factory):
            found: Mapping[str, Strategy] = factory(gates)
            out.update(found)
    return out


class Registry:
    def __init__(self, gates: FeatureGates | None = None) -> None:
        self.gates = gates or FeatureGates()
        external = _external_strategies(self.gates)
        self._by_resource: dict[tuple[str, str, str], Resource] = {}
        self._by_kind: dict[tuple[str, str], Resource] = {}
        for kind in kinds.KINDS:
            strategy = external.get(kind.kind)
            if strategy is None:
                core_cls = _CORE.get(kind.kind)
                if core_cls is not None:
                    strategy = core_cls(kind, self.gates)
                else:  # a kind nobody wrote a strategy for yet: generic behaviour
                    strategy = Strategy()
                    strategy.has_status_subresource = "status" in kind.subresources
            res = Resource(kind, strategy)
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
