"""The scheduling framework: statuses, cycle state, node infos and the plugin interfaces.

It mirrors kube-scheduler's framework closely enough that upstream plugin tests (the
``alloc-plugin-structured.json`` vectors) can drive our plugins phase by phase: PreEnqueue,
PreFilter, Filter, PostFilter, PreScore, Score, NormalizeScore, Reserve, Unreserve, PreBind,
PostBind, plus the queue's event registration. Each stage is a Protocol; a :class:`Profile`
lists the plugins per stage.
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from kubedra.api.core import Node, Pod, ResourceList
from kubedra.scheduler.queue import ClusterEvent, Hint


class Code(enum.Enum):
    SUCCESS = "Success"
    ERROR = "Error"
    UNSCHEDULABLE = "Unschedulable"
    UNRESOLVABLE = "UnschedulableAndUnresolvable"
    WAIT = "Wait"
    SKIP = "Skip"
    PENDING = "Pending"


@dataclass(frozen=True, slots=True)
class Status:
    code: Code = Code.SUCCESS
    message: str = ""
    plugin: str = ""
    quiet: bool = False
    """A PreEnqueue rejection another component resolves in its normal course: the pod
    waits without being reported (see ``Scheduler._pre_enqueue``)."""

    @property
    def ok(self) -> bool:
        return self.code is Code.SUCCESS

    @property
    def rejected(self) -> bool:
        return self.code in (Code.UNSCHEDULABLE, Code.UNRESOLVABLE)


SUCCESS = Status()
SKIP = Status(Code.SKIP)


def unresolvable(message: str) -> Status:
    return Status(Code.UNRESOLVABLE, message)


def unschedulable(message: str) -> Status:
    return Status(Code.UNSCHEDULABLE, message)


def error(message: str) -> Status:
    return Status(Code.ERROR, message)


class CycleState(dict[str, Any]):
    """Per-pod scheduling-cycle data, keyed by plugin name; the attributes are the
    scheduler's own (when the cycle started, the profile it runs: plugins timed or not, the
    tally of the nodes it filters)."""

    started: float = 0.0
    profile: Profile
    profile_name: str = ""
    """The scheduler name of the profile (the ``profile`` label of the metrics)."""
    nodes: NodeTally | None = None
    """None: unknown, so no node plugin may skip its Filter for want of nodes to reject."""
    all_nodes: Sequence[NodeInfo] = ()
    """Every node with its pods (upstream's snapshot), for plugins that count pods across
    the cluster (topology spread, inter-pod affinity)."""
    kept: KeptScores | None = None
    """The nodes' kept scores (None: nothing is kept, every score is worked out)."""

    def requests(self, pod: Pod, non_zero: bool = False) -> Resources:
        """:func:`pod_requests` of the cycle's pod, summed once per cycle for the plugins
        that ask (NodeResourcesFit's PreFilter, both resource scores)."""
        key = _NON_ZERO_REQUESTS if non_zero else _REQUESTS
        found: tuple[Pod, Resources] | None = self.get(key)
        if found is None or found[0] is not pod:
            found = self[key] = (pod, pod_requests(pod, non_zero))
        return found[1]


_REQUESTS = "kubedra.io/pod-requests"
_NON_ZERO_REQUESTS = "kubedra.io/pod-requests-non-zero"


SCHEDULING_TAINT_EFFECTS = ("NoSchedule", "NoExecute")
"""The taint effects that keep a pod which does not tolerate them off a node."""


@dataclass
class NodeTally:
    """How many of the scheduler's nodes each node plugin could reject a pod on. Where a
    count is 0 the plugin's PreFilter answers SKIP: every node would pass its Filter, and
    the hot loop over the nodes runs one call fewer per node (the same outcome)."""

    unschedulable: int = 0
    tainted: int = 0
    """Nodes with a taint of a :data:`SCHEDULING_TAINT_EFFECTS` effect."""
    pods_full: int = 0
    """Nodes that hold as many pods as they allow."""
    prefer_tainted: int = 0
    """Nodes with a ``PreferNoSchedule`` taint (TaintToleration scores only where some are)."""
    affinity_pods: int = 0
    """Placed pods with pod affinity or anti-affinity terms (InterPodAffinity)."""
    anti_affinity_pods: int = 0
    """Placed pods with required anti-affinity terms (InterPodAffinity's Filter)."""

    def count(self, info: NodeInfo, sign: int) -> None:
        """Add (``sign`` 1) or take back (-1) what ``info`` contributes, as it is now."""
        spec = info.node.spec
        if spec.unschedulable:
            self.unschedulable += sign
        if any(t.effect in SCHEDULING_TAINT_EFFECTS for t in spec.taints or ()):
            self.tainted += sign
        if info.requested.pods >= info.allocatable.pods:
            self.pods_full += sign
        if any(t.effect == "PreferNoSchedule" for t in spec.taints or ()):
            self.prefer_tainted += sign
        if info.affinity_pods:
            self.affinity_pods += sign * len(info.affinity_pods)
            self.anti_affinity_pods += sign * sum(
                1 for p in info.affinity_pods.values() if required_anti_affinity(p))


def has_pod_affinity(pod: Pod) -> bool:
    """The pod has pod affinity or anti-affinity terms (upstream ``PodsWithAffinity``)."""
    affinity = pod.spec.affinity
    return affinity is not None and bool(affinity.pod_affinity or affinity.pod_anti_affinity)


def required_anti_affinity(pod: Pod) -> list[dict[str, Any]]:
    """The pod's required anti-affinity terms, raw (the API keeps them as JSON)."""
    affinity = pod.spec.affinity
    anti = affinity.pod_anti_affinity if affinity is not None else None
    return (anti or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or []


@dataclass
class Resources:
    milli_cpu: int = 0
    memory: int = 0
    pods: int = 0

    def add(self, other: Resources, sign: int = 1) -> None:
        self.milli_cpu += sign * other.milli_cpu
        self.memory += sign * other.memory
        self.pods += sign * other.pods


@dataclass(eq=False)
class NodeInfo:
    """A node with the pods assigned to it (bound or assumed) and their summed requests;
    equal only to itself (it keys :class:`KeptScores`' tables)."""

    node: Node
    name: str
    labels: dict[str, str]
    allocatable: Resources
    requested: Resources = field(default_factory=Resources)
    non_zero_requested: Resources = field(default_factory=Resources)
    """As ``requested``, counting 100m CPU and 200Mi memory where a container asks for none
    (upstream ``NodeInfo.NonZeroRequested``, used by LeastAllocated)."""
    pods: dict[str, Pod] = field(default_factory=dict)
    affinity_pods: dict[str, Pod] = field(default_factory=dict)
    """The placed pods with pod (anti-)affinity terms (upstream ``PodsWithAffinity``)."""


class KeptScores:
    """Scores that depend only on a node's requests and the pod's, one table per key (the
    scoring plugin and the pod's requests) from node to score: the pods of a template look
    their feasible nodes up in one table. A node's scores go when its requests or
    allocatable change (:meth:`forget`); the tables all go once :data:`MAX_KEYS` keys
    were seen."""

    MAX_KEYS = 64

    def __init__(self) -> None:
        self._tables: dict[object, dict[NodeInfo, int]] = {}

    def table(self, key: object) -> dict[NodeInfo, int]:
        found = self._tables.get(key)
        if found is None:
            if len(self._tables) >= self.MAX_KEYS:
                self._tables.clear()
            found = self._tables[key] = {}
        return found

    def forget(self, node: NodeInfo) -> None:
        for table in self._tables.values():
            table.pop(node, None)


@dataclass
class Diagnosis:
    """Why each node was rejected; formatted as upstream's FitError."""

    node_statuses: dict[str, Status] = field(default_factory=dict)
    unresolvable_plugins: set[str] = field(default_factory=set)
    pre_filter_message: str = ""
    post_filter_message: str = ""
    detail: str = ""
    """What upstream's counts do not say (a PostFilter plugin may fill it): the
    FailedScheduling event appends it, the condition and the log keep upstream's text."""


NOTE_LENGTH_LIMIT = 1024
"""Characters of an event message (upstream ``validation.NoteLengthLimit``)."""


def event_message(message: str, diagnosis: Diagnosis) -> str:
    """The FailedScheduling event's text: upstream's ``message``, then the detail, cut to
    :data:`NOTE_LENGTH_LIMIT` as upstream's ``truncateMessage`` does."""
    text = f"{message} {diagnosis.detail}" if diagnosis.detail else message
    if len(text) <= NOTE_LENGTH_LIMIT:
        return text
    return text[:NOTE_LENGTH_LIMIT - 4] + " ..."


def fit_error_message(num_nodes: int, diagnosis: Diagnosis) -> str:
    """``0/N nodes are available: <count> <reason>, .... [<postfilter message>.]`` as
    upstream's FitError."""
    if diagnosis.pre_filter_message:
        msg = f"0/{num_nodes} nodes are available: {diagnosis.pre_filter_message}."
    else:
        counts: dict[str, int] = {}
        for status in diagnosis.node_statuses.values():
            for reason in status.message.split("\n"):
                if reason:
                    counts[reason] = counts.get(reason, 0) + 1
        reasons = sorted(f"{n} {reason}" for reason, n in counts.items())
        msg = f"0/{num_nodes} nodes are available: {', '.join(reasons)}."
    if diagnosis.post_filter_message:
        msg += f" {diagnosis.post_filter_message}."
    return msg


# --- extension points ---------------------------------------------------------------------------
# One Protocol per stage (upstream framework/interface.go). A plugin takes part in a stage by
# being listed for it in the :class:`Profile`; mypy checks it has the stage's method.


class Plugin(Protocol):
    @property
    def name(self) -> str: ...


class PreEnqueuePlugin(Plugin, Protocol):
    def pre_enqueue(self, pod: Pod) -> Status:
        """Not SUCCESS: the pod waits until an event moves it (reported unless quiet)."""


class EnqueueExtensions(Plugin, Protocol):
    def events_to_register(self) -> list[tuple[ClusterEvent, Hint | None]]:
        """The cluster events that may make a pod this plugin rejected schedulable, each with
        its queueing hint (None: always requeue)."""


class PreFilterPlugin(Plugin, Protocol):
    def pre_filter(self, state: CycleState, pod: Pod) -> Status:
        """SKIP leaves the plugin out of Filter and Score for this pod."""


class FilterPlugin(Plugin, Protocol):
    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status: ...


class ShortlistPlugin(Plugin, Protocol):
    def shortlist(self, state: CycleState, pod: Pod) -> Collection[str] | None:
        """After PreFilter: names that include every node this plugin's Filter can pass
        (None: any node may). The scheduler passes over the others while it looks for
        feasible nodes, and filters them only when no node is feasible (the FitError
        names every node's reason), so the outcome is that of filtering every node."""


class PostFilterPlugin(Plugin, Protocol):
    async def post_filter(self, state: CycleState, pod: Pod, diagnosis: Diagnosis) -> Status:
        """Runs when no node fits; a SUCCESS ends the PostFilter stage."""


class PreScorePlugin(Plugin, Protocol):
    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        """Once per pod with the feasible nodes; SKIP leaves the plugin out of Score (it
        would give every node the same score)."""


class ScorePlugin(Plugin, Protocol):
    @property
    def weight(self) -> int: ...

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> int:
        """0..100 (before NormalizeScore), higher is better."""

    def scores(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[int]:
        """:meth:`score` of each of ``nodes``, in order: what the scheduler calls, once per
        pod and plugin, since a call per node costs more than most scores
        (:class:`NodeByNode` gives the plain loop)."""


class NodeByNode:
    """For a score plugin without a faster way: :meth:`ScorePlugin.scores` node by node."""

    def scores(self: ScorePlugin, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
               ) -> list[int]:
        score = self.score
        return [score(state, pod, node) for node in nodes]


class NormalizeScorePlugin(Plugin, Protocol):
    def normalize_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo],
                        scores: list[int]) -> None:
        """Rescale the plugin's raw scores of the feasible ``nodes`` (same order) to
        0..100, in place."""


class ReservePlugin(Plugin, Protocol):
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status: ...

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Undo :meth:`reserve` (in memory only; called in reverse order)."""


class AfterUnreservePlugin(Plugin, Protocol):
    async def after_unreserve(self, state: CycleState, pod: Pod) -> None:
        """kubedra only: the API half of Unreserve, awaited after every plugin's
        ``unreserve`` when binding failed (upstream does these writes inside Unreserve)."""


class PreBindPlugin(Plugin, Protocol):
    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status: ...


class PostBindPlugin(Plugin, Protocol):
    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None: ...


@dataclass(frozen=True)
class Profile:
    """Which plugins run at which extension point, in order (upstream's profile plugins)."""

    pre_enqueue: Sequence[PreEnqueuePlugin] = ()
    enqueue: Sequence[EnqueueExtensions] = ()
    pre_filter: Sequence[PreFilterPlugin] = ()
    filter: Sequence[FilterPlugin] = ()
    shortlist: Sequence[ShortlistPlugin] = ()
    post_filter: Sequence[PostFilterPlugin] = ()
    pre_score: Sequence[PreScorePlugin] = ()
    score: Sequence[ScorePlugin] = ()
    normalize_score: Sequence[NormalizeScorePlugin] = ()
    reserve: Sequence[ReservePlugin] = ()
    after_unreserve: Sequence[AfterUnreservePlugin] = ()
    pre_bind: Sequence[PreBindPlugin] = ()
    post_bind: Sequence[PostBindPlugin] = ()
    percentage_of_nodes_to_score: int | None = None
    """The profile's own setting (None: the scheduler's)."""


def feasible_nodes_to_find(num_nodes: int, percentage: int = 0) -> int:
    """How many feasible nodes to look for before stopping (upstream's adaptive
    percentageOfNodesToScore: 50% minus 1% per 125 nodes, at least 5%, at least 100 nodes)."""
    min_nodes = 100
    if num_nodes < min_nodes:
        return num_nodes
    if percentage <= 0:
        percentage = max(50 - num_nodes // 125, 5)
    return max(num_nodes * percentage // 100, min_nodes)


DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
"""What scoring counts for a container that requests no cpu / memory (upstream
``schedutil.DefaultMilliCPURequest`` / ``DefaultMemoryRequest``)."""


def pod_requests(pod: Pod, non_zero: bool = False) -> Resources:
    """Effective requests: sum over containers, at least the largest init container, plus
    overhead (upstream's resourcehelper.PodRequests for cpu and memory). ``non_zero``:
    a container without a cpu or memory request counts the defaults above (upstream's
    ``NonMissingContainerRequests``)."""
    total = Resources(pods=1)
    for c in pod.spec.containers or ():
        total.add(_container_requests(c.resources.requests, non_zero))
    for c in pod.spec.init_containers or ():
        r = _container_requests(c.resources.requests, non_zero)
        total.milli_cpu = max(total.milli_cpu, r.milli_cpu)
        total.memory = max(total.memory, r.memory)
    total.add(_container_requests(pod.spec.overhead, False))
    return total


def _container_requests(requests: ResourceList | None, non_zero: bool) -> Resources:
    cpu, mem = (requests.get("cpu"), requests.get("memory")) if requests else (None, None)
    default_cpu, default_mem = ((DEFAULT_MILLI_CPU_REQUEST, DEFAULT_MEMORY_REQUEST) if non_zero
                                else (0, 0))
    return Resources(milli_cpu=cpu.milli_value() if cpu is not None else default_cpu,
                     memory=mem.scaled_value(0) if mem is not None else default_mem)


def node_allocatable(node: Node) -> Resources:
    alloc = node.status.allocatable or node.status.capacity or {}
    cpu, mem, pods = alloc.get("cpu"), alloc.get("memory"), alloc.get("pods")
    return Resources(milli_cpu=cpu.milli_value() if cpu is not None else 0,
                     memory=mem.scaled_value(0) if mem is not None else 0,
                     pods=pods.scaled_value(0) if pods is not None else 110)
