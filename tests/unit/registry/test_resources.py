"""Every resource's strategy is its own and really validates through the pipeline (that the
strategies cover the resource table exactly is ``tests/unit/api/test_scheme.py``)."""

from __future__ import annotations

import pytest

from kubedra.api import kinds
from kubedra.api.features import FeatureGates
from kubedra.registry import pipeline, resources
from kubedra.registry.strategies.base import Strategy

STRATEGIES = resources.strategies(FeatureGates())


@pytest.mark.parametrize("kind", kinds.KINDS, ids=lambda k: k.kind)
def test_every_kind_has_a_strategy_of_its_own(kind: kinds.Kind) -> None:
    strategy = STRATEGIES[kind.resource.storage_gvr]
    assert type(strategy) is not Strategy, f"{kind.kind} has only the generic strategy"
    # a status subresource exists exactly where the strategy keeps status apart
    assert strategy.has_status_subresource == ("status" in kind.subresources)


@pytest.mark.parametrize("kind", kinds.KINDS, ids=lambda k: k.kind)
def test_an_object_without_a_name_is_invalid(kind: kinds.Kind) -> None:
    obj = kind.model()
    pipeline.ensure_namespace(kind, obj, "default")
    with pytest.raises(pipeline.Invalid) as err:
        pipeline.before_create(STRATEGIES[kind.resource.storage_gvr], kind, obj)
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
            step(STRATEGIES[kind.resource.storage_gvr], kind, new, old)
        assert "metadata.resourceVersion" in {str(e.field) for e in err.value.errors}
