"""The claim manager with a scripted driver and claims served as the API server would: one
prepare per claim uid however many pods share it, upstream's checks and error texts, the claim
checkpointed before the call and after each batch, restore without preparing again (unless a
crash cut the prepare short), unprepare when the last pod goes, and one lock per claim: a
driver that hangs holds no other claim."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from kubedra.api import codec
from kubedra.api.core import Pod
from kubedra.api.resource.v1alpha2 import ResourceClaim
from kubedra.kubelet.checkpoint import CheckpointState
from kubedra.kubelet.ledger import ClaimResult, PrepareError
from kubedra.kubelet.manager import ClaimManager

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


class HeldDriver(FakeDriver):
    """Prepares only when released: a driver that hangs until told otherwise."""

    def __init__(self) -> None:
        super().__init__()
        self.release = asyncio.Event()
        self.called = asyncio.Event()

    async def prepare(self, claims: list[Any]) -> dict[str, ClaimResult]:
        self.called.set()
        await self.release.wait()
        return await super().prepare(claims)


def two_driver_manager(tmp_path: Path, drivers: dict[str, FakeDriver],
                       *claims: ResourceClaim) -> ClaimManager:
    return ClaimManager(FakeApi(*claims), CheckpointState(tmp_path),  # type: ignore[arg-type]
                        lambda name: drivers[name])


def claim_of(name: str, driver: str, reserved: list[str]) -> ResourceClaim:
    c = claim(name, reserved)
    for h in c.status.allocation.resource_handles:  # type: ignore[union-attr]
        h.driver_name = driver
    c.status.driver_name = driver
    return c


async def test_claim_recorded_before_the_driver_is_called(tmp_path: Path) -> None:
    """A crash during the call leaves the claim in the checkpoint, with its pod and without
    the driver's devices: the restarted agent knows it may be prepared."""
    driver = HeldDriver()
    m = manager(tmp_path, driver, claim("c", ["p1"]))
    task = asyncio.create_task(m.prepare(pod("p1", "c")))
    await driver.called.wait()
    [entry] = json.loads((tmp_path / "dra_manager_state").read_text())["entries"]
    assert (entry["ClaimUID"], entry["PodUIDs"], entry["CDIDevices"]) == ("uid-c", {"p1": {}}, {})
    driver.release.set()
    await task
    [entry] = json.loads((tmp_path / "dra_manager_state").read_text())["entries"]
    assert entry["CDIDevices"] == {DRIVER: [f"{DRIVER}/gpu=uid-c"]}


async def test_unconfirmed_claim_prepared_again_or_unprepared_after_restart(
        tmp_path: Path) -> None:
    c, d = claim("c", ["p1"]), claim("d", ["p2"])
    held = HeldDriver()
    m = manager(tmp_path, held, c, d)
    for p, name in (("p1", "c"), ("p2", "d")):
        task = asyncio.create_task(m.prepare(pod(p, name)))
        await held.called.wait()
        held.called.clear()
        task.cancel()  # the agent dies during the call
    again = FakeDriver()
    restarted = manager(tmp_path, again, c, d)
    await restarted.prepare(pod("p1", "c"))  # p1 still runs
    await restarted.unprepare("p2")  # p2 was deleted meanwhile
    assert again.calls == [("prepare", ["uid-c"]), ("unprepare", ["uid-d"])]
    assert restarted.pod_uids() == {"p1"}


async def test_unknown_driver_records_nothing(tmp_path: Path) -> None:
    def missing(name: str) -> Any:
        raise LookupError("not registered")

    m = ClaimManager(FakeApi(claim("c", ["p1"])), CheckpointState(tmp_path),  # type: ignore
                     missing)
    with pytest.raises(PrepareError):
        await m.prepare(pod("p1", "c"))
    assert m.pod_uids() == set()
    assert "entries" not in json.loads((tmp_path / "dra_manager_state").read_text())


async def test_a_hung_driver_holds_only_its_own_claims(tmp_path: Path) -> None:
    hung, other = HeldDriver(), FakeDriver()
    m = two_driver_manager(tmp_path, {"hung.example.com": hung, DRIVER: other},
                           claim_of("h", "hung.example.com", ["p1"]), claim("c", ["p2"]),
                           claim("d", ["p3"]))
    stuck = asyncio.create_task(m.prepare(pod("p1", "h")))
    await hung.called.wait()
    await asyncio.wait_for(m.prepare(pod("p2", "c")), 1)
    await asyncio.wait_for(m.prepare(pod("p3", "d")), 1)
    await asyncio.wait_for(m.unprepare("p2"), 1)
    assert other.calls == [("prepare", ["uid-c"]), ("prepare", ["uid-d"]),
                           ("unprepare", ["uid-c"])]
    assert not stuck.done()
    hung.release.set()
    await stuck


async def test_one_claim_is_worked_on_by_one_operation_at_a_time(tmp_path: Path) -> None:
    held = HeldDriver()
    m = manager(tmp_path, held, claim("shared", ["p1", "p2"]))
    first = asyncio.create_task(m.prepare(pod("p1", "shared")))
    await held.called.wait()
    second = asyncio.create_task(m.prepare(pod("p2", "shared")))
    release = asyncio.create_task(m.unprepare("p1"))
    await asyncio.sleep(0.05)
    assert not (second.done() or release.done())  # both wait for the claim's lock
    held.release.set()
    await asyncio.gather(first, second, release)
    assert held.calls == [("prepare", ["uid-shared"])]  # prepared once, still used by p2
    assert m.pod_uids() == {"p2"}


async def test_multi_driver_claim_forgotten_only_when_every_driver_unprepared(
        tmp_path: Path) -> None:
    class Failing(FakeDriver):
        fail = True

        async def unprepare(self, claims: list[Any]) -> dict[str, ClaimResult]:
            self.calls.append(("unprepare", [c.uid for c in claims]))
            return {c.uid: ClaimResult(error="busy" if self.fail else "") for c in claims}

    both = claim("c", ["p1"])
    handles = both.status.allocation.resource_handles  # type: ignore[union-attr]
    handles.append(msgspec.structs.replace(handles[0], driver_name="two.example.com"))
    one, two = FakeDriver(), Failing()
    m = two_driver_manager(tmp_path, {DRIVER: one, "two.example.com": two}, both)
    await m.prepare(pod("p1", "c"))
    with pytest.raises(PrepareError, match="NodeUnprepareResources failed for claim ns/c: busy"):
        await m.unprepare("p1")
    assert m.pod_uids() == {"p1"}  # kept: unprepared again on the next try
    two.fail = False
    await m.unprepare("p1")
    assert m.pod_uids() == set()
    assert one.calls[-2:] == [("unprepare", ["uid-c"])] * 2


async def test_vendor_parameters_checkpointed_in_go_compact_form(tmp_path: Path) -> None:
    """As the Go kubelet writes them (spec 3.4): its reader hashes the bytes it finds."""
    c = json.loads(codec.encode(claim("c", ["p1"])))
    c["status"]["allocation"]["resourceHandles"][0]["structuredData"][
        "vendorClassParameters"] = {"kind": "A<B", "n": [1, 2]}
    spaced = codec.decode(json.dumps(c, indent=1).encode(), ResourceClaim)
    await manager(tmp_path, FakeDriver(), spaced).prepare(pod("p1", "c"))
    text = (tmp_path / "dra_manager_state").read_bytes()
    assert b'"vendorClassParameters":{"kind":"A\\u003cB","n":[1,2]}' in text
