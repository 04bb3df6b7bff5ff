"""Pure parts of the ResourceClaim controller and the work queue."""

from __future__ import annotations

import asyncio

from kubedra.allocation.podclaims import generate_name
from kubedra.api import codec
from kubedra.api.core import Pod
from kubedra.controllers.resourceclaim import is_pod_done
from kubedra.controllers.workqueue import WorkQueue


def test_generate_name_short_and_truncated_proportionally() -> None:
    assert generate_name("my-pod", "gpu") == "my-pod-gpu-"
    pod, claim = "p" * 60, "c" * 30
    name = generate_name(pod, claim)
    total = len(pod) + len(claim) + 2
    assert name == "p" * (60 * 57 // total) + "-" + "c" * (30 * 57 // total)
    assert len(name) <= 58


def test_pod_done() -> None:
    def pod(**kw: object) -> Pod:
        return codec.decode({"metadata": {"name": "p", **kw.get("meta", {})},  # type: ignore[dict-item]
                             "spec": kw.get("spec", {}), "status": kw.get("status", {})}, Pod)

    assert is_pod_done(pod(status={"phase": "Succeeded"}))
    assert is_pod_done(pod(status={"phase": "Failed"}))
    assert not is_pod_done(pod(status={"phase": "Running"}))
    deleted = {"deletionTimestamp": "2024-01-01T00:00:00Z"}
    assert is_pod_done(pod(meta=deleted))
    assert not is_pod_done(pod(meta=deleted, spec={"nodeName": "n"}))


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
