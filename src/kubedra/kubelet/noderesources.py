"""The node resources controller: turns each registered driver's ``NodeListAndWatchResources``
stream into this node's ResourceSlices (upstream pkg/kubelet/cm/dra/plugin/noderesources.go).

One monitor task per driver keeps the driver's last reported models; one work queue keyed by
driver name reconciles the slices of this node (an informer with ``fieldSelector
nodeName=<node>``) against them: matching slices stay, changed ones are reused by update,
missing ones are created with ``generateName`` and a controlling Node owner, the rest deleted.

Stream errors other than UNIMPLEMENTED and a normal end are retried with exponential backoff
(5 s doubling to 180 s, 1.31's fix; v1.30 waits a fixed 5 s), see ``docs/deviations.md``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import msgspec

from kubedra.api.core import Node
from kubedra.api.meta import revision
from kubedra.api.resource.v1alpha2 import NamedResourcesResources, ResourceSlice, node_slice
from kubedra.client.errors import ApiError, is_not_found
from kubedra.client.informer import Informer
from kubedra.client.rest import Client
from kubedra.client.workqueue import WorkQueue
from kubedra.validation.equality import semantic_equal

log = logging.getLogger(__name__)

ResourceModel = NamedResourcesResources | None
"""A ``ResourceModel`` of the wire API; named resources is its only model in v1.30."""

RETRY_INITIAL = 5.0
RETRY_MAX = 180.0


class ResourcesUnsupported(Exception):
    """The driver answered UNIMPLEMENTED: it does not report node resources."""


class ResourceSource(Protocol):
    def watch_resources(self) -> AsyncIterator[list[ResourceModel]]:
        """Each item is the driver's complete list of models; ends when the stream ends."""
        ...


# -- the reconciliation, pure -------------------------------------------------------------

@dataclass
class SyncPlan:
    create: list[ResourceSlice] = field(default_factory=list)
    update: list[ResourceSlice] = field(default_factory=list)
    delete: list[str] = field(default_factory=list)


def new_slice(node: Node, driver: str, model: ResourceModel) -> ResourceSlice:
    return node_slice(node, driver, model, generate_name=f"{node.metadata.name}-{driver}-")


def plan_sync(node: Node, driver: str, desired: Sequence[ResourceModel] | None,
              slices: Sequence[ResourceSlice]) -> SyncPlan:
    """upstream ``sync``: first-match per slice, reuse the last obsolete slice for each model
    not yet stored, create the rest, delete the obsolete slices left (first one first)."""
    wanted = list(desired or ())
    stored = [False] * len(wanted)
    obsolete: list[ResourceSlice] = []
    for s in slices:
        if s.driver_name != driver:
            continue
        index = next((i for i, m in enumerate(wanted)
                      if semantic_equal(m, s.named_resources)), None)
        if index is None:
            obsolete.append(s)
        else:
            stored[index] = True
    plan = SyncPlan()
    for i, model in enumerate(wanted):
        if stored[i]:
            continue
        if obsolete:
            reused = obsolete.pop()
            plan.update.append(msgspec.structs.replace(reused, named_resources=model))
        else:
            plan.create.append(new_slice(node, driver, model))
    plan.delete = [s.metadata.name or "" for s in obsolete]
    return plan


# -- the controller ------------------------------------------------------------------------

#: How long a sync waits for the informer to show its own writes before it lets the queue go on.
OBSERVE_TIMEOUT = 10.0


class NodeResourcesController:
    def __init__(self, client: Client, get_node: Callable[[], Node], *,
                 retry_initial: float = RETRY_INITIAL, retry_max: float = RETRY_MAX) -> None:
        self.client = client
        self.get_node = get_node
        self.node_name = get_node().metadata.name or ""
        self.informer: Informer[ResourceSlice] = Informer(
            client, ResourceSlice, field_selector=f"nodeName={self.node_name}")
        self.queue = WorkQueue("node_resource_slices", base_delay=0.005, max_delay=1000.0)
        self.resources: dict[str, list[ResourceModel] | None] = {}
        self._monitors: dict[str, asyncio.Task[None]] = {}
        self.retry_initial = retry_initial
        self.retry_max = retry_max
        self.informer.add_handler(on_add=self._enqueue_slice,
                                  on_update=lambda _o, n: self._enqueue_slice(n),
                                  on_delete=self._enqueue_slice)

    def _enqueue_slice(self, s: ResourceSlice) -> None:
        self.queue.add(s.driver_name)

    def add_plugin(self, driver: str, source: ResourceSource) -> None:
        """(Re-)registration: a fresh entry without resources, then monitor the new stream."""
        self._cancel_monitor(driver)
        self.resources[driver] = None
        self.queue.add(driver)
        self._monitors[driver] = asyncio.create_task(self._monitor(driver, source),
                                                     name=f"node-resources-{driver}")

    def remove_plugin(self, driver: str) -> None:
        self._cancel_monitor(driver)
        self.resources.pop(driver, None)
        self.queue.add(driver)

    def _cancel_monitor(self, driver: str) -> None:
        task = self._monitors.pop(driver, None)
        if task is not None:
            task.cancel()

    async def _monitor(self, driver: str, source: ResourceSource) -> None:
        delay = self.retry_initial
        while True:
            try:
                async for models in source.watch_resources():
                    self.resources[driver] = list(models)
                    self.queue.add(driver)
                    delay = self.retry_initial
                log.info("driver %s closed its resource stream; keeping its slices", driver)
                return
            except ResourcesUnsupported:
                log.debug("driver %s does not support node resource reporting", driver)
                return
            except asyncio.CancelledError:
                raise
            except Exception as e:
                log.warning("reading node resources of driver %s failed, retrying in %.0f s: %s",
                            driver, delay, e)
            await asyncio.sleep(delay)
            delay = min(delay * 2, self.retry_max)

    async def sync(self, driver: str) -> None:
        node = self.get_node()
        plan = plan_sync(node, driver, self.resources.get(driver), self.informer.list())
        written: dict[str, int | None] = {}  # name -> resourceVersion written, None: deleted
        try:
            for s in plan.update:
                try:
                    written[s.metadata.name or ""] = revision(await self.client.update(s))
                except ApiError as e:
                    raise RuntimeError(f"update node resource slice: {e}") from e
            for s in plan.create:
                try:
                    made = await self.client.create(s)
                except ApiError as e:
                    raise RuntimeError(f"create node resource slice: {e}") from e
                written[made.metadata.name or ""] = revision(made)
            for name in plan.delete:
                try:
                    await self.client.delete(ResourceSlice, name)
                except ApiError as e:
                    if not is_not_found(e):
                        raise RuntimeError(f"delete node resource slice: {e}") from e
                written[name] = None
        finally:
            await self._until_observed(written)

    async def _until_observed(self, written: dict[str, int | None]) -> None:
        """Wait (bounded) until the informer shows this sync's own writes, so the next sync
        does not plan from a cache without them: a plan made before its own create arrived
        created a second slice for the same model, and v1.30's matching keeps both."""
        deadline = asyncio.get_running_loop().time() + OBSERVE_TIMEOUT
        while written and asyncio.get_running_loop().time() < deadline:
            written = {name: rv for name, rv in written.items() if not self._shows(name, rv)}
            if written:
                await asyncio.sleep(0.01)

    def _shows(self, name: str, rv: int | None) -> bool:
        cached = self.informer.get(name)
        if rv is None:
            return cached is None
        return cached is not None and revision(cached) >= rv

    async def run(self) -> None:
        """Sync every slice of this node once the informer has listed them (drivers that have
        not registered yet lose their slices, as upstream), then work the queue."""
        self.informer.start()
        try:
            await self.informer.wait_synced()
            await self.queue.run_workers(self.sync, 1)
        finally:
            for driver in list(self._monitors):
                self._cancel_monitor(driver)
            await self.informer.stop()
