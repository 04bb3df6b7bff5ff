"""One node agent: the Node and its Lease, plugin discovery, ResourceSlices, the claim
manager with its checkpoint, and a pod worker per pod bound to the node. Several agents can
share one process and event loop (each with its own root dir, sockets and Lease).

The release the API server emulates decides the node side's era: 1.30 negotiates semver
versions, speaks v1alpha3 (v1alpha2 as fallback), publishes ResourceSlices from the drivers'
streams and keeps v1.30's checkpoint; 1.34 chooses a gRPC service at registration
(``v1.DRAPlugin``, ``v1beta1.DRAPlugin``), sends claim references, leaves publishing to the
drivers and wipes what a gone driver left (``slicewipe``), and keeps the 1.34 checkpoint
(``devicestate``).

At start the agent locks its root dir and takes its Node's Lease under the root dir's holder
identity (:mod:`kubedra.kubelet.holder`), refusing a Node another live agent holds. The
checkpoint is read; claims of pods that are gone or finished are unprepared once
the pod list is known, so a claim released while the agent was down is not forgotten.
"""

from __future__ import annotations

import asyncio
import logging
import os
import ssl
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from kubedra.api.core import Pod
from kubedra.api.release import R1_30, Release
from kubedra.client.errors import ApiError
from kubedra.client.events import EventRecorder
from kubedra.client.informer import Informer, object_key
from kubedra.client.rest import Client
from kubedra.kubelet.cdi import CDISpecs
from kubedra.kubelet.checkpoint import CheckpointState
from kubedra.kubelet.containerlogs import ContainerLogs
from kubedra.kubelet.containertext import Console
from kubedra.kubelet.devicestate import ClaimStates, DeviceCheckpoint
from kubedra.kubelet.draclient.devices import SERVICES, DevicesClient
from kubedra.kubelet.holder import holder_identity, lock_root_dir
from kubedra.kubelet.ledger import DriverClient
from kubedra.kubelet.logserver import LogServer
from kubedra.kubelet.manager import ClaimManager
from kubedra.kubelet.node import NodeAgentNode, NodeClaimed, NodeConfig
from kubedra.kubelet.noderesources import NodeResourcesController
from kubedra.kubelet.pluginmanager import PluginManager
from kubedra.kubelet.plugins import Plugin, PluginStore
from kubedra.kubelet.podworker import PodWorker
from kubedra.kubelet.registration import DraClient, register_socket
from kubedra.kubelet.slicewipe import WIPING_DELAY, SliceWiper
from kubedra.tasks import cancel_and_wait

log = logging.getLogger(__name__)

REGISTRY_DIR = "plugins_registry"
#: Where containers' CDI specs are read from: a runtime's defaults (``/etc/cdi``, then
#: ``/var/run/cdi``, which wins), then the node's own ``ROOT/cdi`` (the example drivers').
RUNTIME_CDI_DIRS = (Path("/etc/cdi"), Path("/var/run/cdi"))
CDI_DIR = "cdi"
REGISTER_RETRY = 1.0
WORKER_RETRY = 1.0


def bound_pods(client: Client) -> Informer[Pod]:
    """One informer of every pod bound to a node, for the agents of one process to share
    (``kubedra node-pool``): the API server then serves one watch instead of one filtered
    watch per node."""
    return Informer(client, Pod, field_selector="spec.nodeName!=")


class NodeAgent:
    def __init__(self, client: Client, config: NodeConfig, root_dir: Path,
                 pods: Informer[Pod] | None = None, dra: bool = True,
                 release: Release = R1_30, serving: ssl.SSLContext | None = None,
                 wiping_delay: float = WIPING_DELAY) -> None:
        """``pods``: a :func:`bound_pods` informer shared with other agents of the process
        (its owner runs and stops it); by default the agent watches its own pods
        (``spec.nodeName=<node>``), as the kubelet does. ``dra=False`` (a server without the
        DRA version of ``release``): no driver registration and no ResourceSlices.
        ``serving``: TLS with the node's serving certificate, for the containers' logs
        (``/containerLogs``, its port in the Node's ``status.daemonEndpoints``); without it
        no output is kept. ``wiping_delay``: how long a 1.34 driver may stay unregistered
        before its slices of the node are deleted."""
        self.client = client
        self.dra = dra
        self.config = config
        self.root_dir = root_dir
        self.node = NodeAgentNode(client, config)
        self.resources: NodeResourcesController | None = None
        self.wiper: SliceWiper | None = None
        if release is R1_30:
            self.store = PluginStore(self._registered, self._deregistered)
            self.claims = ClaimManager(client, CheckpointState(root_dir), self._driver)
        else:
            self.store = PluginStore(self._registered, self._deregistered, tuple(SERVICES))
            self.claims = ClaimManager(client, DeviceCheckpoint(root_dir), self._driver,
                                       ClaimStates)
            self.wiper = SliceWiper(client, config.name, wiping_delay)
        self.plugins = PluginManager(root_dir / REGISTRY_DIR, self.store, register_socket)
        self.events = EventRecorder(client, "kubelet")
        self._owns_pods = pods is None
        self._running = False
        self.pods: Informer[Pod] = pods if pods is not None else Informer(
            client, Pod, field_selector=f"spec.nodeName={config.name}")
        self.pods.add_handler(on_add=self._pod_changed,
                              on_update=lambda _old, new: self._pod_changed(new),
                              on_delete=self._pod_deleted)
        self.console: Console | None = None
        self.log_server: LogServer | None = None
        if serving is not None:
            cdi = CDISpecs([*RUNTIME_CDI_DIRS, root_dir / CDI_DIR])
            self.console = Console(ContainerLogs(root_dir), cdi)
            self.log_server = LogServer(self.console.logs, self._pod_named, serving,
                                        config.address)
        self._workers: dict[str, tuple[PodWorker, asyncio.Task[None]]] = {}
        self._cleanups: set[asyncio.Task[None]] = set()
        self.ready = asyncio.Event()

    # -- drivers ---------------------------------------------------------------------------

    def _driver(self, name: str) -> DriverClient:
        client: DriverClient = self.store.get(name).connection
        return client

    def _registered(self, plugin: Plugin) -> None:
        """The adapter of the service chosen at registration (1.30: v1alpha3 with its
        v1alpha2 fallback, and the driver's resources stream)."""
        if plugin.service:
            plugin.connection = DevicesClient(plugin)
            if self.wiper is not None:
                self.wiper.add_plugin(plugin.name)
            return
        client = DraClient(plugin)
        plugin.connection = client
        if self.resources is not None:
            self.resources.add_plugin(plugin.name, client)

    def _deregistered(self, plugin: Plugin, last: bool) -> None:
        """``last``: the driver has no registration left (1.34 drivers may have several)."""
        if last and self.resources is not None:
            self.resources.remove_plugin(plugin.name)
        if last and self.wiper is not None:
            self.wiper.remove_plugin(plugin.name)
        if plugin.connection is not None:
            self._background(plugin.connection.close(), f"close {plugin.name}")

    def _background(self, work: Coroutine[Any, Any, None], name: str) -> None:
        task = asyncio.create_task(work, name=name)
        self._cleanups.add(task)
        task.add_done_callback(self._cleanups.discard)

    # -- pods --------------------------------------------------------------------------------

    def _on_node(self, pod: Pod) -> bool:
        """Bound here, and the agent is running (a shared informer may deliver pods before
        this agent registered its Node; :meth:`run` replays them)."""
        return self._running and pod.spec.node_name == self.config.name

    def _pod_changed(self, pod: Pod) -> None:
        if not self._on_node(pod):
            return
        uid = pod.metadata.uid or ""
        entry = self._workers.get(uid)
        if entry is not None and not (entry[1].done() and pod.metadata.deletion_timestamp):
            entry[0].notify()
            return
        key = object_key(pod)
        worker = PodWorker(self.client, self.claims, self.events, self.config.address,
                           lambda: self._current(key, uid), self.console)
        task = asyncio.create_task(self._run_worker(worker, uid), name=f"pod {key}")
        self._workers[uid] = (worker, task)

    def _pod_named(self, namespace: str, name: str) -> Pod | None:
        """The pod as this node runs it (the log server's ``GetPodByName``)."""
        pod = self.pods.store.get(f"{namespace}/{name}")
        return pod if pod is not None and self._on_node(pod) else None

    def _current(self, key: str, uid: str) -> Pod | None:
        pod = self.pods.store.get(key)
        return pod if pod is not None and pod.metadata.uid == uid and self._on_node(pod) else None

    async def _run_worker(self, worker: PodWorker, uid: str) -> None:
        """A failing step (say, the API server away) is logged and the worker started again:
        claims already prepared are not prepared twice and the run resumes from the status."""
        while True:
            try:
                await worker.run()
                return
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("pod worker for %s failed; restarting it", uid)
            await asyncio.sleep(WORKER_RETRY)
            if worker.current() is None:
                return

    def _pod_deleted(self, pod: Pod) -> None:
        if not self._on_node(pod):
            return
        uid = pod.metadata.uid or ""
        entry = self._workers.pop(uid, None)
        if entry is not None:
            entry[1].cancel()
        if self.console is not None:
            self.console.logs.remove(pod)
        self._release(uid)

    def _release(self, uid: str) -> None:
        """Unprepare what a vanished pod used, retrying until the drivers agree."""
        if uid not in self.claims.pod_uids():
            return
        worker = PodWorker(self.client, self.claims, self.events, self.config.address,
                           lambda: None)
        self._background(worker.unprepare(uid), f"release {uid}")

    def _release_orphans(self) -> None:
        """After a restart: claims whose pods are no longer on this node."""
        live = {p.metadata.uid or "" for p in self.pods.list() if self._on_node(p)}
        if self.console is not None:
            self.console.logs.prune(live)
        for uid in self.claims.pod_uids() - live:
            log.info("pod %s is gone; unpreparing its claims", uid)
            self._release(uid)

    # -- the whole -------------------------------------------------------------------------

    async def _register_node(self) -> None:
        """Retry until the API server takes the Node; a Node it refuses (bad labels, taints)
        is an error the operator must fix, so it ends the agent."""
        while True:
            try:
                await self.node.register()
                return
            except Exception as e:
                if isinstance(e, NodeClaimed) or (isinstance(e, ApiError)
                                                  and e.code in (400, 403, 422)):
                    raise
                log.warning("registering node %s failed (retrying): %s", self.config.name, e)
            await asyncio.sleep(REGISTER_RETRY)

    async def run(self) -> None:
        """Raises :class:`~kubedra.kubelet.holder.RootDirInUse` or
        :class:`~kubedra.kubelet.node.NodeClaimed` when another agent runs this root dir or
        this Node."""
        lock = lock_root_dir(self.root_dir)
        try:
            self.config.lease_holder = holder_identity(self.root_dir, self.config.name)
            await self._run()
        finally:
            os.close(lock)

    async def _run(self) -> None:
        if self.log_server is not None:
            self.config.kubelet_port = await self.log_server.start()
        try:
            await self._serve()
        finally:
            if self.log_server is not None:
                await self.log_server.stop()

    async def _serve(self) -> None:
        await self._register_node()
        loops = [self.node.run()]
        if self.dra and self.wiper is not None:
            loops += [self.wiper.run(), self._plugins_after_wipe(self.wiper)]
        elif self.dra:
            self.resources = NodeResourcesController(self.client, self.node.get)
            loops += [self.resources.run(), self.plugins.run()]
        tasks = [asyncio.create_task(coro) for coro in loops]
        tasks.append(self.pods.start())  # a shared informer starts once, for every agent
        self._running = True
        for pod in self.pods.list():  # what a shared informer delivered before we ran
            self._pod_changed(pod)
        try:
            await self.pods.wait_synced()
            self._release_orphans()
            self.ready.set()
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for t in done:
                t.result()  # a loop that ended is a bug: surface it so the process exits
            raise RuntimeError(f"node agent {self.config.name}: a control loop ended")
        finally:
            if not self._owns_pods:
                tasks.pop()  # the owner of a shared informer stops it
            await cancel_and_wait(*tasks, *(task for _, task in self._workers.values()),
                                  *self._cleanups, ignore=(Exception,))
            for plugin in self.store.plugins():
                if plugin.connection is not None:
                    await plugin.connection.close()

    async def _plugins_after_wipe(self, wiper: SliceWiper) -> None:
        """Drivers register once the start-up wipe is done, so it never takes what they
        publish."""
        await wiper.wiped.wait()
        await self.plugins.run()
