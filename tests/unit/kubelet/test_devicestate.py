"""The 1.34 checkpoint against the kubelet's own test table (pkg/kubelet/cm/dra/state
checkpointer_test.go: the checksums of its entries, a wrong checksum, truncated JSON), and the
ledger format over it: an entry is recorded before its drivers answer (``Devices`` null) and
confirmed once each answered, with or without devices."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest

from kubedra.api import codec
from kubedra.api.resource import v1
from kubedra.kubelet.checkpoint import CheckpointError
from kubedra.kubelet.devicestate import (
    ClaimState,
    ClaimStates,
    DeviceCheckpoint,
    DeviceState,
    DriverState,
    marshal,
    unmarshal,
)
from kubedra.kubelet.draclient.devices import ClaimRef
from kubedra.kubelet.ledger import ClaimResult, PreparedDevice, PrepareError

DRIVER = "test-driver.cdi.k8s.io"
POD = "139cdb46-f989-4f17-9561-ca10cfb509a6"


def entry(uid: str, name: str, *devices: DeviceState) -> ClaimState:
    return ClaimState(ClaimUID=uid, ClaimName=name, Namespace="default", PodUIDs={POD: {}},
                      DriverState={DRIVER: DriverState(Devices=list(devices))})


DEV1 = DeviceState("worker-1", "dev-1", ["test request"], ["example.com/example=cdi-example"])
DEV2 = DeviceState("worker-1", "dev-2", ["test request"], ["example.com/example=cdi-example"])
UID1, UID2 = "067798be-454e-4be4-9047-1aa06aea63f7", "4cf8db2d-06c0-7d70-1a51-e59b25b2c16c"


@pytest.mark.parametrize(("entries", "checksum"), [
    ([entry(UID1, "example", DEV1)], 1597924435),
    ([entry(UID1, "example", DEV1, DEV2)], 1812303514),
    ([entry(UID1, "example-1", DEV1), entry(UID2, "example-2", DeviceState("worker-1", "dev-2"))],
     3633532417),
])
def test_upstream_checksums(entries: list[ClaimState], checksum: int) -> None:
    blob = marshal(entries)
    outer = json.loads(blob)
    assert list(outer) == ["Data", "Checksum"] and outer["Checksum"] == checksum
    data = json.loads(outer["Data"])
    assert list(data) == ["kind", "apiVersion", "Entries"]
    assert data["kind"] == "DRACheckpoint"
    assert data["apiVersion"] == "checkpoint.dra.kubelet.k8s.io/v1"
    assert list(data["Entries"][0]) == ["ClaimUID", "ClaimName", "Namespace", "PodUIDs",
                                        "DriverState"]
    assert unmarshal(blob) == entries


def test_wrong_checksum_and_bad_json(tmp_path: Path) -> None:
    blob = json.loads(marshal([entry(UID1, "example", DEV1)]))
    blob["Checksum"] = 2930258365
    (tmp_path / "dra_manager_state").write_text(json.dumps(blob))
    with pytest.raises(CheckpointError,
                       match=r"^failed to get checkpoint dra_manager_state: checkpoint is "
                             r"corrupted$"):
        DeviceCheckpoint(tmp_path).get_or_create()
    (tmp_path / "dra_manager_state").write_text("{")
    with pytest.raises(CheckpointError, match="unexpected end of JSON input"):
        DeviceCheckpoint(tmp_path).get_or_create()


def test_missing_file_is_created_empty(tmp_path: Path) -> None:
    assert DeviceCheckpoint(tmp_path).get_or_create() == []
    blob = (tmp_path / "dra_manager_state").read_bytes()
    outer = json.loads(blob)
    assert outer["Checksum"] == zlib.crc32(outer["Data"].encode())
    assert unmarshal(blob) == []


def test_html_characters_are_escaped_as_go_does() -> None:
    blob = marshal([entry(UID1, "a<b>&c", DEV1)])
    assert b"<" not in blob and b"\\\\u003c" in blob
    assert unmarshal(blob)[0].ClaimName == "a<b>&c"


def claim(results: list[dict[str, str]] | None) -> v1.ResourceClaim:
    status = {} if results is None else {"allocation": {"devices": {"results": results}}}
    return codec.decode(json.dumps({
        "metadata": {"name": "c", "namespace": "ns", "uid": "u"}, "status": status}).encode(),
        v1.ResourceClaim)


def test_recorded_then_confirmed(tmp_path: Path) -> None:
    fmt = ClaimStates(DeviceCheckpoint(tmp_path))
    results = [{"request": "r", "driver": d, "pool": "p", "device": "x"}
               for d in ("b.example.com", "a.example.com", "b.example.com")]
    e = fmt.from_claim(claim(results))
    assert fmt.requests(e) == {d: [ClaimRef("ns", "u", "c")]
                               for d in ("a.example.com", "b.example.com")}
    assert not fmt.confirmed(e)
    fmt.answered(e, "a.example.com", ClaimResult(devices=(
        PreparedDevice("p", "x", ("r",), ("v/c=x",)),)))
    assert not fmt.confirmed(e)
    fmt.answered(e, "b.example.com", ClaimResult())  # no devices: still an answer
    assert fmt.confirmed(e) and fmt.cdi_devices(e) == ["v/c=x"]
    fmt.store([e])
    [back] = fmt.load()
    assert fmt.confirmed(back) and back.DriverState is not None
    assert back.DriverState["b.example.com"].Devices == []
    assert back.DriverState["a.example.com"].Devices == [
        DeviceState("p", "x", ["r"], ["v/c=x"])]


def test_unallocated_claim_is_not_prepared(tmp_path: Path) -> None:
    with pytest.raises(PrepareError, match=r"^claim ns/c: not allocated$"):
        ClaimStates(DeviceCheckpoint(tmp_path)).from_claim(claim(None))
