"""The keyed work queue (client-go's) and its metric families, whose names are contracts."""

from __future__ import annotations

import asyncio

from prometheus_client import CollectorRegistry

from kubedra.client.metrics import queue_metrics
from kubedra.client.workqueue import WorkQueue
from kubedra.controllers.metrics import controller_metrics


async def test_workqueue_deduplicates_and_retries() -> None:
    q = WorkQueue("test", base_delay=0.001)
    seen: list[str] = []
    fail_once = {"b"}

    async def sync(key: str) -> None:
        seen.append(key)
        if key in fail_once:
            fail_once.discard(key)
            raise RuntimeError("transient")

    for key in ("a", "b", "a", "a"):
        q.add(key)
    runner = asyncio.create_task(q.run_workers(sync, 2))
    for _ in range(100):
        if seen.count("b") == 2:
            break
        await asyncio.sleep(0.01)
    runner.cancel()
    assert seen.count("a") == 1
    assert seen.count("b") == 2


async def test_workqueue_never_runs_one_key_twice_at_once() -> None:
    q = WorkQueue("test")
    running: set[str] = set()
    overlaps = 0
    done = asyncio.Event()
    count = 0

    async def sync(key: str) -> None:
        nonlocal overlaps, count
        if key in running:
            overlaps += 1
        running.add(key)
        await asyncio.sleep(0.01)
        if count == 0:
            q.add(key)  # re-added while processing: runs again afterwards
        running.discard(key)
        count += 1
        if count == 2:
            done.set()

    q.add("k")
    runner = asyncio.create_task(q.run_workers(sync, 4))
    await asyncio.wait_for(done.wait(), 2)
    runner.cancel()
    assert overlaps == 0 and count == 2


async def test_metric_names_and_labels_are_client_gos() -> None:
    registry = CollectorRegistry()
    q = WorkQueue("names", base_delay=0.001, metrics=queue_metrics(registry))
    synced = asyncio.Event()
    failed: list[str] = []

    async def sync(key: str) -> None:
        if not failed:
            failed.append(key)
            raise RuntimeError("once")
        synced.set()

    q.add("k")
    runner = asyncio.create_task(q.run_workers(sync, 1))
    await asyncio.wait_for(synced.wait(), 10)
    runner.cancel()

    def value(sample: str, **labels: str) -> float | None:
        return registry.get_sample_value(sample, labels or {"name": "names"})

    assert value("workqueue_adds_total") == 2
    assert value("workqueue_retries_total") == 1
    assert value("workqueue_depth") == 0
    assert value("workqueue_queue_duration_seconds_count") == 2
    assert value("workqueue_work_duration_seconds_count") == 2
    assert value("workqueue_unfinished_work_seconds") == 0
    assert value("workqueue_longest_running_processor_seconds") == 0
    assert value("controller_sync_duration_seconds_count", controller="names",
                 result="error") == 1
    assert value("controller_sync_duration_seconds_count", controller="names",
                 result="success") == 1


def test_families_are_made_once_per_registry() -> None:
    """A node agent's queue and a controller manager's in one process share the families."""
    registry = CollectorRegistry()
    assert controller_metrics(registry).queue is queue_metrics(registry)
    assert controller_metrics(registry) is controller_metrics(registry)
    assert queue_metrics(CollectorRegistry()) is not queue_metrics(registry)
    WorkQueue("a", metrics=queue_metrics(registry))
    WorkQueue("b", metrics=controller_metrics(registry).queue)
