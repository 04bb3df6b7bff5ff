"""Server semantics that need the server's insides: compaction, GC queues, the in-flight
limit, shutdown, generation and graceful pod deletion."""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
from typing import Any

import pytest

from kubedra.apiserver.limits import READ_ONLY, Limits
from kubedra.registry import identity
from tests.unit.apiserver.conftest import Env, MakeEnv

PODS = "/api/v1/namespaces/default/pods"
JOBS = "/apis/batch/v1/namespaces/default/jobs"
MERGE = "application/merge-patch+json"


def pod(name: str, **meta: object) -> dict[str, object]:
    return {"metadata": {"name": name, **meta},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}}


def job(name: str) -> dict[str, object]:
    return {"metadata": {"name": name}, "spec": {"template": {"spec": {
        "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}}


async def test_boot_namespaces_exist(env: Env) -> None:
    _, lst = await env.call("GET", "/api/v1/namespaces")
    names = {n["metadata"]["name"] for n in lst["items"]}
    assert {"default", "kube-system"} <= names


async def test_noop_update_writes_nothing(env: Env) -> None:
    _, created = await env.call("POST", PODS, pod("p"))
    before = await env.store.current_revision()
    status, same = await env.call("PUT", f"{PODS}/p", created)
    assert status == 200
    assert same["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    assert await env.store.current_revision() == before


async def test_job_generation_and_status_separation(env: Env) -> None:
    status, created = await env.call("POST", JOBS, job("j"))
    assert status == 201 and created["metadata"]["generation"] == 1
    status, out = await env.call("PATCH", f"{JOBS}/j", {"spec": {"parallelism": 3}}, MERGE)
    assert status == 200 and out["metadata"]["generation"] == 2
    status, out = await env.call("PATCH", f"{JOBS}/j", {"metadata": {"labels": {"a": "b"}}},
                                 MERGE)
    assert out["metadata"]["generation"] == 2
    status, out = await env.call("PATCH", f"{JOBS}/j/status", {"status": {"active": 1}}, MERGE)
    assert status == 200 and out["status"]["active"] == 1
    assert out["metadata"]["generation"] == 2
    status, out = await env.call("PATCH", f"{JOBS}/j", {"status": {"active": 5}}, MERGE)
    assert out["status"]["active"] == 1  # the main resource cannot write status


async def test_job_delete_defaults_to_orphan(env: Env) -> None:
    _, j = await env.call("POST", JOBS, job("j"))
    owner = {"apiVersion": "batch/v1", "kind": "Job", "name": "j",
             "uid": j["metadata"]["uid"], "controller": True}
    await env.call("POST", PODS, pod("p", ownerReferences=[owner]))
    status, _ = await env.call("DELETE", f"{JOBS}/j")
    assert status == 200
    for _ in range(100):
        if (await env.call("GET", f"{JOBS}/j"))[0] == 404:
            break
        await asyncio.sleep(0.02)
    status, p = await env.call("GET", f"{PODS}/p")
    assert status == 200 and "ownerReferences" not in p["metadata"]


async def test_dependent_with_missing_owner_is_collected(env: Env) -> None:
    owner = {"apiVersion": "v1", "kind": "Node", "name": "gone", "uid": "no-such-uid"}
    await env.call("POST", PODS, pod("p", ownerReferences=[owner]))
    assert await env.server.gc.idle()
    for _ in range(100):
        if (await env.call("GET", f"{PODS}/p"))[0] == 404:
            return
        await asyncio.sleep(0.02)
    raise AssertionError("dangling dependent was not collected")


async def test_foreground_deletion_waits_for_dependents(env: Env) -> None:
    _, n = await env.call("POST", "/api/v1/nodes", {"metadata": {"name": "n"}})
    owner = {"apiVersion": "v1", "kind": "Node", "name": "n", "uid": n["metadata"]["uid"]}
    await env.call("POST", PODS, pod("p", ownerReferences=[owner]))
    status, out = await env.call("DELETE", "/api/v1/nodes/n",
                                 {"propagationPolicy": "Foreground"})
    assert status == 200 and "foregroundDeletion" in out["metadata"]["finalizers"]
    for _ in range(100):
        if (await env.call("GET", "/api/v1/nodes/n"))[0] == 404:
            break
        await asyncio.sleep(0.02)
    assert (await env.call("GET", f"{PODS}/p"))[0] == 404
    assert (await env.call("GET", "/api/v1/nodes/n"))[0] == 404


async def test_graceful_pod_deletion(env: Env) -> None:
    await env.call("POST", PODS, pod("p"))
    await env.call("POST", f"{PODS}/p/binding",
                   {"metadata": {"name": "p"}, "target": {"kind": "Node", "name": "n1"}})
    status, out = await env.call("DELETE", f"{PODS}/p")
    assert status == 200 and out["metadata"]["deletionGracePeriodSeconds"] == 30
    assert (await env.call("GET", f"{PODS}/p"))[0] == 200
    status, out = await env.call("DELETE", f"{PODS}/p", {"gracePeriodSeconds": 0})
    assert status == 200 and out["kind"] == "Pod"
    assert (await env.call("GET", f"{PODS}/p"))[0] == 404
    await env.call("POST", PODS, pod("q"))  # unscheduled: deleted at once
    status, out = await env.call("DELETE", f"{PODS}/q")
    assert (await env.call("GET", f"{PODS}/q"))[0] == 404


async def test_terminating_namespace_refuses_new_content(env: Env) -> None:
    await env.call("POST", "/api/v1/namespaces", {"metadata": {"name": "t"}})
    await env.call("POST", "/api/v1/namespaces/t/pods",
                   pod("p", finalizers=["example.com/hold"]))
    await env.call("DELETE", "/api/v1/namespaces/t")
    status, err = await env.call("POST", "/api/v1/namespaces/t/pods", pod("q"))
    assert status == 403 and err["reason"] == "Forbidden"
    assert err["message"] == (
        'pods "q" is forbidden: unable to create new content in namespace t because it is '
        "being terminated")


async def test_inflight_limit_answers_429(make_env: MakeEnv) -> None:
    env = await make_env(limits=Limits(max_requests_inflight=2))
    env.server.door.inflight[READ_ONLY] = 2  # two requests in flight already
    status, body = await env.call("GET", PODS)
    assert status == 429 and body["reason"] == "TooManyRequests"
    assert (await env.call("GET", "/readyz"))[0] == 200  # probes are not limited
    env.server.door.inflight[READ_ONLY] = 1
    assert (await env.call("GET", PODS))[0] == 200


async def test_a_list_from_the_future_is_504_at_once(env: Env) -> None:
    """Upstream waits up to 3 s for the revision first; a watch waits for it
    (docs/deviations.md)."""
    _, created = await env.call("POST", PODS, pod("p"))
    current = int(created["metadata"]["resourceVersion"])
    status, body = await env.call("GET", f"{PODS}?resourceVersion={current + 100}")
    assert status == 504
    assert body["message"] == (
        f"Too large resource version: {current + 100}, current: {current}")
    async with env.http.get(f"{PODS}?watch=true&resourceVersion={current + 1}") as resp:
        assert resp.status == 200
        await env.call("POST", PODS, pod("q"))  # current + 1: not after it
        await env.call("POST", PODS, pod("r"))
        async with asyncio.timeout(5):
            event = json.loads(await resp.content.readline())
    assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "r")


async def test_watch_from_compacted_history_is_410(make_env: MakeEnv) -> None:
    env = await make_env(watch_window=2)
    _, first = await env.call("POST", PODS, pod("p"))
    rv = first["metadata"]["resourceVersion"]
    for i in range(5):
        await env.call("PATCH", f"{PODS}/p", {"metadata": {"labels": {"i": str(i)}}}, MERGE)
    await env.store.compact(await env.store.current_revision())
    async with env.http.get(f"{PODS}?watch=true&resourceVersion={rv}") as resp:
        line = await resp.content.readline()
    event = json.loads(line)
    assert event["type"] == "ERROR" and event["object"]["code"] == 410
    compacted = await env.store.compacted_revision()
    assert event["object"]["message"] == f"too old resource version: {rv} ({compacted})"


async def test_watch_from_old_history_still_served(make_env: MakeEnv) -> None:
    env = await make_env(watch_window=2)
    _, first = await env.call("POST", PODS, pod("p"))
    rv = first["metadata"]["resourceVersion"]
    for i in range(5):
        await env.call("PATCH", f"{PODS}/p", {"metadata": {"labels": {"i": str(i)}}}, MERGE)
    lines = []
    async with env.http.get(f"{PODS}?watch=true&resourceVersion={rv}") as resp:
        for _ in range(5):
            lines.append(json.loads(await resp.content.readline()))
    assert [e["type"] for e in lines] == ["MODIFIED"] * 5
    assert [e["object"]["metadata"]["labels"]["i"] for e in lines] == list("01234")


async def test_shutdown_ends_watches(make_env: MakeEnv) -> None:
    env = await make_env()
    async with env.http.get(f"{PODS}?watch=true") as resp:
        stop = asyncio.create_task(env.server.stop())
        async with asyncio.timeout(5):
            rest = await resp.content.read()
        await stop
    assert rest == b""


async def test_managed_fields_recorded_on_create(env: Env) -> None:
    async with env.http.post(PODS, json=pod("p"),
                             headers={"User-Agent": "kubectl/v1.30.0 (linux)"}) as resp:
        out = await resp.json()
    entry = out["metadata"]["managedFields"][0]
    assert entry["manager"] == "kubectl" and entry["operation"] == "Update"
    assert "f:spec" in entry["fieldsV1"]


async def test_writers_do_not_own_what_their_endpoint_resets(env: Env) -> None:
    """A status write that also changes spec (discarded) owns only status; a main write that
    also changes status owns none of it (upstream GetResetFields)."""
    def owned(obj: dict[str, Any], manager: str) -> dict[str, Any]:
        entry, = (e for e in obj["metadata"]["managedFields"] if e["manager"] == manager)
        fields: dict[str, Any] = entry["fieldsV1"]
        return fields

    await env.call("POST", JOBS, job("j"))
    _, out = await env.call("PATCH", f"{JOBS}/j/status?fieldManager=writer",
                            {"spec": {"parallelism": 5}, "status": {"active": 1}}, MERGE)
    assert out["spec"]["parallelism"] == 1
    assert owned(out, "writer") == {"f:status": {"f:active": {}}}
    _, out = await env.call("PATCH", f"{JOBS}/j?fieldManager=scaler",
                            {"spec": {"parallelism": 2}, "status": {"active": 7}}, MERGE)
    assert out["status"]["active"] == 1
    assert owned(out, "scaler") == {"f:spec": {"f:parallelism": {}}}


async def test_metrics_and_health(env: Env) -> None:
    await env.call("GET", PODS)
    status, text = await env.call("GET", "/metrics")
    assert status == 200
    assert 'apiserver_request_total{code="200",group="",resource="pods",verb="list"} 1.0' in text
    assert (await env.call("GET", "/readyz")) == (200, "ok")


async def test_hub_reset_ends_watches_and_gc_resyncs(env: Env) -> None:
    async with env.http.get(f"{PODS}?watch=true") as resp:
        await asyncio.sleep(0.05)  # the stream subscribes to the hub
        await env.server.hub._reset()  # what a hub that fell behind compaction does
        async with asyncio.timeout(5):
            event = json.loads(await resp.content.readline())
            assert event["type"] == "ERROR" and event["object"]["code"] == 410
            assert await resp.content.read() == b""
    _, n = await env.call("POST", "/api/v1/nodes", {"metadata": {"name": "n"}})
    owner = {"apiVersion": "v1", "kind": "Node", "name": "n", "uid": n["metadata"]["uid"]}
    await env.call("POST", PODS, pod("p", ownerReferences=[owner]))
    await env.call("DELETE", "/api/v1/nodes/n")
    for _ in range(100):
        if (await env.call("GET", f"{PODS}/p"))[0] == 404:
            return
        await asyncio.sleep(0.02)
    raise AssertionError("GC did not resume after the hub reset")


async def test_hub_behind_compaction_restarts_from_current_revision(env: Env) -> None:
    """A hub whose store watch answers Compacted resumes from now (not the lost revision)
    and ends its watches with a 410 ERROR event."""
    hub = env.server.hub
    async with env.http.get(f"{PODS}?watch=true") as resp:
        await asyncio.sleep(0.05)
        assert hub._task is not None
        hub._task.cancel()  # the hub falls behind while writes and a compaction happen
        with contextlib.suppress(asyncio.CancelledError):
            await hub._task
        for i in range(3):
            await env.call("POST", PODS, pod(f"p{i}"))
        current = await env.store.current_revision()
        await env.store.compact(current)
        hub._task = asyncio.create_task(hub._run())
        async with asyncio.timeout(5):
            event = json.loads(await resp.content.readline())
            assert await resp.content.read() == b""
    assert event["type"] == "ERROR" and event["object"]["code"] == 410
    assert event["object"]["message"].startswith("too old resource version: ")
    assert hub.revision == current and hub.covers(current)
    async with env.http.get(f"{PODS}?watch=true&resourceVersion={current}") as resp:
        await env.call("POST", PODS, pod("after"))
        async with asyncio.timeout(5):
            event = json.loads(await resp.content.readline())
    assert event["type"] == "ADDED" and event["object"]["metadata"]["name"] == "after"


async def test_concurrent_patches_all_apply(env: Env) -> None:
    """Patches without a resourceVersion retry on a lost race instead of failing."""
    await env.call("POST", PODS, pod("p"))
    results = await asyncio.gather(*(
        env.call("PATCH", f"{PODS}/p", {"metadata": {"annotations": {f"k{i}": "v"}}}, MERGE)
        for i in range(20)
    ))
    assert {code for code, _ in results} == {200}
    _, got = await env.call("GET", f"{PODS}/p")
    assert len(got["metadata"]["annotations"]) == 20


async def test_periodic_bookmarks(make_env: MakeEnv) -> None:
    env = await make_env(bookmark_interval=0.1)
    _, lst = await env.call("GET", PODS)
    rv = lst["metadata"]["resourceVersion"]
    async with env.http.get(f"{PODS}?watch=1&allowWatchBookmarks=true&resourceVersion={rv}"
                            "&timeoutSeconds=2") as resp:
        line = await asyncio.wait_for(resp.content.readline(), 3)
    event = json.loads(line)
    assert event["type"] == "BOOKMARK"
    assert event["object"]["kind"] == "Pod" and event["object"]["apiVersion"] == "v1"
    assert int(event["object"]["metadata"]["resourceVersion"]) >= int(rv)


async def test_filtered_watch_is_not_flooded_by_changes_outside_its_selection(env: Env) -> None:
    """A node's pod watch (fieldSelector spec.nodeName) queues only its node's pods, as
    upstream's cacher filters before it queues: the traffic of other nodes neither wakes it
    nor overflows its queue."""
    hub = env.server.hub
    hub.subscriber_limit = 3  # a queue this short overflows on the first burst it holds
    on_a = f"{PODS}?watch=true&fieldSelector=spec.nodeName%3Da"
    async with env.http.get(on_a) as resp:
        await asyncio.sleep(0.05)  # the stream subscribes to the hub
        assert hub._task is not None
        hub._task.cancel()  # the hub holds back while the burst is written, then delivers
        with contextlib.suppress(asyncio.CancelledError):  # it at once
            await hub._task
        for i in range(10):
            await env.call("POST", PODS, dict(pod(f"b{i}"), spec={
                "nodeName": "b", "containers": [{"name": "c", "image": "busybox"}]}))
        await env.call("POST", PODS, dict(pod("a0"), spec={
            "nodeName": "a", "containers": [{"name": "c", "image": "busybox"}]}))
        hub._task = asyncio.create_task(hub._run())
        async with asyncio.timeout(5):
            event = json.loads(await resp.content.readline())
        assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "a0")
        mine = [sub for sub in hub.subs if sub.relevant is not None]
        assert [sub.queued_bytes for sub in mine] == [0]  # still subscribed, nothing held


async def test_node_watches_see_a_pod_enter_and_leave_by_its_binding(env: Env) -> None:
    """Watches on one spec.nodeName value are indexed by it: binding a pod is ADDED for its
    node's watch and DELETED for the watch of unscheduled pods (spec.nodeName=), and a
    third node's watch gets nothing."""
    async def first_event(resp: Any) -> Any:
        async with asyncio.timeout(5):
            return json.loads(await resp.content.readline())

    _, created = await env.call("POST", PODS, pod("p"))
    rv = created["metadata"]["resourceVersion"]
    watch = f"{PODS}?watch=true&resourceVersion={rv}&fieldSelector=spec.nodeName%3D"
    async with env.http.get(watch + "a") as on_a, env.http.get(watch) as unbound, \
            env.http.get(watch + "c") as on_c:
        status, _ = await env.call("POST", f"{PODS}/p/binding", {
            "metadata": {"name": "p"}, "target": {"kind": "Node", "name": "a"}})
        assert status == 201
        await env.call("POST", PODS, pod("marker", labels={"x": "y"}))  # unbound: on_c skips
        added, left = await first_event(on_a), await first_event(unbound)
        assert (added["type"], added["object"]["spec"]["nodeName"]) == ("ADDED", "a")
        assert (left["type"], left["object"]["metadata"]["name"]) == ("DELETED", "p")
        assert (await first_event(unbound))["object"]["metadata"]["name"] == "marker"
        # node c's watch is live, and the first thing it hears is its own pod's arrival
        await env.call("POST", PODS, dict(pod("on-c"), spec={
            "nodeName": "c", "containers": [{"name": "c", "image": "busybox"}]}))
        arrived = await first_event(on_c)
        assert (arrived["type"], arrived["object"]["metadata"]["name"]) == ("ADDED", "on-c")


async def test_a_change_takes_its_previous_object_from_the_change_before_it(env: Env) -> None:
    """A node watch needs each pod change's previous object (did it leave the node?): the
    hub shares the object its previous change already holds rather than decoding the
    stored bytes again, and decodes them only when that change has left the window."""
    hub = env.server.hub
    _, created = await env.call("POST", PODS, pod("p"))
    rv = created["metadata"]["resourceVersion"]
    async with env.http.get(f"{PODS}?watch=true&resourceVersion={rv}"
                            "&fieldSelector=spec.nodeName%3Da") as on_a:
        await env.call("POST", f"{PODS}/p/binding", {
            "metadata": {"name": "p"}, "target": {"kind": "Node", "name": "a"}})
        async with asyncio.timeout(5):
            assert json.loads(await on_a.content.readline())["type"] == "ADDED"
        mine = [ch for ch in hub.window if ch.key.endswith("/p")]
        assert [ch.type for ch in mine] == ["ADDED", "MODIFIED"]
        assert mine[1].prev is mine[0].obj
        hub.window.clear()  # the binding's change is gone: the next one decodes its bytes
        hub._latest.clear()
        await env.call("PATCH", f"{PODS}/p/status", {"status": {"phase": "Running"}},
                       content_type="application/merge-patch+json")
        async with asyncio.timeout(5):
            event = json.loads(await on_a.content.readline())
        assert event["object"]["status"]["phase"] == "Running"
        (status_change,) = [ch for ch in hub.window if ch.key.endswith("/p")]
        assert status_change.prev is not mine[1].obj
        assert status_change.prev == mine[1].obj


async def test_a_change_is_offered_only_to_the_watches_of_its_resource(env: Env) -> None:
    """Each node agent watches a few other resources: those watches are not asked about
    every pod change (only watches of pods, and those above every resource, are)."""
    hub = env.server.hub
    offered: dict[str, int] = {}

    def counting(name: str, prefix: str) -> None:
        sub = hub.subscribe(prefix, hub.revision)
        plain = sub.offer

        def offer(ch: Any) -> None:
            offered[name] = offered.get(name, 0) + 1
            plain(ch)
        sub.offer = offer  # type: ignore[method-assign]

    counting("pods", "/registry/core/pods/")
    counting("pods-in-ns", "/registry/core/pods/default/")
    counting("configmaps", "/registry/core/configmaps/")
    counting("everything", "/registry/")
    await env.call("POST", PODS, pod("p"))
    await asyncio.sleep(0.2)  # the hub publishes the change
    assert offered == {"pods": 1, "pods-in-ns": 1, "everything": 1}


async def test_generated_name_collision_is_retried_from_the_request(
        env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    """RetryGenerateName: a generated name that exists is generated again, and the retry
    starts from the request as sent (not from the first attempt's defaulted copy)."""
    # one draw of the system's randomness per name: 7 (taken), 7 again, then 8 (fresh)
    names = {}
    for draw in (7, 8):
        monkeypatch.setattr(secrets, "randbelow", lambda _bound, n=draw: n)
        names[draw] = identity.generate_name("p-")
    draws = iter([7, 7, 8])
    monkeypatch.setattr(secrets, "randbelow", lambda _bound: next(draws))
    generated = {"metadata": {"generateName": "p-"}, "spec": pod("x")["spec"]}
    _, first = await env.call("POST", PODS, generated)
    status, second = await env.call("POST", PODS, generated)
    assert first["metadata"]["name"] == names[7]
    assert status == 201 and second["metadata"]["name"] == names[8]
    assert second["metadata"]["uid"] != first["metadata"]["uid"]
    assert second["metadata"]["generateName"] == "p-"


async def test_an_update_that_loses_a_race_is_retried_from_the_request(
        env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    """A PUT without resourceVersion that loses its compare-and-swap to another writer is
    applied again from the body as sent, not from its first attempt's processed copy (which
    carries the old resourceVersion and would turn the retry into a 409)."""
    await env.call("POST", PODS, pod("p", labels={"v": "0"}))
    update = env.store.update
    raced: list[str] = []

    async def racing(key: str, value: bytes, expected: int | None = None, *,
                     ttl: int = 0) -> Any:
        if not raced:  # another writer gets in first, once
            raced.append(key)
            current = await env.store.get(key)
            assert current is not None
            other = json.loads(current.value)
            other["metadata"]["labels"] = {"v": "other"}
            await update(key, json.dumps(other).encode(), current.mod_revision)
        return await update(key, value, expected, ttl=ttl)

    monkeypatch.setattr(env.store, "update", racing)
    status, body = await env.call("PUT", f"{PODS}/p", pod("p", labels={"v": "1"}))
    assert raced and status == 200, body
    assert body["metadata"]["labels"] == {"v": "1"}
    _, stored = await env.call("GET", f"{PODS}/p")
    assert stored["metadata"]["labels"] == {"v": "1"}
    assert stored["metadata"]["resourceVersion"] == body["metadata"]["resourceVersion"]


async def test_writes_leave_every_cached_object_as_its_bytes(env: Env) -> None:
    """Updates read the stored object from the wire cache without copying it: no write path
    (PUT, each patch type, status, binding, finalizers, graceful and finalizer-held deletes,
    no-op, dry-run, rejected and conflicting writes) may change that shared object, which
    answers later reads and watch events."""
    def check_cache() -> None:
        for key, (revision, obj, data) in env.server.cache._items.items():
            assert obj == json.loads(data), key
            assert obj["metadata"]["resourceVersion"] == str(revision), key

    async def call(method: str, path: str, body: Any = None, kind: str = "") -> int:
        kind = kind or (MERGE if method == "PATCH" else "application/json")
        status, _ = await env.call(method, path, body, content_type=kind)
        check_cache()
        return status

    assert await call("POST", PODS, pod("p", labels={"a": "1"},
                                        finalizers=["example.com/hold"])) == 201
    _, live = await env.call("GET", f"{PODS}/p")
    live["metadata"]["labels"]["put"] = "yes"
    assert await call("PUT", f"{PODS}/p", live) == 200
    assert await call("PATCH", f"{PODS}/p", {"metadata": {"labels": {"m": "1"}}}) == 200
    assert await call("PATCH", f"{PODS}/p", {"metadata": {"labels": {"s": "1"}}},
                      "application/strategic-merge-patch+json") == 200
    assert await call("PATCH", f"{PODS}/p", [{"op": "add", "path": "/metadata/labels/j",
                                              "value": "1"}], "application/json-patch+json") == 200
    assert await call("PATCH", f"{PODS}/p?fieldManager=tester", {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"ap": "1"}}},
        "application/apply-patch+yaml") == 200
    assert await call("PATCH", f"{PODS}/p/status", {"status": {"phase": "Running"}}) == 200
    assert await call("POST", f"{PODS}/p/binding", {
        "metadata": {"name": "p"}, "target": {"kind": "Node", "name": "n1"}},
        "application/json") == 201
    assert await call("DELETE", f"{PODS}/p") == 200  # graceful, and held by the finalizer
    assert await call("DELETE", f"{PODS}/p", {"gracePeriodSeconds": 0}) == 200
    assert await call("PATCH", f"{PODS}/p", {"metadata": {"finalizers": None}}) == 200
    assert await call("POST", JOBS, job("j")) == 201
    assert await call("PATCH", f"{JOBS}/j/status", {"status": {"active": 1}}) == 200
    # writes that store nothing leave the object they read as the cache's entry
    assert await call("PATCH", f"{JOBS}/j/status", {"status": {"active": 1}}) == 200
    assert await call("PATCH", f"{JOBS}/j?dryRun=All", {"metadata": {"labels": {"d": "1"}}}
                      ) == 200
    assert await call("PATCH", f"{JOBS}/j", {"spec": {"parallelism": -1}}) == 422
    _, stale = await env.call("GET", f"{JOBS}/j")
    assert await call("PATCH", f"{JOBS}/j", {"metadata": {"labels": {"newer": "1"}}}) == 200
    assert await call("PUT", f"{JOBS}/j", stale) == 409
    assert env.server.cache._items, "the writes above fill the cache"
