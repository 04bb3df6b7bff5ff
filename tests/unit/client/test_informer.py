"""The informer's event sequence: list, watch, resume from the last version (bookmarks move
it), relist on 410 Gone reporting the differences as adds, updates and deletes; informers
asked to trim cache objects without managedFields."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kubedra.api.core import Namespace, Pod
from kubedra.api.meta import ManagedFieldsEntry, ObjectMeta, Status
from kubedra.client.errors import ApiError
from kubedra.client.informer import Informer, InformerFailed, Informers, run_informed
from kubedra.client.rest import Page, WatchEvent


def ns(name: str, rv: str) -> Namespace:
    return Namespace(metadata=ObjectMeta(name=name, resource_version=rv, managed_fields=[
        ManagedFieldsEntry(manager="kubectl", operation="Update", fields_type="FieldsV1",
                           fields_v1={"f:metadata": {"f:labels": {}}})]))


class FakeClient:
    """Scripted answers: each list returns the next snapshot, each watch the next script
    (a list of events, or an ApiError to raise)."""

    def __init__(self, lists: list[tuple[list[Namespace], str]], watches: list[Any]) -> None:
        self.lists = lists
        self.watches = watches
        self.watched_from: list[str | None] = []

    async def list_all(self, model: type[Any], namespace: str | None = None,
                       **_: Any) -> Page[Namespace]:
        items, rv = self.lists.pop(0)
        return Page(items, rv, None)

    async def watch(self, model: type[Any], namespace: str | None = None, *,
                    resource_version: str | None = None,
                    **_: Any) -> AsyncIterator[WatchEvent[Namespace]]:
        self.watched_from.append(resource_version)
        script = self.watches.pop(0) if self.watches else None
        if script is None:
            await asyncio.Event().wait()  # a quiet watch
        if isinstance(script, Exception):
            raise script
        for event in script or ():
            yield event


async def test_list_watch_resume_and_relist_on_gone() -> None:
    gone = ApiError(410, Status(code=410, reason="Expired", message="too old"))
    client = FakeClient(
        lists=[([ns("a", "1"), ns("b", "2")], "2"), ([ns("a", "5"), ns("c", "6")], "6")],
        watches=[
            [WatchEvent("MODIFIED", ns("a", "3")), WatchEvent("BOOKMARK", ns("", "4"))],
            gone,
        ])
    informer: Informer[Namespace] = Informer(client, Namespace)  # type: ignore[arg-type]
    seen: list[str] = []
    informer.add_handler(
        on_add=lambda o: seen.append(f"add {o.metadata.name}@{o.metadata.resource_version}"),
        on_update=lambda old, new: seen.append(
            f"update {new.metadata.name}@{new.metadata.resource_version}"),
        on_delete=lambda o: seen.append(f"delete {o.metadata.name}"))
    informer.start()
    await informer.wait_synced(1)
    for _ in range(100):
        if len(client.watched_from) >= 3:
            break
        await asyncio.sleep(0.01)
    await informer.stop()
    # The second watch resumes at the bookmark; the 410 makes it list again and diff.
    assert client.watched_from == ["2", "4", "6"]
    assert seen == ["add a@1", "add b@2", "update a@3", "update a@5", "add c@6", "delete b"]
    assert sorted(informer.store) == ["a", "c"] and informer.resource_version == "6"


async def test_unexpected_error_is_logged_and_answered_by_a_relist(
        caplog: pytest.LogCaptureFixture) -> None:
    client = FakeClient(
        lists=[([ns("a", "1")], "1"), ([ns("a", "1"), ns("b", "3")], "3")],
        watches=[RuntimeError("boom")])
    informer: Informer[Namespace] = Informer(client, Namespace)  # type: ignore[arg-type]
    informer.start()
    for _ in range(200):
        if len(client.watched_from) >= 2:
            break
        await asyncio.sleep(0.01)
    await informer.stop()
    assert client.watched_from == ["1", "3"]
    assert sorted(informer.store) == ["a", "b"]
    failed = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert failed and "listing again" in failed[0].getMessage() and failed[0].exc_info


async def test_an_informer_that_keeps_failing_ends_the_component() -> None:
    client = FakeClient(lists=[([], str(i)) for i in range(10)],
                        watches=[RuntimeError("boom")] * 10)
    informer: Informer[Namespace] = Informer(  # type: ignore[arg-type]
        client, Namespace, max_failures=3)
    work_started = asyncio.Event()

    async def work() -> None:
        work_started.set()
        await asyncio.Event().wait()

    with pytest.raises(InformerFailed, match="boom"):
        await asyncio.wait_for(run_informed([informer], work), 10)
    assert work_started.is_set() and len(client.watched_from) == 3
    await informer.stop()


@pytest.mark.parametrize("trim", [True, False])
async def test_a_trimming_informer_caches_no_managed_fields(trim: bool) -> None:
    client = FakeClient(lists=[([ns("a", "1")], "1")],
                        watches=[[WatchEvent("ADDED", ns("b", "2"))]])
    fake: Any = client
    informer: Informer[Namespace] = Informer(fake, Namespace, trim_managed_fields=trim)
    handed: list[Namespace] = []
    informer.add_handler(on_add=handed.append)
    informer.start()
    for _ in range(100):
        if len(handed) == 2:
            break
        await asyncio.sleep(0.01)
    await informer.stop()
    assert sorted(informer.store) == ["a", "b"]
    for obj in [*informer.store.values(), *handed]:  # listed and watched alike
        assert (obj.metadata.managed_fields is None) is trim


def test_shared_informers_trim_every_kind_or_the_kinds_named() -> None:
    client: Any = object()
    every, pods = Informers(client, trim_managed_fields=True), Informers(
        client, trim_managed_fields={Pod})
    assert every.get(Namespace).trim_managed_fields and every.get(Pod).trim_managed_fields
    assert pods.get(Pod).trim_managed_fields and not pods.get(Namespace).trim_managed_fields
    assert not Informers(client).get(Pod).trim_managed_fields
