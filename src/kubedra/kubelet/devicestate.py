"""The 1.34 node side's checkpoint ``<root>/dra_manager_state``, byte-compatible with the
kubelet's since v1.31 (pkg/kubelet/cm/dra/state: ``checkpoint.dra.kubelet.k8s.io/v1``
``DRACheckpoint``): the entries are JSON in a string ``Data``, guarded by ``Checksum``, the
CRC-32 (IEEE) of that string. No API types are embedded, so no spew rendering either.

An entry keeps a claim's reference, the pods using it and, per driver with results in the
claim's allocation, the devices that driver prepared (pool, device, request names, CDI ids).
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from kubedra.api.resource import v1
from kubedra.kubelet.checkpoint import STATE_FILE, CheckpointError, write_atomically
from kubedra.kubelet.draclient.devices import ClaimRef
from kubedra.kubelet.ledger import ClaimResult, DriverDevices, PreparedDevice, PrepareError

API_VERSION = "checkpoint.dra.kubelet.k8s.io/v1"
KIND = "DRACheckpoint"


class DeviceState(msgspec.Struct):
    """``state.Device``: how a driver described one prepared device (Go field names)."""

    PoolName: str = ""
    DeviceName: str = ""
    RequestNames: list[str] | None = None
    CDIDeviceIDs: list[str] | None = None


class DriverState(msgspec.Struct):
    """One driver's answer. ``Devices`` is ``null`` until the driver answered a prepare since
    the entry was recorded, a list (maybe empty) once it did: the ledger's *confirmed*."""

    Devices: list[DeviceState] | None = None


class ClaimState(msgspec.Struct):
    ClaimUID: str = ""
    ClaimName: str = ""
    Namespace: str = ""
    PodUIDs: dict[str, dict[str, object]] | None = None
    DriverState: dict[str, DriverState] | None = None


class _Data(msgspec.Struct, omit_defaults=True):
    kind: str = ""
    apiVersion: str = ""
    Entries: list[ClaimState] | None = msgspec.field(default_factory=lambda: None)


class _File(msgspec.Struct):
    Data: str = ""
    Checksum: int = 0


_encoder = msgspec.json.Encoder(order="deterministic")
_GO_ESCAPES = ((b"<", b"\\u003c"), (b">", b"\\u003e"), (b"&", b"\\u0026"),
               ("\u2028".encode(), b"\\u2028"), ("\u2029".encode(), b"\\u2029"))


def _go_encode(value: object) -> bytes:
    """Go's ``json.Marshal``: sorted map keys, HTML-escaped."""
    out = _encoder.encode(value)
    for plain, escaped in _GO_ESCAPES:
        out = out.replace(plain, escaped)
    return out


def marshal(entries: Sequence[ClaimState]) -> bytes:
    # a nil ClaimInfoStateList would be "Entries":null; the kubelet always passes a list
    data = _go_encode(_Data(kind=KIND, apiVersion=API_VERSION, Entries=list(entries)))
    return _go_encode(_File(Data=data.decode(), Checksum=zlib.crc32(data)))


def unmarshal(blob: bytes) -> list[ClaimState]:
    """Parse and verify; a checksum that does not match ``Data`` is ``checkpoint is
    corrupted``."""
    try:
        parsed = msgspec.json.decode(blob, type=_File)
        data = parsed.Data.encode()
        if zlib.crc32(data) != parsed.Checksum:
            raise CheckpointError("checkpoint is corrupted")
        entries = msgspec.json.decode(data, type=_Data).Entries
    except msgspec.DecodeError as e:
        text = str(e)
        raise CheckpointError("unexpected end of JSON input" if "truncated" in text
                              else f"invalid checkpoint JSON: {text}") from None
    return list(entries or ())


class DeviceCheckpoint:
    """Read once at start (an empty checkpoint is written if there is none), then rewritten
    atomically after every change, as the kubelet's file store does."""

    def __init__(self, state_dir: str | os.PathLike[str], name: str = STATE_FILE) -> None:
        self.dir = Path(state_dir)
        self.name = name
        self.path = self.dir / name

    def get_or_create(self) -> list[ClaimState]:
        try:
            blob = self.path.read_bytes()
        except FileNotFoundError:
            self.store([])
            return []
        try:
            return unmarshal(blob)
        except CheckpointError as e:
            raise CheckpointError(f"failed to get checkpoint {self.name}: {e}") from None

    def store(self, entries: Sequence[ClaimState]) -> None:
        write_atomically(self.path, marshal(entries))


class ClaimStates:
    """The 1.34 checkpoint as a ledger :class:`~kubedra.kubelet.ledger.Format` and the 1.34
    era's :class:`~kubedra.kubelet.manager.ClaimFormat`: ``resource.k8s.io/v1`` claims, sent
    to every driver with results in the allocation as a :class:`ClaimRef`."""

    claim_kind = v1.ResourceClaim

    def __init__(self, state: DeviceCheckpoint) -> None:
        self.state = state

    def from_claim(self, claim: v1.ResourceClaim) -> ClaimState:
        """``newClaimInfoFromClaim``: one driver state per driver of the results."""
        meta = claim.metadata
        allocation = claim.status.allocation
        if allocation is None:
            raise PrepareError(f"claim {meta.namespace}/{meta.name}: not allocated")
        drivers = sorted({r.driver for r in allocation.devices.results or ()})
        return ClaimState(ClaimUID=meta.uid or "", ClaimName=meta.name or "",
                          Namespace=meta.namespace or "", PodUIDs={},
                          DriverState={d: DriverState() for d in drivers})

    def load(self) -> list[ClaimState]:
        return self.state.get_or_create()

    def store(self, entries: list[ClaimState]) -> None:
        self.state.store(entries)

    def uid(self, entry: ClaimState) -> str:
        return entry.ClaimUID

    def name(self, entry: ClaimState) -> str:
        return f"{entry.Namespace}/{entry.ClaimName}"

    def claim_name(self, entry: ClaimState) -> str:
        return entry.ClaimName

    def pods(self, entry: ClaimState) -> set[str]:
        return set(entry.PodUIDs or ())

    def set_pods(self, entry: ClaimState, pods: set[str]) -> None:
        entry.PodUIDs = {uid: {} for uid in sorted(pods)}

    def requests(self, entry: ClaimState) -> dict[str, list[Any]]:
        ref = ClaimRef(namespace=entry.Namespace, uid=entry.ClaimUID, name=entry.ClaimName)
        return {driver: [ref] for driver in entry.DriverState or {}}

    def answered(self, entry: ClaimState, driver: str, result: ClaimResult) -> None:
        # Go appends to a nil slice: a driver that answered with no devices stays an empty list
        entry.DriverState = {**(entry.DriverState or {}), driver: DriverState(Devices=[
            DeviceState(PoolName=d.pool, DeviceName=d.device,
                        RequestNames=list(d.request_names) or None,
                        CDIDeviceIDs=list(d.cdi_ids) or None) for d in result.devices])}

    def confirmed(self, entry: ClaimState) -> bool:
        return all(s.Devices is not None for s in (entry.DriverState or {}).values())

    def cdi_devices(self, entry: ClaimState) -> list[str]:
        return [i for s in (entry.DriverState or {}).values() for d in s.Devices or ()
                for i in d.CDIDeviceIDs or ()]

    def held(self, entry: ClaimState) -> list[DriverDevices]:
        out = []
        for driver, state in sorted((entry.DriverState or {}).items()):
            devices = tuple(PreparedDevice(pool=d.PoolName, device=d.DeviceName,
                                           request_names=tuple(d.RequestNames or ()),
                                           cdi_ids=tuple(d.CDIDeviceIDs or ()))
                            for d in state.Devices or ())
            out.append(DriverDevices(driver, devices,
                                     tuple(i for d in devices for i in d.cdi_ids)))
        return out
