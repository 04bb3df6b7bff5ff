"""The node's own objects: registering its Node (capacity, labels, taints, a Ready condition)
and keeping it alive with a Lease in ``kube-node-lease`` renewed every 10 s (upstream
pkg/kubelet/kubelet_node_status.go and pkg/kubelet/nodelease). A restarted agent reuses the
Node that already exists (its uid, hence the ResourceSlices' owner, stays the same) and posts
its status (Ready) at once; so does an agent whose heartbeat stalled, as the node lifecycle
controller may have marked its Node Unknown meanwhile.

The Lease says which agent holds the Node (:mod:`kubedra.kubelet.holder`): an agent refuses a
Node whose Lease another holder still renews, at start and whenever it finds the Lease changed.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import logging
import platform
import time
from dataclasses import dataclass, field

import msgspec

from kubedra.api.coordination import Lease, LeaseSpec
from kubedra.api.core import (
    LABEL_HOSTNAME,
    Node,
    NodeAddress,
    NodeCondition,
    NodeSpec,
    NodeStatus,
    NodeSystemInfo,
    Taint,
)
from kubedra.api.meta import ObjectMeta, OwnerReference
from kubedra.api.quantity import Quantity
from kubedra.client.errors import ApiError, is_already_exists, is_not_found
from kubedra.client.rest import Client

log = logging.getLogger(__name__)

LEASE_NAMESPACE = "kube-node-lease"
LEASE_DURATION = 40
RENEW_INTERVAL = 10.0
STATUS_INTERVAL = 60.0
KUBELET_VERSION = "v1.30.0"


def now(micro: bool = False) -> str:
    fmt = "%Y-%m-%dT%H:%M:%S.%fZ" if micro else "%Y-%m-%dT%H:%M:%SZ"
    return datetime.datetime.now(datetime.UTC).strftime(fmt)


def _arch() -> str:
    machine = platform.machine().lower()
    return {"x86_64": "amd64", "aarch64": "arm64"}.get(machine, machine)


@dataclass
class NodeConfig:
    name: str
    cpu: str = "4"
    memory: str = "32Gi"
    pods: str = "110"
    labels: dict[str, str] = field(default_factory=dict)
    taints: list[Taint] = field(default_factory=list)
    address: str = "127.0.0.1"
    lease_holder: str = ""
    """The Lease's holderIdentity (default: the node name, as upstream's kubelet)."""
    kubelet_version: str = KUBELET_VERSION
    """``status.nodeInfo.kubeletVersion``: the release of the server the agent found."""
    kubelet_port: int = 0
    """Where the agent serves ``/containerLogs`` (``status.daemonEndpoints``); 0: nowhere."""

    @property
    def holder(self) -> str:
        return self.lease_holder or self.name

    def all_labels(self) -> dict[str, str]:
        return {LABEL_HOSTNAME: self.name, "kubernetes.io/os": "linux",
                "kubernetes.io/arch": _arch(), **self.labels}


class NodeClaimed(Exception):
    """The Node's Lease is held, and still renewed, by another agent."""


def _seconds(stamp: str) -> float:
    return datetime.datetime.fromisoformat(stamp).timestamp()


def _conditions(previous: list[NodeCondition] | None) -> list[NodeCondition]:
    """The kubelet's four health conditions, keeping transition times that did not change."""
    stamp = now()
    old = {c.type: c for c in previous or ()}
    wanted = [("MemoryPressure", "False", "KubeletHasSufficientMemory",
               "kubelet has sufficient memory available"),
              ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
              ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID "
               "available"),
              ("Ready", "True", "KubeletReady", "kubelet is posting ready status")]
    out = []
    for type_, status, reason, message in wanted:
        prev = old.get(type_)
        since = prev.last_transition_time if prev and prev.status == status else stamp
        out.append(NodeCondition(type=type_, status=status, reason=reason, message=message,
                                 last_heartbeat_time=stamp, last_transition_time=since))
    return out


class NodeAgentNode:
    """Holds the current Node object; :meth:`register` first, then :meth:`run` heartbeats."""

    def __init__(self, client: Client, config: NodeConfig) -> None:
        self.client = client
        self.config = config
        self.node: Node | None = None
        self.lease: Lease | None = None
        """The Lease as last written: renewed from it without a GET, as upstream's lease
        controller does (nobody else writes a node's Lease)."""

    def get(self) -> Node:
        if self.node is None:
            raise RuntimeError("the node is not registered yet")
        return self.node

    def _status(self, previous: NodeStatus | None) -> NodeStatus:
        cfg = self.config
        capacity = {"cpu": Quantity.parse(cfg.cpu), "memory": Quantity.parse(cfg.memory),
                    "pods": Quantity.parse(cfg.pods)}
        return NodeStatus(
            capacity=capacity, allocatable=dict(capacity),
            conditions=_conditions(previous.conditions if previous else None),
            addresses=[NodeAddress(type="InternalIP", address=cfg.address),
                       NodeAddress(type="Hostname", address=cfg.name)],
            daemon_endpoints={"kubeletEndpoint": {"Port": cfg.kubelet_port}},
            node_info=NodeSystemInfo(kubelet_version=cfg.kubelet_version,
                                     kube_proxy_version=cfg.kubelet_version,
                                     operating_system="linux", architecture=_arch(),
                                     container_runtime_version="kubedra://simulated",
                                     os_image="kubedra simulated node",
                                     kernel_version=platform.release()))

    def check_holder(self, lease: Lease) -> None:
        """Raise :class:`NodeClaimed` if ``lease`` is another holder's and not expired (on
        this machine's clock)."""
        spec = lease.spec
        holder = spec.holder_identity
        if not holder or holder == self.config.holder or not spec.renew_time:
            return
        until = _seconds(spec.renew_time) + (spec.lease_duration_seconds or 0)
        if until > time.time():
            name = self.config.name
            expiry = datetime.datetime.fromtimestamp(until, datetime.UTC)
            raise NodeClaimed(
                f"node {name} is already run by another node agent: its Lease "
                f"{LEASE_NAMESPACE}/{name} is held by {holder!r} and renewed until "
                f"{expiry:%Y-%m-%dT%H:%M:%SZ}; stop that agent, or give this one another "
                f"--node-name")

    async def register(self) -> Node:
        """Create the Node, or adopt the existing one (labels merged, status refreshed), and
        take its Lease; refuse (:class:`NodeClaimed`) a Node another live agent holds."""
        cfg = self.config
        with contextlib.suppress(ApiError):  # no Lease yet (or unreadable: renewing tells)
            self.check_holder(await self.client.get(Lease, cfg.name, LEASE_NAMESPACE))
        node = Node(api_version="v1", kind="Node",
                    metadata=ObjectMeta(name=cfg.name, labels=cfg.all_labels()),
                    spec=NodeSpec(taints=list(cfg.taints) or None),
                    status=self._status(None))
        try:
            created = await self.client.create(node)
            self.node = await self.client.update_status(
                msgspec.structs.replace(created, status=node.status))
            log.info("registered node %s", cfg.name)
        except ApiError as e:
            if not is_already_exists(e):
                raise
            existing = await self.client.get(Node, cfg.name)
            labels = {**(existing.metadata.labels or {}), **cfg.all_labels()}
            if labels != existing.metadata.labels:
                existing = await self.client.update(msgspec.structs.replace(
                    existing, metadata=msgspec.structs.replace(existing.metadata,
                                                               labels=labels)))
            self.node = existing
            await self.update_status()
            log.info("reusing existing node %s", cfg.name)
        await self.renew_lease()
        return self.get()

    async def update_status(self) -> None:
        node = await self.client.get(Node, self.config.name)
        self.node = await self.client.update_status(
            msgspec.structs.replace(node, status=self._status(node.status)))

    async def renew_lease(self) -> None:
        node = self.get()
        name = self.config.name
        spec = LeaseSpec(holder_identity=self.config.holder,
                         lease_duration_seconds=LEASE_DURATION,
                         renew_time=now(micro=True))
        if self.lease is not None:
            try:
                self.lease = await self.client.update(msgspec.structs.replace(self.lease,
                                                                              spec=spec))
                return
            except ApiError as e:
                log.info("renewing the lease of node %s from the last one failed (%s); "
                         "reading it again", name, e)
                self.lease = None
        try:
            lease = await self.client.get(Lease, name, LEASE_NAMESPACE)
        except ApiError as e:
            if not is_not_found(e):
                raise
            owner = OwnerReference(api_version="v1", kind="Node", name=name,
                                   uid=node.metadata.uid or "")
            self.lease = await self.client.create(Lease(
                api_version="coordination.k8s.io/v1", kind="Lease",
                metadata=ObjectMeta(name=name, namespace=LEASE_NAMESPACE,
                                    owner_references=[owner]), spec=spec))
            return
        self.check_holder(lease)
        self.lease = await self.client.update(msgspec.structs.replace(lease, spec=spec))

    async def run(self) -> None:
        """Renew the Lease every 10 s and post the status every minute (the Lease is the
        heartbeat), and at once after a beat was missed; failures are logged and retried on
        the next beat, so an unreachable API server never stops the agent. Another agent
        holding the Lease does (:class:`NodeClaimed`)."""
        last_status = last_renewed = time.monotonic()
        while True:
            try:
                await self.renew_lease()
                beat = time.monotonic()
                stalled = beat - last_renewed > 2 * RENEW_INTERVAL
                last_renewed = beat
                if stalled or beat - last_status >= STATUS_INTERVAL:
                    await self.update_status()
                    last_status = time.monotonic()
            except NodeClaimed:
                raise
            except Exception as e:
                log.warning("node %s heartbeat failed: %s", self.config.name, e)
            await asyncio.sleep(RENEW_INTERVAL)
