"""The scheduler's node choice without a server, for ``kubedra simulate``/``explain``.

The simulation (:class:`kubedra.allocation.simulate.Simulator`) decides where a pod's claims
fit with the same engine as DynamicResources; :class:`ProfileChooser` plays the rest of a
scheduling cycle on those nodes with the same profile: the other plugins' PreFilter and
Filter in the scheduler's round-robin search (:class:`~.scheduler.NodeSearch`), the Score
plugins, and the seeded draw among the best (:func:`~.scheduler.select_host`). Placed pods
are assumed in its own cache, as the scheduler's are.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Iterable

from kubedra.allocation.packing import FreeCounts
from kubedra.allocation.simulate import Choice
from kubedra.api.core import Node, Pod
from kubedra.scheduler.cache import SchedulerCache
from kubedra.scheduler.config import DEFAULT_SCHEDULER_NAME, SchedulerConfig
from kubedra.scheduler.framework import Code, CycleState, Diagnosis
from kubedra.scheduler.plugins.dynamicresources import FREE_INSTANCES
from kubedra.scheduler.plugins.interpodaffinity import NamespaceLabels
from kubedra.scheduler.scheduler import NodeSearch, score_nodes, select_host
from kubedra.scheduler.setup import build_profile


class ProfileChooser:
    def __init__(self, config: SchedulerConfig, nodes: Iterable[Node], bound: Iterable[Pod], *,
                 seed: int | None = None, namespace_labels: NamespaceLabels | None = None
                 ) -> None:
        """``config``: the scheduler's profiles (a pod gets its ``schedulerName``'s);
        ``bound``: pods already on nodes (they count for resources, spreading and
        affinity); ``seed``: as the scheduler's ``--seed``."""
        self.profiles = {p.scheduler_name: build_profile(p, None, namespace_labels)
                         for p in config.profiles}
        self.cache = SchedulerCache()
        for node in nodes:
            self.cache.set_node(node)
        for pod in bound:
            self.cache.set_pod(pod)
        self.search = NodeSearch(config.percentage_of_nodes_to_score)
        self.rng = random.Random(seed)

    def choose(self, pod: Pod, fits: Collection[str],
               free: FreeCounts | None) -> Choice:
        name = pod.spec.scheduler_name or DEFAULT_SCHEDULER_NAME
        profile = self.profiles.get(name)
        if profile is None:
            return Choice(None, {n: f"no scheduler profile {name!r}" for n in fits})
        state = CycleState()
        state.profile, state.nodes, state.kept = profile, self.cache.tally, self.cache.kept
        state.all_nodes = self.cache.node_infos()
        if free is not None:
            state[FREE_INSTANCES] = free
        diagnosis, rejectors = Diagnosis(), set[str]()
        skipped: set[str] = set()
        for plugin in profile.pre_filter:
            status = plugin.pre_filter(state, pod)
            if status.code is Code.SKIP:
                skipped.add(plugin.name)
            elif not status.ok:
                return Choice(None, {n: status.message for n in fits})
        filters = [p for p in profile.filter if p.name not in skipped]
        found = self.search.find(state.all_nodes, state, pod, filters, diagnosis, rejectors,
                                 set(fits), profile.percentage_of_nodes_to_score)
        feasible = [info for info in found if info.name in fits]
        reasons = {n: s.message for n, s in diagnosis.node_statuses.items() if n in fits}
        if not feasible:
            return Choice(None, reasons)
        table = score_nodes(state, pod, feasible)
        node = select_host(self.rng, feasible, table)
        scores = {info.name: {plugin: column[i] for plugin, column in table.items()}
                  for i, info in enumerate(feasible)}
        return Choice(node.name, reasons, scores)

    def placed(self, pod: Pod, node: str) -> None:
        self.cache.assume(pod, node)
