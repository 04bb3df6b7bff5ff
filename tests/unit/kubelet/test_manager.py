"""The claim manager with a scripted driver and claims served as the API server would: one
prepare per claim uid however many pods share it, upstream's checks and error texts, the
checkpoint written after each batch, restore without preparing again, unprepare when the last
pod goes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubedra.api import codec
from kubedra.api.core import Pod
from kubedra.api.resource import ResourceClaim
from kubedra.kubelet.checkpoint import CheckpointState
from kubedra.kubelet.manager import ClaimManager, ClaimResult, PrepareError

DRIVER = "gpu.example.com"


class FakeApi:
    def __init__(self, *claims: ResourceClaim) -> None:
        self.claims = {(c.metadata.namespace, c.metadata.name): c for c in claims}

    async def get(self, model: type[Any], name: str, namespace: str | None = None) -> Any:
        return self.claims[(namespace, name)]


class FakeDriver:
    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []
        self.errors: dict[str, str] = {}
        self.drop: set[str] = set()

    async def prepare(self, claims: list[Any]) -> dict[str, ClaimResult]:
        self.calls.append(("prepare", [c.uid for c in claims]))
        return {c.uid: ClaimResult([f"{DRIVER}/gpu={c.uid}"], self.errors.get(c.uid, ""))
                for c in claims if c.uid not in self.drop}

    async def unprepare(self, claims: list[Any]) -> dict[str, ClaimResult]:
        self.calls.append(("unprepare", [c.uid for c in claims]))
        return {c.uid: ClaimResult() for c in claims}


def claim(name: str, reserved: list[str]) -> ResourceClaim:
    return codec.decode(json.dumps({
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"},
        "spec": {"resourceClassName": "gpu"},
        "status": {"driverName": DRIVER, "allocation": {"resourceHandles": [
            {"driverName": DRIVER, "structuredData": {"nodeName": "n", "results": [
                {"namedResources": {"name": "instance-00"}}]}}]},
            "reservedFor": [{"resource": "pods", "name": p, "uid": p} for p in reserved]},
    }).encode(), ResourceClaim)


def pod(uid: str, *claims: str) -> Pod:
    return codec.decode(json.dumps({
        "metadata": {"name": uid, "namespace": "ns", "uid": uid},
        "spec": {"containers": [{"name": "c", "resources": {
            "claims": [{"name": c} for c in claims]}}],
            "resourceClaims": [{"name": c, "source": {"resourceClaimName": c}} for c in claims]},
    }).encode(), Pod)


def manager(tmp_path: Path, driver: FakeDriver, *claims: ResourceClaim) -> ClaimManager:
    return ClaimManager(FakeApi(*claims), CheckpointState(tmp_path),  # type: ignore[arg-type]
                        lambda name: driver)


async def test_shared_claim_prepared_once_unprepared_after_last_pod(tmp_path: Path) -> None:
    driver = FakeDriver()
    m = manager(tmp_path, driver, claim("shared", ["p1", "p2"]))
    await m.prepare(pod("p1", "shared"))
    await m.prepare(pod("p2", "shared"))
    assert driver.calls == [("prepare", ["uid-shared"])]
    assert m.devices(pod("p2", "shared")) == {"shared": [f"{DRIVER}/gpu=uid-shared"]}
    await m.unprepare("p1")
    assert driver.calls[-1][0] == "prepare"  # p2 still uses it
    await m.unprepare("p2")
    assert driver.calls[-1] == ("unprepare", ["uid-shared"])
    assert json.loads((tmp_path / "dra_manager_state").read_text()) == {
        "version": "v1", "checksum": 991151041}


async def test_restart_restores_without_preparing_again(tmp_path: Path) -> None:
    driver = FakeDriver()
    c = claim("c", ["p1"])
    await manager(tmp_path, driver, c).prepare(pod("p1", "c"))
    again = FakeDriver()
    restarted = manager(tmp_path, again, c)
    await restarted.prepare(pod("p1", "c"))
    assert again.calls == []
    assert restarted.pod_uids() == {"p1"}
    await restarted.unprepare("p1")
    assert again.calls == [("unprepare", ["uid-c"])]


async def test_upstream_errors(tmp_path: Path) -> None:
    driver = FakeDriver()
    m = manager(tmp_path, driver, claim("c", ["someone-else"]), claim("d", ["p1"]))
    with pytest.raises(PrepareError, match=r"^pod p1\(p1\) is not allowed to use resource "
                                           r"claim c\(uid-c\)$"):
        await m.prepare(pod("p1", "c"))
    driver.errors["uid-d"] = "device on fire"
    with pytest.raises(PrepareError, match=r"^NodePrepareResources failed for claim ns/d: "
                                           r"device on fire$"):
        await m.prepare(pod("p1", "d"))
    driver.errors.clear()
    driver.drop.add("uid-d")
    with pytest.raises(PrepareError, match=r"^NodePrepareResources left out 1 claims$"):
        await m.prepare(pod("p1", "d"))
    driver.drop.clear()
    await m.prepare(pod("p1", "d"))  # retried: now prepared
    assert driver.calls[-1] == ("prepare", ["uid-d"])
    state = json.loads((tmp_path / "dra_manager_state").read_text())
    assert state["entries"][0]["CDIDevices"] == {DRIVER: [f"{DRIVER}/gpu=uid-d"]}


async def test_unknown_driver(tmp_path: Path) -> None:
    def missing(name: str) -> Any:
        raise LookupError(f"plugin name {name} not found in the list of registered DRA plugins")

    m = ClaimManager(FakeApi(claim("c", ["p1"])), CheckpointState(tmp_path),  # type: ignore
                     missing)
    with pytest.raises(PrepareError, match=f"^failed to get DRA Plugin client for plugin name "
                                           f"{DRIVER}: plugin name {DRIVER} not found"):
        await m.prepare(pod("p1", "c"))


async def test_pod_without_claims_writes_no_checkpoint(tmp_path: Path) -> None:
    """Each checkpoint write is an fsync: a node running many plain pods must not pay one
    (or two) per pod."""
    stores: list[int] = []

    class Counting(CheckpointState):
        def store(self, entries: Any) -> None:
            stores.append(len(entries))
            super().store(entries)

    driver = FakeDriver()
    m = ClaimManager(FakeApi(claim("c", ["p2"])), Counting(tmp_path),  # type: ignore[arg-type]
                     lambda name: driver)
    before = len(stores)
    await m.prepare(pod("p1"))
    await m.unprepare("p1")
    assert len(stores) == before and driver.calls == []
    await m.prepare(pod("p2", "c"))  # a pod with a claim still does
    assert len(stores) > before


async def test_a_claim_not_created_yet_leaves_the_pod_waiting(tmp_path: Path) -> None:
    driver = FakeDriver()
    m = manager(tmp_path, driver, claim("c", ["p1"]))
    templated = codec.decode(json.dumps({
        "metadata": {"name": "p1", "namespace": "ns", "uid": "p1"},
        "spec": {"containers": [{"name": "c"}], "resourceClaims": [
            {"name": "gpu", "source": {"resourceClaimTemplateName": "t"}}]},
    }).encode(), Pod)
    with pytest.raises(PrepareError, match=r'^pod "ns/p1": ResourceClaim not created yet$'):
        await m.prepare(templated)
    assert driver.calls == []
