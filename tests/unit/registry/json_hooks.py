"""Drive a typed strategy with JSON dicts, as the tests of its rules are written: each hook
decodes its arguments, runs, and writes the typed result back into the dict in place."""

from __future__ import annotations

from typing import Any

from kubedra.api import codec, kinds, scheme
from kubedra.api.features import FeatureGates
from kubedra.registry import resources
from kubedra.registry.strategies.base import AnyStrategy

Obj = dict[str, Any]


def _save(typed: Any, obj: Obj) -> None:
    obj.clear()
    obj.update(codec.to_builtins(typed))


class OnJSON:
    def __init__(self, strategy: AnyStrategy, model: type[Any]) -> None:
        self.strategy = strategy
        self.model = model

    def __getattr__(self, name: str) -> Any:  # flags and the read/delete hooks
        return getattr(self.strategy, name)

    def _typed(self, obj: Obj) -> Any:
        return codec.decode(obj, self.model)

    def default(self, obj: Obj) -> None:
        typed = self._typed(obj)
        self.strategy.default(typed)
        _save(typed, obj)

    def prepare_for_create(self, obj: Obj) -> None:
        typed = self._typed(obj)
        self.strategy.prepare_for_create(typed)
        _save(typed, obj)

    def validate(self, obj: Obj) -> Any:
        return self.strategy.validate(self._typed(obj))

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        typed = self._typed(new)
        self.strategy.prepare_for_update(typed, self._typed(old))
        _save(typed, new)

    def validate_update(self, new: Obj, old: Obj) -> Any:
        return self.strategy.validate_update(self._typed(new), self._typed(old))

    def prepare_for_status_update(self, new: Obj, old: Obj) -> None:
        typed = self._typed(new)
        self.strategy.prepare_for_status_update(typed, self._typed(old))
        _save(typed, new)

    def validate_status_update(self, new: Obj, old: Obj) -> Any:
        return self.strategy.validate_status_update(self._typed(new), self._typed(old))


def json_strategies(gates: FeatureGates | None = None) -> dict[str, OnJSON]:
    """Every kind's strategy (of the gates' release, in its stored version), driven with
    dicts."""
    gates = gates or FeatureGates()
    found = resources.strategies(gates)
    served = scheme.served(gates.release)
    return {k.kind: OnJSON(found[k.resource.storage_gvr], k.model) for k in kinds.KINDS
            if k.gvr in served and k.stored}
