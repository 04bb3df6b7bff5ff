"""alloc-plugin-structured.json: the DynamicResources plugin driven phase by phase (upstream's
TestPlugin) against a real API server: objects are created over HTTP, the plugin's state comes
from the scheduler's informers and claim writes go through ClientClaimWriter.

Where a case has ``expect_post_1_30`` its note asks for the later behaviour, so that is what is
checked (docs/deviations.md lists the differences)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kubedra.allocation.index import claim_key
from kubedra.api.codec import decode, to_builtins
from kubedra.api.core import Node, Pod
from kubedra.api.resource.v1alpha2 import ResourceClaim
from kubedra.client.informer import Informers
from kubedra.client.rest import Client
from kubedra.scheduler.cache import SchedulerCache
from kubedra.scheduler.claimwriter import ClientClaimWriter
from kubedra.scheduler.framework import CycleState, Diagnosis, NodeInfo, Status
from kubedra.scheduler.plugins.dynamicresources import DRAState, DynamicResources
from kubedra.scheduler.queue import SchedulingQueue
from kubedra.scheduler.setup import wire_dra
from tests.conformance.scheduler_support import (
    Fixtures,
    api_client,
    create,
    get_path,
    same,
    set_path,
    without_nulls,
)
from tests.vectors import case_id, load

DATA = load("alloc-plugin-structured.json")
CASES = DATA["cases"]
FIXTURES = Fixtures(DATA["fixtures"])


def expectations(case: dict[str, Any]) -> dict[str, Any]:
    """``expect``, overridden by ``expect_post_1_30`` (every such note asks for the later
    behaviour); ``after_error`` describes the overridden v1.30 failure path only."""
    want = dict(case.get("expect", {}))
    if "expect_post_1_30" in case:
        want.pop("after_error", None)
        want.update(case["expect_post_1_30"])
    return want


def check(phase: str, got: Status, want: dict[str, Any]) -> None:
    # PostFilter only runs for a pod that does not fit: it never returns Success.
    default = "Unschedulable" if phase == "postfilter" else "Success"
    expected = want.get(phase, {"code": default})
    assert got.code.value == expected["code"], f"{phase}: {got}"
    if "message" in expected:
        assert got.message == expected["message"], phase
    if "message_prefix" in expected:
        assert got.message.startswith(expected["message_prefix"]), f"{phase}: {got.message}"


class Env:
    def __init__(self, client: Client, claims: dict[str, ResourceClaim]) -> None:
        self.client = client
        self.claims = claims
        self.state = DRAState()
        self.informers = Informers(client)
        wire_dra(self.informers, self.state, SchedulingQueue())
        self.plugin = DynamicResources(self.state, ClientClaimWriter(client))

    async def live(self, name: str) -> ResourceClaim:
        return await self.client.get(ResourceClaim, name, "default")

    async def check_claims(self, expected: dict[str, dict[str, Any]]) -> None:
        for name, paths in expected.items():
            doc = to_builtins(await self.live(name))
            for path, value in paths.items():
                assert same(get_path(doc, path), value), f"{name} {path}: {get_path(doc, path)}"

    def key(self, name: str) -> str:
        return claim_key(self.claims[name])

    def nothing_in_flight(self) -> None:
        assert not [n for n in self.claims if self.state.index.is_in_flight(self.key(n))]


async def setup(client: Client, case: dict[str, Any]) -> Env:
    claims: dict[str, ResourceClaim] = {}
    for ref in case.get("claims", []):
        section, raw = FIXTURES.resolve(ref)
        obj = await create(client, section, raw)
        assert isinstance(obj, ResourceClaim)
        claims[obj.metadata.name or ""] = obj
    for ref in [*case.get("classes", []), *case.get("objs", [])]:
        await create(client, *FIXTURES.resolve(ref))
    env = Env(client, claims)
    await env.informers.start()
    return env


def pod_of(case: dict[str, Any]) -> Pod:
    return decode(FIXTURES.resolve(case["pod"])[1], Pod)


def nodes() -> list[NodeInfo]:
    cache = SchedulerCache()
    for raw in DATA["fixtures"]["nodes"].values():
        cache.set_node(decode(raw, Node))
    return [cache.nodes[n] for n in cache.node_names()]


async def run_case(env: Env, case: dict[str, Any]) -> None:
    want = expectations(case)
    plugin, pod, state = env.plugin, pod_of(case), CycleState()
    status = plugin.pre_enqueue(pod)
    if not status.ok:
        check("preenqueue", status, want)
        return
    assert "preenqueue" not in want
    status = plugin.pre_filter(state, pod)
    check("prefilter", status, want)
    feasible: list[NodeInfo] = []
    if status.ok:
        for info in nodes():
            got = plugin.filter(state, pod, info)
            check("filter", got, {"filter": want.get("filter", {}).get(
                info.name, {"code": "Success"})})
            if got.ok:
                feasible.append(info)
    if not feasible:
        check("postfilter", await plugin.post_filter(state, pod, Diagnosis()), want)
        after = case.get("expect_claim_after_postfilter_post_1_30")
        if after:
            await env.check_claims(after)
        return
    assert "postfilter" not in want
    node = feasible[0].name
    check("reserve", plugin.reserve(state, pod, node), want)
    for name, status_want in want.get("in_flight_after_reserve", {}).items():
        in_flight = env.state.index.claim(env.key(name))
        assert env.state.index.is_in_flight(env.key(name)) and in_flight is not None
        assert same(to_builtins(in_flight.status), status_want["status"])
    for name, paths in case.get("prepare_before_prebind", {}).items():
        doc = to_builtins(await env.live(name))
        for path, value in paths.items():
            set_path(doc, path, value)
        await env.client.update(decode(doc, ResourceClaim))
    if "unreserve_before_prebind" in want:
        await unreserve(env, state, pod, node)
        env.nothing_in_flight()
        for name, created in env.claims.items():
            live = await env.live(name)
            assert live.metadata.resource_version == created.metadata.resource_version
            seen = env.state.index.claim(env.key(name))
            assert seen is not None and seen.status.allocation is None  # informer copy again
        return
    status = await plugin.pre_bind(state, pod, node)
    check("prebind", status, want)
    if not status.ok:
        await unreserve(env, state, pod, node)
        env.nothing_in_flight()
        return
    await env.check_claims(want.get("claim_after_prebind", {}))
    if "in_flight_after_prebind" in want:
        env.nothing_in_flight()
    if "assumed_after_prebind" in want:
        for name in env.claims:
            live, seen = await env.live(name), env.state.index.claim(env.key(name))
            assert seen is not None
            assert seen.metadata.resource_version == live.metadata.resource_version
            assert without_nulls(to_builtins(seen.status)) == without_nulls(
                to_builtins(live.status))
    if "unreserve_after_bind_failure" in want:
        before = {n: (await env.live(n)).status.allocation for n in env.claims}
        await unreserve(env, state, pod, node)
        for name, paths in want["unreserve_after_bind_failure"].items():
            live = await env.live(name)
            assert same(to_builtins(live.status.reserved_for), paths["status.reservedFor"])
            assert live.status.allocation == before[name]  # "unchanged (stays allocated)"


async def unreserve(env: Env, state: CycleState, pod: Pod, node: str) -> None:
    """The scheduler's Unreserve: the in-memory part, then the API part."""
    env.plugin.unreserve(state, pod, node)
    await env.plugin.after_unreserve(state, pod)


@pytest.mark.vectors("alloc-plugin-structured.json")
@pytest.mark.parametrize("case", CASES, ids=[case_id(c, i) for i, c in enumerate(CASES)])
async def test_plugin(case: dict[str, Any], tmp_path: Path) -> None:
    async with api_client(tmp_path) as client:
        env = await setup(client, case)
        try:
            await run_case(env, case)
        finally:
            await env.informers.stop()
