"""Events are correlated as client-go's recorder does, against a real API server: repeats of
one occurrence become one Event with ``count`` and ``lastTimestamp``; many similar events
with different messages are combined; a source flooding one object is throttled; a repeat
whose Event expired writes a new one."""

from __future__ import annotations

from pathlib import Path

from kubedra.api.core import Event, Pod
from kubedra.api.meta import ObjectMeta
from kubedra.client.eventcorrelator import COMBINED_PREFIX, SPAM_BURST
from kubedra.client.events import EventRecorder
from kubedra.client.rest import Client
from tests.conformance.scheduler_support import api_client

T0 = 1_764_583_200.0  # 2025-12-01T10:00:00Z


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


def pod(name: str = "app") -> Pod:
    return Pod(api_version="v1", kind="Pod",
               metadata=ObjectMeta(name=name, namespace="default", uid=f"uid-{name}"))


async def events(client: Client) -> list[Event]:
    return sorted((await client.list(Event, "default")).items,
                  key=lambda e: e.metadata.creation_timestamp or "")


async def test_thirteen_identical_events_in_30s_become_one(tmp_path: Path) -> None:
    clock = Clock()
    async with api_client(tmp_path) as client:
        recorder = EventRecorder(client, "resource_claim", clock=clock)
        for _ in range(13):
            await recorder.record(pod(), "Warning", "FailedResourceClaimCreation",
                                  "PodResourceClaim gpu: resource claim template missing")
            clock.now += 2.5
        (event,) = await events(client)
    assert event.count == 13
    assert event.first_timestamp == "2025-12-01T10:00:00Z"
    assert event.last_timestamp == "2025-12-01T10:00:30Z"
    assert event.reason == "FailedResourceClaimCreation" and event.type == "Warning"
    assert event.involved_object.name == "app" and event.involved_object.uid == "uid-app"
    assert event.source.component == "resource_claim"


async def test_different_objects_or_messages_stay_apart_until_ten_similar(
        tmp_path: Path) -> None:
    clock = Clock()
    async with api_client(tmp_path) as client:
        recorder = EventRecorder(client, "default-scheduler", clock=clock)
        await recorder.record(pod("other"), "Warning", "FailedScheduling", "m0")
        for i in range(12):
            await recorder.record(pod(), "Warning", "FailedScheduling", f"m{i}")
            clock.now += 1
        found = await events(client)
    by_message = {e.message: e for e in found}
    assert sorted(e.involved_object.name or "" for e in found).count("other") == 1
    # nine distinct messages are written as such; from the tenth on they are combined
    assert {f"m{i}" for i in range(9)} <= set(by_message)
    combined = [e for e in found if (e.message or "").startswith(COMBINED_PREFIX)]
    assert len(combined) == 1 and combined[0].count == 3
    assert combined[0].message == COMBINED_PREFIX + "m11"
    assert len(found) == 1 + 9 + 1


async def test_a_flood_on_one_object_is_throttled(tmp_path: Path) -> None:
    clock = Clock()
    async with api_client(tmp_path) as client:
        recorder = EventRecorder(client, "c", clock=clock)
        for _ in range(SPAM_BURST + 5):
            await recorder.record(pod(), "Normal", "Tick", "same")
        (event,) = await events(client)
        assert event.count == SPAM_BURST
        clock.now += 300  # one more token
        await recorder.record(pod(), "Normal", "Tick", "same")
        (event,) = await events(client)
    assert event.count == SPAM_BURST + 1


async def test_a_repeat_after_the_event_was_deleted_creates_it_again(tmp_path: Path) -> None:
    clock = Clock()
    async with api_client(tmp_path) as client:
        recorder = EventRecorder(client, "c", clock=clock)
        await recorder.record(pod(), "Normal", "Started", "started")
        (first,) = await events(client)
        await client.delete(Event, first.metadata.name or "", "default")
        clock.now += 60
        await recorder.record(pod(), "Normal", "Started", "started")
        (again,) = await events(client)
    assert again.metadata.name == first.metadata.name
    assert again.count == 2 and again.last_timestamp == "2025-12-01T10:01:00Z"
