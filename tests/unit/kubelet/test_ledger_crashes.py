"""Crash points of the claim ledger, as a property: pods start and end on a node (their claims
prepared and unprepared by two drivers, some claims shared, some handled by both drivers), the
agent dies at some point (before a checkpoint write, after it, or after a driver's answer),
some pods are deleted while it is down, and a new manager is built from the checkpoint file and
settles as the restarted agent does (prepare for the pods still there, release the others, all
at once). Then every claim is prepared, on each of its drivers, exactly when a pod on the node
needs it; the checkpoint says the same; a claim the checkpoint confirmed is not prepared again;
no claim is unprepared twice; and settling again calls no driver. The rule is the ledger's,
so it holds for both eras' checkpoint formats (v1.30's ``dra_manager_state`` and 1.34's
``DRACheckpoint``)."""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubedra.api import codec
from kubedra.api.resource import v1
from kubedra.api.resource.v1alpha2 import ResourceClaim
from kubedra.kubelet.checkpoint import CheckpointState
from kubedra.kubelet.devicestate import ClaimStates, DeviceCheckpoint
from kubedra.kubelet.ledger import ClaimResult
from kubedra.kubelet.manager import ClaimInfos, ClaimManager
from tests.unit.kubelet.test_manager import FakeApi, pod

DRIVERS = ("a.example.com", "b.example.com")
CRASHES = ("before write", "after write", "after answer")


class Crash(Exception):
    """The agent's process dies here."""


@dataclass
class Gate:
    """One agent process's life: after its crash, nothing it started has any effect."""

    kind: str
    at: int
    seen: int = 0
    dead: bool = False

    def step(self, kind: str) -> bool:
        """True when this step is the crash point (counting the steps of its kind)."""
        if self.dead:
            raise Crash("already dead")
        if kind != self.kind:
            return False
        self.seen += 1
        if self.seen == self.at:
            self.dead = True
        return self.dead


class Gated:
    """A checkpoint whose writes are crash points."""

    gate: Gate

    def store(self, entries: Any) -> None:
        if self.gate.step("before write"):
            raise Crash("before write")
        super().store(entries)  # type: ignore[misc]
        if self.gate.step("after write"):
            raise Crash("after write")


class GatedCheckpoint(Gated, CheckpointState):
    def __init__(self, root: Path, gate: Gate) -> None:
        super().__init__(root)
        self.gate = gate


class GatedDeviceCheckpoint(Gated, DeviceCheckpoint):
    def __init__(self, root: Path, gate: Gate) -> None:
        super().__init__(root)
        self.gate = gate


@dataclass
class Driver:
    """The driver's own state (which claims it has prepared) and the calls it received."""

    name: str
    prepared: set[str] = field(default_factory=set)
    calls: list[tuple[str, str]] = field(default_factory=list)

    def answer(self, claims: list[Any], prepare: bool) -> dict[str, ClaimResult]:
        for c in claims:
            self.calls.append(("prepare" if prepare else "unprepare", c.uid))
            (self.prepared.add if prepare else self.prepared.discard)(c.uid)
        return {c.uid: ClaimResult([f"{self.name}/dev={c.uid}"] if prepare else [])
                for c in claims}


@dataclass
class Client:
    """One agent process's connection to a driver."""

    driver: Driver
    gate: Gate

    async def _call(self, claims: list[Any], prepare: bool) -> dict[str, ClaimResult]:
        self.gate.step("call")  # a dead agent sends nothing
        await asyncio.sleep(0)
        answer = self.driver.answer(claims, prepare)
        if self.gate.step("after answer"):
            raise Crash("after answer")
        return answer

    async def prepare(self, claims: list[Any]) -> dict[str, ClaimResult]:
        return await self._call(claims, True)

    async def unprepare(self, claims: list[Any]) -> dict[str, ClaimResult]:
        return await self._call(claims, False)


def claim(name: str, drivers: tuple[str, ...], pods: list[str]) -> ResourceClaim:
    return codec.decode(json.dumps({
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"},
        "spec": {"resourceClassName": "gpu"},
        "status": {"driverName": drivers[0], "allocation": {"resourceHandles": [
            {"driverName": d, "data": name} for d in drivers]},
            "reservedFor": [{"resource": "pods", "name": p, "uid": p} for p in pods]},
    }).encode(), ResourceClaim)


def claim_1_34(name: str, drivers: tuple[str, ...], pods: list[str]) -> v1.ResourceClaim:
    return codec.decode(json.dumps({
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"},
        "status": {"allocation": {"devices": {"results": [
            {"request": "r", "driver": d, "pool": "p", "device": name} for d in drivers]}},
            "reservedFor": [{"resource": "pods", "name": p, "uid": p} for p in pods]},
    }).encode(), v1.ResourceClaim)


@dataclass(frozen=True)
class Era:
    """One node side: its claims, its checkpoint (gated) and the format over it."""

    claim: Callable[[str, tuple[str, ...], list[str]], Any]
    checkpoint: Callable[[Path, Gate], Any]
    format: Callable[[Any], Any]


ERA_1_30 = Era(claim, GatedCheckpoint, ClaimInfos)
ERA_1_34 = Era(claim_1_34, GatedDeviceCheckpoint, ClaimStates)


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    claims = draw(st.lists(st.sampled_from([DRIVERS[:1], DRIVERS[1:], DRIVERS]),
                           min_size=1, max_size=3))
    names = [f"c{i}" for i in range(len(claims))]
    uses = draw(st.lists(st.sets(st.sampled_from(names), min_size=1), min_size=1, max_size=3))
    pods = [f"p{i}" for i in range(len(uses))]
    ops = draw(st.lists(st.tuples(st.sampled_from(["start", "end"]), st.sampled_from(pods)),
                        min_size=1, max_size=6))
    return {"claims": dict(zip(names, claims, strict=True)),
            "uses": dict(zip(pods, uses, strict=True)), "ops": ops,
            "crash": draw(st.sampled_from(CRASHES)), "at": draw(st.integers(1, 12)),
            "deleted": draw(st.sets(st.sampled_from(pods)))}


def manager(era: Era, root: Path, api: FakeApi, drivers: dict[str, Driver],
            gate: Gate) -> ClaimManager:
    return ClaimManager(api, era.checkpoint(root, gate),  # type: ignore[arg-type]
                        lambda name: Client(drivers[name], gate), era.format)


def checkpoint(era: Era, root: Path) -> dict[str, Any]:
    return {e.ClaimUID: e for e in era.checkpoint(root, Gate("never", 0)).get_or_create()}


async def run(s: dict[str, Any], root: Path, era: Era = ERA_1_30) -> None:
    users = {c: [p for p, cs in s["uses"].items() if c in cs] for c in s["claims"]}
    api = FakeApi(*(era.claim(c, d, users[c]) for c, d in s["claims"].items()))
    pods = {p: pod(p, *sorted(cs)) for p, cs in s["uses"].items()}
    drivers = {d: Driver(d) for d in DRIVERS}
    checkpoint(era, root)  # the empty file an agent writes at its first start: no crash point
    is_prepared = era.format(None).confirmed

    # -- the first agent, until it dies (or the operations end)
    gate = Gate(s["crash"], s["at"])
    first = manager(era, root, api, drivers, gate)
    started: set[str] = set()
    live: set[str] = set()
    for kind, p in s["ops"]:
        if kind == "start" and p not in started:
            started.add(p)
            live.add(p)
            work = first.prepare(pods[p])
        elif kind == "end" and p in live:
            live.discard(p)
            work = first.unprepare(p)
        else:
            continue
        try:
            await work
        except Exception:
            if not gate.dead:
                raise
            break

    # -- pods deleted while it was down; the restarted agent settles
    live -= s["deleted"]
    recorded = checkpoint(era, root)
    for d in drivers.values():
        d.calls.clear()
    again = manager(era, root, api, drivers, Gate("never", 0))
    await settle(again, live, pods)

    needed = {f"uid-{c}" for p in live for c in s["uses"][p]}
    for d in drivers.values():
        handles = {f"uid-{c}" for c, ds in s["claims"].items() if d.name in ds}
        assert d.prepared == needed & handles, (d.name, d.prepared, needed & handles)
        trusted = {uid for uid, e in recorded.items() if is_prepared(e)}
        assert not {uid for what, uid in d.calls if what == "prepare"} & trusted
        unprepared = [uid for what, uid in d.calls if what == "unprepare"]
        assert len(unprepared) == len(set(unprepared)), unprepared
    state = checkpoint(era, root)
    assert set(state) == needed
    for uid, e in state.items():
        assert is_prepared(e)
        assert set(e.PodUIDs or ()) == {p for p in live if uid[4:] in s["uses"][p]}

    for d in drivers.values():
        d.calls.clear()
    await settle(again, live, pods)  # nothing is repeated
    assert [d.calls for d in drivers.values()] == [[], []]


async def settle(m: ClaimManager, live: set[str], pods: dict[str, Any]) -> None:
    """What a restarted agent does: pod workers prepare the pods still on the node while the
    pods that are gone are released, all at once."""
    gone = m.pod_uids() - live
    await asyncio.gather(*(m.prepare(pods[p]) for p in sorted(live)),
                         *(m.unprepare(p) for p in sorted(gone)))


@settings(max_examples=300, deadline=None)
@given(scenarios())
def test_every_claim_is_prepared_exactly_when_a_pod_needs_it(s: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as root:
        asyncio.run(run(s, Path(root)))


@settings(max_examples=300, deadline=None)
@given(scenarios())
def test_the_1_34_checkpoint_keeps_the_same_order(s: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as root:
        asyncio.run(run(s, Path(root), ERA_1_34))
