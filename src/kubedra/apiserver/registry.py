"""Every served resource: its served version (:mod:`kubedra.api.kinds`), its strategy
(:mod:`kubedra.registry.resources`, bound under the resource's storage version), its storage
keys and how long its objects live (Events: ``--event-ttl``).

A registry serves exactly the rows of its release (the gates') with ``--runtime-config``
applied (:func:`kubedra.api.scheme.served`); routing, discovery, OpenAPI, the garbage
collector and authorization all read this set, so an unserved version answers 404.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from kubedra.api import codec, kinds, scheme
from kubedra.api.base import Obj
from kubedra.api.features import FeatureGates
from kubedra.api.kinds import Kind
from kubedra.api.release import Release
from kubedra.api.runtimeconfig import RuntimeConfig
from kubedra.proto import kube
from kubedra.registry import resources
from kubedra.registry.strategies.base import AnyStrategy


@dataclass(frozen=True, slots=True)
class Resource:
    kind: Kind
    strategy: AnyStrategy
    release: Release
    """The release served: its apimachinery renders the field errors of a write."""
    ttl: int = 0
    """Seconds the store keeps an object after each write (0: until deleted)."""
    protobuf: bool = False
    """The kind has a protobuf form (a message of ``proto.kube``): its bodies and answers may
    be protobuf, else they are JSON and YAML only. Decided once here, asked several times by
    every request."""

    @property
    def prefix(self) -> str:
        return self.kind.resource.prefix

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

    @property
    def converts(self) -> bool:
        """Served in another version than the one its objects are stored in: they convert
        at the edge (decode, then ``to_hub``; ``from_hub``, then encode)."""
        return not self.kind.stored

    def served(self, obj: Obj, data: bytes | None = None) -> tuple[Obj, bytes]:
        """A stored object (the storage version's JSON, ``data`` its bytes when known) as
        this version serves it, and its bytes: itself for the storage version."""
        if not self.converts:
            return obj, data if data is not None else codec.encode(obj)
        res = self.kind.resource
        hub = codec.decode(obj, res.row(res.storage).model)
        out: Obj = codec.to_builtins(self.kind.row.conversion.from_hub(hub))
        out["apiVersion"] = self.kind.api_version
        return out, codec.encode(out)

    def check_field_label(self, label: str) -> str | None:
        if label in self.field_labels:
            return None
        return self.strategy.field_label_error(label)


EVENT_TTL = 3600
"""kube-apiserver's ``--event-ttl`` default (1h0m0s), in seconds."""


class Registry:
    def __init__(self, gates: FeatureGates | None = None, event_ttl: int = EVENT_TTL,
                 runtime_config: RuntimeConfig = scheme.DEFAULTS) -> None:
        self.gates = gates or FeatureGates()
        self.runtime_config = runtime_config
        #: The (group, version, plural) this server serves.
        self.served = scheme.served(self.gates.release, runtime_config)
        strategies = resources.strategies(self.gates)
        self._by_resource: dict[tuple[str, str, str], Resource] = {}
        self._by_kind: dict[tuple[str, str], Resource] = {}
        for kind in kinds.KINDS:
            if kind.gvr not in self.served:
                continue
            ttl = event_ttl if (kind.group, kind.plural) == ("", "events") else 0
            res = Resource(kind, strategies[kind.resource.storage_gvr], self.gates.release, ttl,
                           kube.message_for(kind.api_version, kind.kind) is not None)
            self._by_resource[(kind.group, kind.version, kind.plural)] = res
            self._by_kind[(kind.api_version, kind.kind)] = res

    @property
    def release(self) -> Release:
        """The release this server emulates."""
        return self.gates.release

    def __iter__(self) -> Iterator[Resource]:
        return iter(self._by_resource.values())

    def by_prefix(self) -> dict[str, Resource]:
        """One resource per store prefix, for what goes by store key: its storage version
        where that is served (objects are stored in it)."""
        out: dict[str, Resource] = {}
        for res in self:
            if not res.converts or res.prefix not in out:
                out[res.prefix] = res
        return out

    def get(self, group: str, version: str, plural: str) -> Resource | None:
        return self._by_resource.get((group, version, plural))

    def by_kind(self, api_version: str, kind: str) -> Resource | None:
        return self._by_kind.get((api_version, kind))

    def namespaces(self) -> Resource:
        res = self.get("", "v1", "namespaces")
        assert res is not None
        return res

    def group_versions(self) -> dict[str, list[str]]:
        """group → its served versions in priority order, the preferred one first
        (:data:`kubedra.api.scheme.VERSION_PRIORITY`; "" is the legacy core group)."""
        served = {(group, version) for group, version, _ in self.served}
        out = {group: [v for v in versions if (group, v) in served]
               for group, versions in scheme.VERSION_PRIORITY.items()}
        return {group: versions for group, versions in out.items() if versions}
