"""The strategy table covers every row of the kinds table, and every entry really validates
through the pipeline."""

from __future__ import annotations

import pytest

from kubedra.api import kinds
from kubedra.api.features import FeatureGates
from kubedra.registry import pipeline, table
from kubedra.registry.strategies.base import Strategy

STRATEGIES = table.strategies(FeatureGates())


def test_every_kind_has_its_strategy_and_nothing_else() -> None:
    assert set(STRATEGIES) == {k.kind for k in kinds.KINDS}
    for kind in kinds.KINDS:
        strategy = STRATEGIES[kind.kind]
        assert type(strategy) is not Strategy, f"{kind.kind} has only the generic strategy"
        # a status subresource exists exactly where the strategy keeps status apart
        assert strategy.has_status_subresource == ("status" in kind.subresources), kind.kind


@pytest.mark.parametrize("kind", kinds.KINDS, ids=lambda k: k.kind)
def test_an_object_without_a_name_is_invalid(kind: kinds.Kind) -> None:
    obj = kind.model()
    pipeline.ensure_namespace(kind, obj, "default")
    with pytest.raises(pipeline.Invalid) as err:
        pipeline.before_create(STRATEGIES[kind.kind], kind, obj)
    assert "metadata.name" in {str(e.field) for e in err.value.errors}


@pytest.mark.parametrize("kind", kinds.KINDS, ids=lambda k: k.kind)
def test_updates_need_the_resource_version(kind: kinds.Kind) -> None:
    new, old = kind.model(), kind.model()
    new.metadata.name = old.metadata.name = "x"
    if kind.namespaced:
        new.metadata.namespace = old.metadata.namespace = "default"
    steps = [pipeline.before_update]
    if "status" in kind.subresources:
        steps.append(pipeline.before_status_update)
    for step in steps:
        with pytest.raises(pipeline.Invalid) as err:
            step(STRATEGIES[kind.kind], kind, new, old)
        assert "metadata.resourceVersion" in {str(e.field) for e in err.value.errors}
