"""Building upstream's plugin test tables: nodes and pods as the ``st.MakeNode`` /
``st.MakePod`` rows describe them, a scheduler cache holding them, and one plugin run
through PreScore, Score and NormalizeScore (or PreFilter and Filter) as the framework does."""

from __future__ import annotations

from typing import Any

from kubedra.api.codec import decode
from kubedra.api.core import Node, Pod
from kubedra.scheduler.cache import SchedulerCache
from kubedra.scheduler.framework import Code, CycleState, NodeInfo, Status


def node(name: str, labels: dict[str, str] | None = None, cpu: str | None = None,
         memory: str | None = None, taints: list[dict[str, str]] | None = None) -> Node:
    capacity = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    return decode({"metadata": {"name": name, "labels": labels or {}},
                   "spec": {"taints": taints or []},
                   "status": {"capacity": capacity, "allocatable": capacity}}, Node)


_count = 0


def pod(on: str | None = None, labels: dict[str, str] | None = None, namespace: str = "",
        requests: list[dict[str, str]] | None = None, **spec: Any) -> Pod:
    """A pod (upstream's test pods have no namespace unless they say so); ``requests``: one
    container per entry; ``spec``: more pod spec fields, camelCase."""
    global _count
    _count += 1
    containers = [{"name": f"c{i}", "image": "x", "resources": {"requests": r}}
                  for i, r in enumerate(requests or [])]
    return decode({"metadata": {"name": f"p{_count}", "namespace": namespace,
                                "labels": labels or {}, "uid": f"u{_count}"},
                   "spec": {"nodeName": on, "containers": containers, **spec}}, Pod)


def cluster(nodes: list[Node], pods: list[Pod]) -> SchedulerCache:
    cache = SchedulerCache()
    for n in nodes:
        cache.set_node(n)
    for p in pods:
        cache.set_pod(p)
    return cache


def cycle(cache: SchedulerCache) -> CycleState:
    state = CycleState()
    state.nodes = cache.tally
    state.all_nodes = cache.node_infos()
    return state


def scores(plugin: Any, incoming: Pod, cache: SchedulerCache,
           feasible: list[str] | None = None) -> dict[str, int] | Code:
    """The plugin's normalised scores of the ``feasible`` nodes (default: all), or the
    PreScore code if it is not SUCCESS (e.g. SKIP)."""
    state = cycle(cache)
    nodes: list[NodeInfo] = [cache.nodes[n] for n in feasible or cache.node_names()]
    status: Status = plugin.pre_score(state, incoming, nodes)
    if not status.ok:
        return status.code
    raw = plugin.scores(state, incoming, nodes)
    if hasattr(plugin, "normalize_score"):
        plugin.normalize_score(state, incoming, nodes, raw)
    return {info.name: s for info, s in zip(nodes, raw, strict=True)}


def filtered(plugin: Any, incoming: Pod, cache: SchedulerCache) -> dict[str, str] | Code:
    """Per node the Filter's outcome: "" (fits) or the code and reason; or the PreFilter's
    code if it is not SUCCESS."""
    state = cycle(cache)
    status: Status = plugin.pre_filter(state, incoming)
    if not status.ok:
        return status.code
    out = {}
    for name in cache.node_names():
        s = plugin.filter(state, incoming, cache.nodes[name])
        out[name] = "" if s.ok else f"{s.code.value}: {s.message}"
    return out
