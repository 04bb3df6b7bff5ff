"""The SDK's 1.34 Driver against the 1.34 fake kubelet and a 1.34 API server in a subprocess:
registration offering ``v1.DRAPlugin`` then ``v1beta1.DRAPlugin``, claims read from the API
(allocation and uid checked, with upstream's texts), per-claim results and errors,
serialization, publishing ResourceSlices (the example driver once the kubelet took its
registration), and the era chosen by the API server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

import grpc
import pytest

from kubedra.api.meta import ObjectMeta
from kubedra.api.release import R1_30, R1_34
from kubedra.api.resource import v1
from kubedra.client.rest import Client
from kubedra.driver import Claim, ClaimRef, Device, Driver, PrepareResult
from kubedra.driver.example import build, generated_devices, publish_when_registered
from kubedra.driver.resourceslices import DriverResources, Pool, Slice
from kubedra.driver.testing import ApiServer, FakeKubelet
from kubedra.driver.testing import PrepareResult as Answer
from tests.unit.driver.helpers import DRIVER, claim_yaml

pytestmark = pytest.mark.timeout(120)

NODE = "worker-1"


def v1_claim(name: str, devices: list[str], request: str = "gpu") -> str:
    """A v1 ResourceClaim allocated (as the scheduler writes it) to ``devices`` of our pool;
    ``request`` ``gpu/<sub>`` makes ``gpu`` a request with subrequest ``<sub>``."""
    sub = request.partition("/")[2]
    how = (f"firstAvailable: [{{name: {sub}, deviceClassName: gpu.example.com}}]" if sub else
           "exactly: {deviceClassName: gpu.example.com}")
    results = "".join(f"""
        - {{request: {request}, driver: {DRIVER}, pool: {NODE}, device: {d}}}"""
                      for d in devices)
    return f"""
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: {name}, namespace: default}}
spec:
  devices:
    requests:
    - name: gpu
      {how}
status:
  allocation:
    devices:
      results:{results}
"""


class Batch:
    """Batch callbacks that record their calls; a device named ``broken`` fails its claim,
    ``slow`` seconds of work per call show the serialization."""

    def __init__(self, slow: float = 0.0) -> None:
        self.slow = slow
        self.prepared: list[list[v1.ResourceClaim]] = []
        self.unprepared: list[list[ClaimRef]] = []
        self.active = self.max_active = 0

    async def prepare(self, claims: list[v1.ResourceClaim]) -> Mapping[str, PrepareResult
                                                                       | Exception]:
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            await asyncio.sleep(self.slow)
            self.prepared.append(claims)
            out: dict[str, PrepareResult | Exception] = {}
            for claim in claims:
                assert claim.status.allocation is not None
                results = claim.status.allocation.devices.results or []
                uid = claim.metadata.uid or ""
                if any(r.device == "broken" for r in results):
                    out[uid] = RuntimeError(f"device broken of claim {claim.metadata.name}")
                    continue
                out[uid] = PrepareResult(devices=[
                    Device(r.pool, r.device, [f"{DRIVER}/gpu={uid}-{r.device}"], [r.request])
                    for r in results])
            return out
        finally:
            self.active -= 1

    async def unprepare(self, refs: list[ClaimRef]) -> Mapping[str, Exception | None]:
        self.unprepared.append(refs)
        return {r.uid: ValueError("still busy") if r.name == "busy" else None for r in refs}


@pytest.fixture
async def api(short_dir: Path) -> AsyncIterator[Client]:
    async with ApiServer(short_dir / "api") as client:
        yield client


def driver_for(batch: Batch, client: Client, root: Path, **kw: object) -> Driver:
    return Driver(DRIVER, prepare_claims=batch.prepare, unprepare_claims=batch.unprepare,
                  client=client, node_name=NODE, root_dir=root, **kw)  # type: ignore[arg-type]


async def test_prepare_reads_each_claim_and_answers_per_claim(api: Client,
                                                              short_dir: Path) -> None:
    batch = Batch()
    async with driver_for(batch, api, short_dir) as driver, FakeKubelet(
            driver.registration_socket, client=api, node_name=NODE) as kubelet:
        assert driver.release is R1_34
        assert kubelet.info is not None
        assert kubelet.info.supported_versions == ["v1.DRAPlugin", "v1beta1.DRAPlugin"]
        assert kubelet.service == "v1.DRAPlugin"
        await driver.wait_registered(5)

        result = await kubelet.prepare(v1_claim("one", ["gpu-0", "gpu-1"], "gpu/small"),
                                       v1_claim("bad", ["broken"]))
        stored = {c.metadata.name: c for c in (await api.list(v1.ResourceClaim, "default")).items}
        one, bad = (stored[n].metadata.uid or "" for n in ("one", "bad"))
        # the driver got the claims as the API has them, in the kubelet's order
        (call,) = batch.prepared
        assert [c.metadata.uid for c in call] == [one, bad]
        assert result[one] == Answer(
            cdi_devices=[f"{DRIVER}/gpu={one}-gpu-0", f"{DRIVER}/gpu={one}-gpu-1"],
            devices=[Device(NODE, "gpu-0", [f"{DRIVER}/gpu={one}-gpu-0"], ["gpu"]),
                     Device(NODE, "gpu-1", [f"{DRIVER}/gpu={one}-gpu-1"], ["gpu"])])
        assert result[bad] == Answer(cdi_devices=[], error="device broken of claim bad")

        assert await kubelet.unprepare(v1_claim("one", []), ClaimRef("default", "u-9", "busy")) == {
            one: "", "u-9": "still busy"}
        assert batch.unprepared == [[ClaimRef("default", one, "one"),
                                     ClaimRef("default", "u-9", "busy")]]


async def test_a_claim_the_api_does_not_confirm_fails_the_call(api: Client,
                                                              short_dir: Path) -> None:
    batch = Batch()
    async with driver_for(batch, api, short_dir) as driver, FakeKubelet(
            driver.registration_socket, client=api) as kubelet:
        await kubelet.prepare(v1_claim("real", ["gpu-0"]))
        stored = await api.get(v1.ResourceClaim, "real", "default")
        cases = {
            "get resource claims: claim default/real got replaced":
                ClaimRef("default", "another-uid", "real"),
            "get resource claims: retrieve claim default/gone: "
            'resourceclaims.resource.k8s.io "gone" not found': ClaimRef("default", "x", "gone"),
        }
        pending = await api.create(v1.ResourceClaim(
            metadata=ObjectMeta(name="pending", namespace="default"),
            spec=stored.spec))
        cases["get resource claims: claim default/pending not allocated"] = ClaimRef(
            "default", pending.metadata.uid or "", "pending")
        for text, ref in cases.items():
            with pytest.raises(grpc.aio.AioRpcError) as failed:
                await kubelet.prepare(ClaimRef("default", stored.metadata.uid or "", "real"),
                                      ref)
            assert failed.value.code() == grpc.StatusCode.UNKNOWN
            assert failed.value.details() == text
        assert len(batch.prepared) == 1  # the driver never saw the failed calls


async def test_calls_are_serialized_unless_the_driver_opts_out(api: Client,
                                                              short_dir: Path) -> None:
    for serialize, most in ((True, 1), (False, 2)):
        batch = Batch(slow=0.5)
        root = short_dir / str(serialize)
        async with driver_for(batch, api, root, serialize=serialize) as driver, FakeKubelet(
                driver.registration_socket, client=api) as kubelet:
            await asyncio.gather(kubelet.prepare(v1_claim(f"a-{most}", ["gpu-0"])),
                                 kubelet.prepare(v1_claim(f"b-{most}", ["gpu-1"])))
        assert batch.max_active == most


async def test_v1beta1_only_and_publishing(api: Client, short_dir: Path) -> None:
    batch = Batch()
    async with driver_for(batch, api, short_dir, services=["v1beta1.DRAPlugin"]) as driver, \
            FakeKubelet(driver.registration_socket, client=api, node_name=NODE) as kubelet:
        assert kubelet.service == "v1beta1.DRAPlugin"
        claim = v1_claim("beta", ["gpu-0"])
        (result,) = (await kubelet.prepare(claim)).values()
        assert [d.device_name for d in result.devices] == ["gpu-0"]
        driver.publish_resources(DriverResources(pools={NODE: Pool(slices=[Slice(devices=[
            v1.Device(name="gpu-0"), v1.Device(name="gpu-1")])])}))
        for _ in range(300):
            slices = (await api.list(v1.ResourceSlice)).items
            if slices:
                break
            await asyncio.sleep(0.1)
        (published,) = slices
        assert published.spec.node_name == NODE and published.spec.driver == DRIVER
        assert [d.name for d in published.spec.devices] == ["gpu-0", "gpu-1"]
        owner = (published.metadata.owner_references or [])[0]
        assert (owner.kind, owner.name, owner.controller) == ("Node", NODE, True)


async def test_a_1_30_server_makes_a_1_30_driver(short_dir: Path) -> None:
    batch = Batch()

    async def prepare(claim: Claim) -> list[str]:
        return [f"{DRIVER}/gpu={claim.uid}"]

    async def unprepare(claim: Claim) -> None:
        return None

    async with ApiServer(short_dir / "api", emulated_version="1.30") as client, Driver(
            DRIVER, prepare=prepare, unprepare=unprepare, prepare_claims=batch.prepare,
            unprepare_claims=batch.unprepare, client=client, root_dir=short_dir) as driver, \
            FakeKubelet(driver.registration_socket) as kubelet:
        assert driver.release is R1_30
        assert kubelet.info is not None and kubelet.info.supported_versions == ["1.0.0"]
        result = await kubelet.prepare(claim_yaml("u1", ["gpu-0"]))
        assert result["u1"].cdi_devices == [f"{DRIVER}/gpu=u1"]
        with pytest.raises(RuntimeError, match=r"publishes ResourceSlices only on a 1\.34"):
            driver.publish_resources(DriverResources())


async def test_an_unreachable_api_server_fails_the_call_with_the_reason(short_dir: Path) -> None:
    batch = Batch()
    server = ApiServer(short_dir / "api")
    client = await server.__aenter__()
    try:
        async with driver_for(batch, client, short_dir) as driver, FakeKubelet(
                driver.registration_socket, client=client) as kubelet:
            process = server._process  # the server goes, the driver's client stays open
            assert process is not None
            process.terminate()
            await process.wait()
            with pytest.raises(grpc.aio.AioRpcError) as failed:
                await kubelet.prepare(ClaimRef("default", "u", "gone"))
            assert failed.value.code() == grpc.StatusCode.UNKNOWN
            assert failed.value.details().startswith(
                "get resource claims: retrieve claim default/gone: ")
            assert batch.prepared == [], failed.value.details()
    finally:
        await server.__aexit__(None, None, None)


async def test_the_example_driver_publishes_once_the_kubelet_took_it(api: Client,
                                                                     short_dir: Path) -> None:
    """A starting kubelet deletes its node's slices before it takes registrations: slices
    published earlier would be wiped (and put back only after the controller's sync delay)."""
    driver, example = build(DRIVER, short_dir, short_dir / "cdi", NODE, [], api)
    async with driver:
        stop = asyncio.Event()
        unregistered = asyncio.create_task(publish_when_registered(
            driver, example, generated_devices(1), stop))
        publishing = asyncio.create_task(publish_when_registered(
            driver, example, generated_devices(2)))
        await asyncio.sleep(0.5)
        assert not publishing.done() and (await api.list(v1.ResourceSlice)).items == []
        stop.set()
        assert await unregistered is False
        async with FakeKubelet(driver.registration_socket, client=api, node_name=NODE):
            assert await asyncio.wait_for(publishing, 10) is True
            for _ in range(300):
                slices = (await api.list(v1.ResourceSlice)).items
                if slices:
                    break
                await asyncio.sleep(0.1)
            (published,) = slices
            assert [d.name for d in published.spec.devices] == ["device-00", "device-01"]
            assert example.instances == {"device-00", "device-01"}
