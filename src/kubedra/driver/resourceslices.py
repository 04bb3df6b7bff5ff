"""Publishing a driver's devices as ``resource.k8s.io/v1`` ResourceSlices (Kubernetes 1.34).

Since 1.34 drivers write their ResourceSlices themselves. This is the Python shape of
upstream's ResourceSlice controller (k8s.io/dynamic-resource-allocation@v0.34
``resourceslice/resourceslicecontroller.go``): the driver hands it the complete desired state,
one :class:`Pool` of :class:`Slice` s per pool name, and the controller creates, updates and
deletes slices until the API shows exactly that, with upstream's pool generations,
``resourceSliceCount``, slice names and owner references.

It watches the driver's slices (field selector ``spec.driver``, and ``spec.nodeName`` for a
node's own slices) and syncs a pool again ``sync_delay`` after anyone changes one of them, so
a slice someone else edits or deletes is put back. Each pool is one key of a work queue: a
failed sync is reported to ``error_handler`` and retried with backoff.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime

import msgspec

from kubedra.api import codec
from kubedra.api.core import Node, NodeSelector
from kubedra.api.meta import ObjectMeta, OwnerReference
from kubedra.api.resource import v1
from kubedra.client.errors import is_not_found
from kubedra.client.informer import Informer, run_informed
from kubedra.client.mutationcache import MutationCache
from kubedra.client.rest import Client
from kubedra.client.workqueue import WorkQueue
from kubedra.tasks import cancel_and_wait
from kubedra.validation.equality import semantic_equal

log = logging.getLogger(__name__)

DEFAULT_SYNC_DELAY = 30.0
"""Upstream's ``DefaultSyncDelay``: long enough for the informer to catch up with a change
(fewer redundant deletes), short enough that a human's mistake is soon repaired."""
DEFAULT_MUTATION_CACHE_TTL = 60.0
"""Upstream's ``DefaultMutationCacheTTL``: how long a created slice counts as existing before
the informer shows it; the pool is synced again once it has passed."""
QUEUE_NAME = "node_resource_slices"

ErrorHandler = Callable[[Exception, str], None]


@dataclasses.dataclass
class Slice:
    """One ResourceSlice's worth of devices (at most ``v1.RESOURCE_SLICE_MAX_DEVICES``)."""

    devices: list[v1.Device] = dataclasses.field(default_factory=list)
    shared_counters: list[v1.CounterSet] | None = None
    per_device_node_selection: bool | None = None


@dataclasses.dataclass
class Pool:
    """The slices of one pool. Without a ``node_selector`` the pool is the owner node's (when
    the owner is a Node) or available on all nodes. ``generation`` may stay 0: the controller
    bumps it as needed; a higher value is used as the next generation."""

    slices: list[Slice] = dataclasses.field(default_factory=list)
    node_selector: NodeSelector | None = None
    generation: int = 0


@dataclasses.dataclass
class DriverResources:
    """Everything the driver publishes, by pool name; a pool left out is deleted."""

    pools: dict[str, Pool] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class Owner:
    """The owner of every slice (garbage collection removes them with it). A Node owner
    (``apiVersion: v1, kind: Node``) also makes the slices node-local; its UID is looked up
    when left empty."""

    api_version: str
    kind: str
    name: str
    uid: str = ""

    @classmethod
    def node(cls, name: str, uid: str = "") -> Owner:
        return cls("v1", "Node", name, uid)

    @property
    def is_node(self) -> bool:
        return self.api_version == "v1" and self.kind == "Node"


@dataclasses.dataclass
class Stats:
    """API calls that succeeded (upstream's ``GetStats``)."""

    creates: int = 0
    updates: int = 0
    deletes: int = 0


class DroppedFieldsError(Exception):
    """The server stored a slice without some fields (their feature gates are off); the
    controller then publishes what the server keeps instead of updating forever."""

    def __init__(self, pool: str, index: int, desired: v1.ResourceSlice,
                 actual: v1.ResourceSlice) -> None:
        self.pool, self.index, self.desired, self.actual = pool, index, desired, actual
        disabled = " ".join(self.disabled_features()) or "unknown"
        super().__init__(f'pool "{pool}", slice #{index}: some fields were dropped by the '
                         f"apiserver, probably because these features are disabled: {disabled}")

    def disabled_features(self) -> list[str]:
        """The feature gates whose fields are missing from the stored slice."""
        want, got = self.desired.spec, self.actual.spec
        pairs = list(zip(want.devices, got.devices, strict=False))
        disabled = []
        if any(len(w.taints or ()) > len(g.taints or ()) for w, g in pairs):
            disabled.append("DRADeviceTaints")
        if ((want.per_device_node_selection and not got.per_device_node_selection)
                or len(want.shared_counters or ()) > len(got.shared_counters or ())
                or any(len(w.consumes_counters or ()) != len(g.consumes_counters or ())
                       for w, g in pairs)):
            disabled.append("DRAPartitionableDevices")
        if any(len(w.binding_conditions or ()) != len(g.binding_conditions or ())
               or len(w.binding_failure_conditions or ())
               != len(g.binding_failure_conditions or ()) for w, g in pairs):
            disabled.append("DRADeviceBindingConditions")
        if any(w.allow_multiple_allocations is not None and g.allow_multiple_allocations is None
               for w, g in pairs):
            disabled.append("DRAConsumableCapacity")
        return disabled


def _log_error(err: Exception, msg: str) -> None:
    log.error("%s: %s", msg, err)


class ResourceSliceController:
    """Publishes one driver's :class:`DriverResources`. ``await start()`` (returns once the
    driver's existing slices are known and the first sync is queued),
    :meth:`publish_resources` for each new desired state, ``await stop()`` to end it (the
    slices stay)."""

    def __init__(self, client: Client, driver: str, owner: Owner | None = None, *,
                 resources: DriverResources | None = None,
                 sync_delay: float = DEFAULT_SYNC_DELAY,
                 mutation_cache_ttl: float = DEFAULT_MUTATION_CACHE_TTL,
                 error_handler: ErrorHandler | None = None) -> None:
        if not driver:
            raise ValueError("DRA driver name is empty")
        self.client = client
        self.driver = driver
        self.owner = owner
        self.stats = Stats()
        self._sync_delay = sync_delay
        self._ttl = mutation_cache_ttl
        self._error = error_handler or _log_error
        node = owner.name if owner is not None and owner.is_node else ""
        self._node_name = node
        self.informer: Informer[v1.ResourceSlice] = Informer(
            client, v1.ResourceSlice, field_selector=(
                f"{v1.RESOURCE_SLICE_SELECTOR_DRIVER}={driver},"
                f"{v1.RESOURCE_SLICE_SELECTOR_NODE_NAME}={node}"))
        self.informer.add_handler(on_add=self._on_add, on_update=self._on_update,
                                  on_delete=self._on_delete)
        self._written: MutationCache[v1.ResourceSlice] = MutationCache(mutation_cache_ttl)
        self.queue = WorkQueue(QUEUE_NAME)
        self._resources = DriverResources()
        self._last_add: dict[str, float] = {}  # pool -> when its last slice was created
        self._task: asyncio.Task[None] | None = None
        self.publish_resources(resources)

    # --- the driver's side -------------------------------------------------------------

    def publish_resources(self, resources: DriverResources | None) -> None:
        """Replace the desired state (copied: the caller may change its object afterwards);
        the old and the new pools are synced at once. Raises ``ValueError`` for a pool with a
        node selector when the slices are a node's own (a slice has one or the other)."""
        for name, pool in (resources.pools.items() if resources else ()):
            if pool.node_selector is not None and self._node_name:
                raise ValueError(f"pool {name!r}: a node selector cannot be set on the "
                                 f"slices of node {self._node_name!r} (the owner)")
        for name in self._resources.pools:
            self.queue.add(name)
        self._resources = (codec.deep_copy(resources, DriverResources) if resources
                           else DriverResources())
        for name in self._resources.pools:
            self.queue.add(name)

    async def start(self, timeout: float | None = None) -> None:
        """Start watching and syncing; returns once the informer has listed the slices."""
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name=f"resourceslices-{self.driver}")
        await self.informer.wait_synced(timeout)

    async def stop(self) -> None:
        if self._task is not None:
            await cancel_and_wait(self._task)
            self._task = None
        await self.informer.stop()

    async def __aenter__(self) -> ResourceSliceController:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def _run(self) -> None:
        """Sync until stopped; an informer that gave up is restarted (it lists again)."""
        backoff = 1.0
        while True:
            try:
                await run_informed([self.informer], self._work)
            except Exception as e:
                log.debug("ResourceSlice controller failure", exc_info=e)
                self._error(e, "watching ResourceSlices")
            await self.informer.stop()
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, 30.0)

    async def _work(self) -> None:
        await self.queue.run_workers(self._sync_reporting, 1)

    async def _sync_reporting(self, pool: str) -> None:
        try:
            await self.sync_pool(pool)
        except Exception as e:
            self._error(e, "processing ResourceSlice objects")
            raise  # the queue retries it with backoff

    # --- informer events ---------------------------------------------------------------

    def _later(self, slice_: v1.ResourceSlice) -> None:
        self.queue.add_after(slice_.spec.pool.name, self._sync_delay)

    def _on_add(self, obj: v1.ResourceSlice) -> None:
        self._written.observed(obj)
        self._later(obj)

    def _on_update(self, old: v1.ResourceSlice, new: v1.ResourceSlice) -> None:
        self._written.observed(new)
        self._later(old)
        if old.spec.pool.name != new.spec.pool.name:
            self._later(new)

    def _on_delete(self, obj: v1.ResourceSlice) -> None:
        self._written.forget(obj)
        self._later(obj)

    # --- one pool ----------------------------------------------------------------------

    def _current(self, pool: str) -> list[v1.ResourceSlice]:
        """The pool's slices as the informer shows them, with our own newer writes (and
        recent creates the informer does not show yet); by name, for a stable matching."""
        store = self.informer.store
        seen: list[v1.ResourceSlice] = []
        for cached in store.values():
            newest = self._written.newest(cached) or cached
            seen.append(newest)
        seen += self._written.added(store)
        return sorted((s for s in seen if s.spec.pool.name == pool),
                      key=lambda s: s.metadata.name or "")

    async def sync_pool(self, name: str) -> None:
        """Make the API show pool ``name`` as desired (upstream's ``syncPool``)."""
        started = time.monotonic()
        current = self._current(name)
        pool = self._resources.pools.get(name)
        if pool is None:
            await self._delete(current)
            return
        owner = await self._owner()

        generation = max((s.spec.pool.generation for s in current), default=0)
        obsolete = [s for s in current if s.spec.pool.generation < generation]
        matched = _match([s for s in current if s.spec.pool.generation >= generation],
                         pool.slices, obsolete)
        desired_pool = v1.ResourcePool(name=name, generation=generation,
                                       resource_slice_count=len(pool.slices))
        all_nodes = pool.node_selector is None and not self._node_name
        changed = {i for i, s in matched.items()
                   if _differs(s, desired_pool, pool, pool.slices[i], all_nodes)}
        new = len(pool.slices) - len(matched)
        if pool.generation > generation:
            generation, bumped = pool.generation, True
        elif new == 0 and len(changed) <= 1:
            bumped = False
        else:
            generation, bumped = generation + 1, True
        desired_pool.generation = generation

        # Obsolete slices go first: better to withdraw devices the driver no longer has,
        # even when the new ones cannot be published.
        await self._delete(obsolete)
        for i, existing in sorted(matched.items()):
            if i not in changed and not bumped:
                continue
            want = pool.slices[i]
            # the informer's copy stays as it is: a new object over its metadata, none of
            # its devices copied (the desired ones replace them)
            spec = msgspec.structs.replace(
                existing.spec, pool=msgspec.structs.replace(desired_pool),
                node_selector=pool.node_selector, all_nodes=True if all_nodes else None,
                shared_counters=want.shared_counters,
                per_device_node_selection=want.per_device_node_selection,
                devices=_keep_taint_times(existing.spec.devices, want.devices))
            updated = msgspec.structs.replace(existing, spec=spec)
            actual = await self.client.update(updated)
            self.stats.updates += 1
            log.debug("updated ResourceSlice %s of pool %s", actual.metadata.name, name)
            self._stored(name, pool, i, updated, actual)
        added = False
        for i, want in enumerate(pool.slices):
            if i in matched:
                continue
            created = v1.ResourceSlice(
                metadata=ObjectMeta(generate_name=self._generate_name(), owner_references=(
                    [OwnerReference(api_version=owner.api_version, kind=owner.kind,
                                    name=owner.name, uid=owner.uid, controller=True)]
                    if owner is not None else None)),
                spec=v1.ResourceSliceSpec(
                    driver=self.driver, pool=msgspec.structs.replace(desired_pool),
                    node_name=self._node_name or None, node_selector=pool.node_selector,
                    all_nodes=True if all_nodes else None, devices=want.devices,
                    shared_counters=want.shared_counters,
                    per_device_node_selection=want.per_device_node_selection))
            actual = await self.client.create(created)
            self.stats.creates += 1
            added = True
            log.debug("created ResourceSlice %s of pool %s", actual.metadata.name, name)
            self._stored(name, pool, i, created, actual)
        self._resync_after_adds(name, started, added)

    def _resync_after_adds(self, pool: str, started: float, added: bool) -> None:
        """A created slice counts as existing for the mutation cache's TTL even if someone
        deleted it meanwhile: sync the pool again once that has passed."""
        now = time.monotonic()
        if added:
            self._last_add[pool] = now
        elif pool in self._last_add and started > self._last_add[pool] + self._ttl:
            del self._last_add[pool]
        if pool in self._last_add:
            self.queue.add_after(pool, self._last_add[pool] + self._ttl - now)

    async def _owner(self) -> Owner | None:
        """The owner, with a Node's UID looked up once."""
        owner = self.owner
        if owner is not None and owner.is_node and not owner.uid:
            node = await self.client.get(Node, owner.name)
            owner = self.owner = dataclasses.replace(owner, uid=node.metadata.uid or "")
        return owner

    def _generate_name(self) -> str:
        prefix = f"{self.owner.name}-" if self.owner is not None else ""
        return f"{prefix}{self.driver}-"

    async def _delete(self, slices: Iterable[v1.ResourceSlice]) -> None:
        """Delete with UID and resourceVersion preconditions (a changed slice is synced
        again); one already gone is fine: the informer may not have shown that yet."""
        for s in slices:
            try:
                await self.client.delete(v1.ResourceSlice, s.metadata.name or "",
                                         uid=s.metadata.uid,
                                         resource_version=s.metadata.resource_version)
            except Exception as e:
                if not is_not_found(e):
                    raise
                continue
            self.stats.deletes += 1
            self._written.forget(s)
            log.debug("deleted obsolete ResourceSlice %s", s.metadata.name)

    def _stored(self, name: str, pool: Pool, index: int, sent: v1.ResourceSlice,
                actual: v1.ResourceSlice) -> None:
        """Remember what the server answered, and make the desired slice what the server
        keeps: its defaults (a taint's ``timeAdded``), and without fields it dropped (which
        is reported), so that the next sync does not update again and again."""
        self._written.wrote(actual)
        want, got = pool.slices[index], actual.spec
        if _devices_equal(want.devices, got.devices):
            want.devices = got.devices
        if (not _devices_equal(want.devices, got.devices)
                or not semantic_equal(want.shared_counters, got.shared_counters)
                or want.per_device_node_selection != got.per_device_node_selection):
            error = DroppedFieldsError(name, index, sent, actual)
            want.devices = got.devices
            want.shared_counters = got.shared_counters
            want.per_device_node_selection = got.per_device_node_selection
            self._error(error, "publishing ResourceSlice")


def _match(current: Sequence[v1.ResourceSlice], desired: Sequence[Slice],
           obsolete: list[v1.ResourceSlice]) -> dict[int, v1.ResourceSlice]:
    """Desired slice index -> the existing slice that becomes it; the rest is obsolete. One
    existing and one desired slice always match; otherwise their device names must."""
    if len(current) == 1 and len(desired) == 1:
        return {0: current[0]}
    matched: dict[int, v1.ResourceSlice] = {}
    for existing in current:
        names = [d.name for d in existing.spec.devices]
        for i, want in enumerate(desired):
            if i not in matched and len(want.devices) == len(names) and (
                    {d.name for d in want.devices} == set(names)):
                matched[i] = existing
                break
        else:
            obsolete.append(existing)
    return matched


def _differs(existing: v1.ResourceSlice, pool_ref: v1.ResourcePool, pool: Pool, want: Slice,
             all_nodes: bool) -> bool:
    spec = existing.spec
    return (spec.pool != pool_ref
            or not semantic_equal(spec.node_selector, pool.node_selector)
            or bool(spec.all_nodes) != all_nodes
            or not _devices_equal(spec.devices, want.devices)
            or not semantic_equal(spec.shared_counters, want.shared_counters)
            or spec.per_device_node_selection != want.per_device_node_selection)


def _devices_equal(a: Sequence[v1.Device], b: Sequence[v1.Device]) -> bool:
    """Semantic equality, except that a taint's ``timeAdded`` may be missing on one side
    and may differ by up to a second (the server stores whole seconds)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        tx, ty = x.taints or [], y.taints or []
        if len(tx) != len(ty) or not all(map(_taint_equal, tx, ty)):
            return False
        if not semantic_equal(msgspec.structs.replace(x, taints=None),
                              msgspec.structs.replace(y, taints=None)):
            return False
    return True


def _taint_equal(a: v1.DeviceTaint, b: v1.DeviceTaint) -> bool:
    if a.time_added is not None and b.time_added is not None:
        delta = _seconds(b.time_added) - _seconds(a.time_added)
        if abs(delta) > 1:
            return False
    return (a.key, a.value, a.effect) == (b.key, b.value, b.effect)


def _seconds(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def _keep_taint_times(old: Sequence[v1.Device], new: Sequence[v1.Device]) -> list[v1.Device]:
    """``new``, where a taint without ``timeAdded`` takes it from the same taint (key, value,
    effect) of the same device in ``old``: rewriting a slice must not restart its taints."""
    by_name = {d.name: d for d in old}
    out = []
    for device in new:
        before = by_name.get(device.name)
        if before is None or not device.taints or not before.taints:
            out.append(device)
            continue
        taints = []
        for taint in device.taints:
            same = next((t for t in before.taints if (t.key, t.value, t.effect)
                         == (taint.key, taint.value, taint.effect)), None)
            if taint.time_added is None and same is not None:
                taint = msgspec.structs.replace(taint, time_added=same.time_added)
            taints.append(taint)
        out.append(msgspec.structs.replace(device, taints=taints))
    return out


__all__ = ["DEFAULT_MUTATION_CACHE_TTL", "DEFAULT_SYNC_DELAY", "DriverResources",
           "DroppedFieldsError", "Owner", "Pool", "ResourceSliceController", "Slice", "Stats"]
