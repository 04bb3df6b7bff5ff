"""alloc-queueing-hints.json: the DynamicResources plugin's queueing hints, taken from its own
``events_to_register()`` and called as the scheduling queue calls them. Claims and classes the
pod refers to are created through a real API server and reach the plugin through the
scheduler's informers; event objects are the stored objects with the case's changes applied.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from kubedra.api.codec import decode, to_builtins
from kubedra.api.core import Pod
from kubedra.api.resource.v1alpha2 import (
    ResourceClaim,
    ResourceClaimParameters,
    ResourceClassParameters,
)
from kubedra.client.informer import Informers
from kubedra.client.rest import Client
from kubedra.scheduler.plugins.dynamicresources import DRAState, DynamicResources
from kubedra.scheduler.queue import ClusterEvent, Hint, SchedulingQueue
from kubedra.scheduler.setup import wire_dra
from tests.conformance.scheduler_support import Fixtures, api_client, create, set_path
from tests.vectors import case_id, load

DATA = load("alloc-queueing-hints.json")
PLUGIN = load("alloc-plugin-structured.json")  # "same fixture names as alloc-plugin-structured"
FIXTURES = Fixtures(PLUGIN["fixtures"])
CLAIM_CASES = DATA["claim_change_cases"]
PARAM_CASES = DATA["parameter_change_cases_derived"]
REGISTERED = DATA["registered_events_v1_30"]
NOT_A_CLAIM = Pod()  # what the upstream test passes as "<not-a-claim>"

# Deliberate differences (docs/deviations.md): classic DRA (PodSchedulingContext) is not
# supported; our queue has one Node "Update" action for UpdateNodeLabel/UpdateNodeTaint.
UNSUPPORTED = {"PodSchedulingContext"}
ACTION = {"UpdateNodeLabel": "Update", "UpdateNodeTaint": "Update"}


class Env:
    def __init__(self, client: Client) -> None:
        self.client = client
        self.state = DRAState()
        self.informers = Informers(client)
        wire_dra(self.informers, self.state, SchedulingQueue())
        self.plugin = DynamicResources(self.state)
        self.stored: dict[str, ResourceClaim] = {}

    def hint(self, resource: str, action: str) -> Hint:
        for event, hint in self.plugin.events_to_register():
            if event == ClusterEvent(resource, action) and hint is not None:
                return hint
        raise AssertionError(f"no hint registered for {resource} {action}")

    async def claim(self, ref: str | dict[str, Any]) -> ResourceClaim:
        """A claim event object: the stored claim (created on first use) with ``set``
        applied; ``metadata.uid: <other>`` stands for a different object."""
        name = ref if isinstance(ref, str) else ref["fixture"]
        if name not in self.stored:
            obj = await create(self.client, *FIXTURES.find(name))
            assert isinstance(obj, ResourceClaim)
            self.stored[name] = obj
        doc = to_builtins(self.stored[name])
        for path, value in ({} if isinstance(ref, str) else ref.get("set", {})).items():
            set_path(doc, path, str(uuid.uuid4()) if value == "<other>" else value)
        return decode(doc, ResourceClaim)


async def started(client: Client) -> Env:
    env = Env(client)
    await env.informers.start()
    return env


async def event_object(env: Env, ref: Any) -> object:
    if ref is None:
        return None
    if ref == "<not-a-claim>":
        return NOT_A_CLAIM
    return await env.claim(ref)


@pytest.mark.vectors("alloc-queueing-hints.json")
@pytest.mark.parametrize("case", CLAIM_CASES,
                         ids=[case_id(c, i) for i, c in enumerate(CLAIM_CASES)])
async def test_claim_change(case: dict[str, Any], tmp_path: Path) -> None:
    async with api_client(tmp_path) as client:
        env = Env(client)
        for ref in case.get("claims", []):
            await env.claim(ref)
        await env.informers.start()
        try:
            pod = decode(FIXTURES.find(case["pod"])[1], Pod)
            old = await event_object(env, case.get("oldObj"))
            new = await event_object(env, case.get("newObj"))
            if isinstance(new, ResourceClaim):
                # The informer updates its cache before handlers (and hints) run.
                env.state.set_claim(new)
            hint = env.hint("ResourceClaim", "Add" if old is None else "Update")
            if case.get("expect_error"):
                with pytest.raises(TypeError):
                    hint(pod, old, new)
                return
            assert hint(pod, old, new) is (case["expect"] == "Queue")
        finally:
            await env.informers.stop()


def _pod_with_claim() -> Pod:
    return decode(FIXTURES.find("podWithClaimName")[1], Pod)


@pytest.mark.vectors("alloc-queueing-hints.json")
@pytest.mark.parametrize("case", PARAM_CASES,
                         ids=[case_id(c, i) for i, c in enumerate(PARAM_CASES)])
async def test_parameters_change(case: dict[str, Any], tmp_path: Path) -> None:
    async with api_client(tmp_path) as client:
        claim = FIXTURES.find("pendingClaim")[1]
        cls = FIXTURES.find("structuredResourceClass")[1]
        if "pod_claim_parametersRef" in case:
            claim["spec"]["parametersRef"] = case["pod_claim_parametersRef"]
            resource, model = "ResourceClaimParameters", ResourceClaimParameters
        else:
            cls["parametersRef"] = case["class_parametersRef"]
            resource, model = "ResourceClassParameters", ResourceClassParameters
        await create(client, "claims", claim)
        await create(client, "classes", cls)
        env = await started(client)
        try:
            old = None if case["oldObj"] is None else decode(case["oldObj"], model)
            new = decode(case["newObj"], model)
            hint = env.hint(resource, "Add" if old is None else "Update")
            assert hint(_pod_with_claim(), old, new) is (case["expect"] == "Queue")
        finally:
            await env.informers.stop()


@pytest.mark.vectors("alloc-queueing-hints.json")
@pytest.mark.parametrize("entry", REGISTERED, ids=[e["resource"] for e in REGISTERED])
def test_registered_events(entry: dict[str, Any]) -> None:
    """Every v1.30 registration exists with a hint exactly where upstream has one; the
    extra ResourceSlice registration is the deliberate 1.32 fix."""
    registered = dict(DynamicResources(DRAState()).events_to_register())
    if entry["resource"] in UNSUPPORTED:
        assert not [e for e in registered if e.resource == entry["resource"]]
        return
    for action in entry["actions"]:
        event = ClusterEvent(entry["resource"], ACTION.get(action, action))
        assert event in registered, event
        assert (registered[event] is not None) is (entry["hint"] is not None), event
    slices = [e for e in registered if e.resource == "ResourceSlice"]
    assert {e.action for e in slices} == {"Add", "Update"}
