"""The node resources monitor's reactions to a driver's stream (kubelet-noderesources-sync.json
``monitorReactions``): responses replace the models, UNIMPLEMENTED stops silently, a normal end
keeps the last models, other errors retry with exponential backoff (the 1.31 fix recorded in
docs/deviations.md)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kubedra.api.core import Node
from kubedra.api.meta import ObjectMeta
from kubedra.api.resource.v1alpha2 import NamedResourcesInstance, NamedResourcesResources
from kubedra.kubelet import noderesources
from kubedra.kubelet.noderesources import NodeResourcesController, ResourcesUnsupported

FILE = "kubelet-noderesources-sync.json"
NODE = Node(metadata=ObjectMeta(name="worker", uid="u"))
MODEL = NamedResourcesResources(instances=[NamedResourcesInstance(name="instance-00")])


class Script:
    """Each stream opening plays the next step: an exception to raise or models to send."""

    def __init__(self, *steps: Any) -> None:
        self.steps = list(steps)
        self.opened = 0

    async def watch_resources(self) -> AsyncIterator[list[Any]]:
        self.opened += 1
        step = self.steps.pop(0)
        if isinstance(step, BaseException):
            raise step
        for models in step:
            yield models


@pytest.fixture
def delays(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    seen: list[float] = []
    real = asyncio.sleep

    async def fake(delay: float, *args: Any) -> Any:
        seen.append(delay)
        return await real(0)

    monkeypatch.setattr(noderesources.asyncio, "sleep", fake)
    return seen


def controller() -> NodeResourcesController:
    return NodeResourcesController(None, lambda: NODE)  # type: ignore[arg-type]


@pytest.mark.vectors(FILE)
async def test_other_errors_back_off_exponentially_then_keep_the_stream(
        delays: list[float]) -> None:
    c = controller()
    source = Script(*[RuntimeError("connection refused")] * 7, [[MODEL]])
    await c._monitor("d", source)
    assert delays == [5.0, 10.0, 20.0, 40.0, 80.0, 160.0, 180.0]
    assert c.resources["d"] == [MODEL]  # then the stream ended: models kept, monitor stopped
    assert source.opened == 8


@pytest.mark.vectors(FILE)
async def test_unimplemented_stops_silently(delays: list[float]) -> None:
    c = controller()
    c.resources["d"] = None
    source = Script(ResourcesUnsupported("node resource support disabled"))
    await c._monitor("d", source)
    assert delays == [] and source.opened == 1 and c.resources["d"] is None


@pytest.mark.vectors(FILE)
async def test_each_response_replaces_the_models_and_enqueues(delays: list[float]) -> None:
    c = controller()
    await c._monitor("d", Script([[MODEL, MODEL], [MODEL]]))
    assert c.resources["d"] == [MODEL]
    assert len(c.queue) == 1  # deduplicated key "d"
