"""Why a pod's structured claims fit a node or not: per request, per instance, the class filter
and selector verdicts, who holds the instance, and what this pod would get.

Built from the same caches the allocator uses (no extra CEL work for verdicts already known),
returned as plain data (:func:`to_data`); ``kubedra explain`` renders it as a table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from kubedra.allocation.engine import NodeVerdict, PodAllocator
from kubedra.allocation.instance import Verdict
from kubedra.allocation.matching import assign
from kubedra.allocation.selectors import Selector
from kubedra.api.meta import kobj
from kubedra.api.resource.v1alpha2 import ResourceClaim


@dataclass
class InstanceLine:
    instance: str
    slice: str
    filter: str  # pass | fail | "error: ..." | "-" (no class filter)
    selector: str  # pass | fail | "error: ..." | "-" (not evaluated: filter failed)
    held_by: str | None  # claim (namespace/name) whose allocation holds it
    reserved_for: list[str]  # pods (namespace/name) using that claim
    chosen: bool  # assigned to this request
    chosen_for: str | None = None  # assigned to another request of this pod (claim#request)


@dataclass
class RequestLine:
    claim: str
    driver: str
    request: int
    selector: str
    filter: str | None
    instances: list[InstanceLine] = field(default_factory=list)
    assigned: str | None = None


@dataclass
class NodeExplanation:
    node: str
    suitable: bool
    reason: str
    requests: list[RequestLine] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    why: str = ""
    """For a node the allocator rejects: its first failing check (:func:`first_failure`)."""


class NodeAnswer(Protocol):
    """One node's explanation, of either claims model (:class:`NodeExplanation`, or the
    devices model's ``DeviceNodeExplanation``)."""

    node: str
    suitable: bool
    reason: str
    why: str


@dataclass
class PodExplanation:
    pod: str
    claims: list[str]
    nodes: Sequence[NodeAnswer]
    result: str
    subject: str = "pod"
    """What ``pod`` names: a pod, or a claim explained on its own."""
    scores: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per node, each score plugin's weighted score (when the scheduler's profile is used)."""


TOGETHER = "each claim fits alone, but not all of them together"
"""The first failure when no claim fails alone (both models)."""


def request_label(claim: str, request: int) -> str:
    """How the table and the reasons name a claim's request: ``namespace/claim#index``."""
    return f"{claim}#{request}"


def _word(v: Verdict) -> str:
    if isinstance(v, str):
        return f"error: {v}"
    return "pass" if v else "fail"


def explain_node(allocator: PodAllocator, verdict: NodeVerdict) -> NodeExplanation:
    """Per-request instance table for ``verdict.node``."""
    node = verdict.node
    index = allocator.index
    out = NodeExplanation(node, verdict.ok, verdict.reason)
    for driver, reqs in allocator.requests.items():
        pool = index.pool(node, driver)
        chosen = verdict.assignment.get(driver, [])
        labels = [request_label(allocator.plans[o].name, r.index)
                  for o, r in zip(allocator.owners[driver], reqs, strict=True)]
        taken = dict(zip(chosen, labels, strict=False))
        for k, req in enumerate(reqs):
            filt: Selector | None = req.filter
            line = RequestLine(
                claim=allocator.plans[allocator.owners[driver][k]].name,
                driver=driver,
                request=req.index,
                selector=req.selector.expression,
                filter=filt.expression if filt is not None else None,
            )
            if pool is None:
                out.requests.append(line)
                continue
            for pos, inst in enumerate(pool.instances):
                fv: Verdict = True if filt is None else filt.verdict(inst)
                sv = req.selector.verdict(inst) if fv is True else None
                mine = k < len(chosen) and chosen[k] == pos
                holder = None if (pool.free >> pos) & 1 else index.holder_of(pool, pos)
                line.instances.append(
                    InstanceLine(
                        instance=inst.name,
                        slice=inst.slice_name,
                        filter="-" if filt is None else _word(fv),
                        selector="-" if sv is None else _word(sv),
                        held_by=_name(holder),
                        reserved_for=_users(holder),
                        chosen=mine,
                        chosen_for=None if mine else taken.get(pos),
                    )
                )
                if mine:
                    line.assigned = inst.name
            out.requests.append(line)
    dups = [n for d in allocator.requests if (p := index.pool(node, d)) for n in p.duplicates]
    out.notes += [f"duplicate instance name {n!r} on this node" for n in dups]
    return out


def first_failure(allocator: PodAllocator, node: str) -> str:
    """Why the pod's claims cannot be allocated on ``node``, in one line: the first claim
    (pod order) that fails alone and its first request (``claim#request``, as the table
    names it) that no free instance can serve, saying whether the driver has no free
    instance there, the class filter admits none of them, or the request's selector matches
    none of those; "" when the node is suitable or its reason already says it all (a CEL
    error)."""
    verdict = allocator.filter(node)
    if verdict.ok or verdict.error is not None:
        return ""
    if verdict.claim is None:
        return TOGETHER
    plan = allocator.plans[verdict.claim]
    for driver in sorted(plan.drivers):
        reqs = plan.drivers[driver]
        pool = allocator.index.pool(node, driver)
        if pool is None:
            return f'{plan.name}: the node has no instances of driver "{driver}"'
        free = pool.free
        if not free:
            return f'{plan.name}: every instance of driver "{driver}" is allocated'
        for r in reqs:
            label = request_label(plan.name, r.index)
            if r.filter is not None and not pool.matching(None, r.filter, free).ok & free:
                return (f"{label}: the class filter `{r.filter.expression}` admits none of "
                        f'the free instances of driver "{driver}"')
            if not pool.matching(r.filter, r.selector, free).ok & free:
                return (f"{label}: the selector `{r.selector.expression}` matches none of "
                        f'the free instances of driver "{driver}" the class admits')
        if assign(allocator.candidates(pool, reqs)) is None:
            return (f"{plan.name}: too few free instances of driver \"{driver}\" match "
                    f"its {len(reqs)} requests")
    return ""


def _name(claim: ResourceClaim | None) -> str | None:
    return None if claim is None else kobj(claim.metadata.namespace, claim.metadata.name)


def _users(claim: ResourceClaim | None) -> list[str]:
    if claim is None:
        return []
    ns = claim.metadata.namespace
    return [kobj(ns, r.name) for r in claim.status.reserved_for or () if r.resource == "pods"]


def to_data(explanation: PodExplanation) -> dict[str, Any]:
    return asdict(explanation)
