"""The DRA manager's checkpoint ``<root>/dra_manager_state``, byte-compatible with the v1.30
kubelet (pkg/kubelet/cm/dra/state): the same JSON and the same checksum, FNV-1a 32 over the
go-spew rendering of the Go struct, including the fallback for checkpoints written before
``ResourceHandles`` existed.

RawExtension values are kept as the exact JSON bytes (as Go's ``RawExtension`` does), in Go's
compact form, so the checksum written is the checksum a reader recomputes.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import msgspec

STATE_FILE = "dra_manager_state"
VERSION = "v1"
NULL = b"null"

X = TypeVar("X")


class CheckpointError(Exception):
    pass


def _null_raw() -> msgspec.Raw:
    return msgspec.Raw(NULL)


def _none() -> Any:
    return None


def _raw_field() -> Any:
    """A RawExtension: always written, ``null`` when unset (a non-builtin factory keeps msgspec
    from omitting it)."""
    return msgspec.field(default_factory=_null_raw)


def _always_null() -> Any:
    """A Go slice or map without ``omitempty``: written as ``null`` when nil."""
    return msgspec.field(default_factory=_none)


class _Go(msgspec.Struct, omit_defaults=True):
    """Go's ``omitempty`` for the fields with a plain default."""


class NamedResult(msgspec.Struct):
    name: str = ""


class AllocationResultState(_Go):
    vendorRequestParameters: msgspec.Raw = _raw_field()
    namedResources: NamedResult | None = None


class StructuredHandleState(_Go):
    vendorClassParameters: msgspec.Raw = _raw_field()
    vendorClaimParameters: msgspec.Raw = _raw_field()
    nodeName: str = ""
    results: list[AllocationResultState] | None = _always_null()


class ResourceHandleState(_Go):
    driverName: str = ""
    data: str = ""
    structuredData: StructuredHandleState | None = None


class ClaimInfoState(msgspec.Struct):
    """One prepared (or being prepared) claim; Go field names, as the kubelet writes them."""

    DriverName: str = ""
    ClassName: str = ""
    ClaimUID: str = ""
    ClaimName: str = ""
    Namespace: str = ""
    PodUIDs: dict[str, dict[str, Any]] | None = _always_null()
    ResourceHandles: list[ResourceHandleState] | None = _always_null()
    CDIDevices: dict[str, list[str]] | None = _always_null()


class _CheckpointIn(msgspec.Struct):
    version: str = ""
    entries: list[ClaimInfoState] | None = msgspec.field(default_factory=list)
    checksum: int = 0


class _CheckpointOut(msgspec.Struct, omit_defaults=True):
    version: str
    entries: list[ClaimInfoState] | None = None
    checksum: int = 0


_decoder = msgspec.json.Decoder(_CheckpointIn)
_encoder = msgspec.json.Encoder(order="deterministic")
_GO_ESCAPES = ((b"<", b"\\u003c"), (b">", b"\\u003e"), (b"&", b"\\u0026"),
               ("\u2028".encode(), b"\\u2028"), ("\u2029".encode(), b"\\u2029"))


def go_json(data: bytes) -> bytes:
    """Go's ``json.Marshal`` form of JSON text: compact and HTML-escaped."""
    out = msgspec.json.format(data, indent=-1) if data.strip() else NULL
    for plain, escaped in _GO_ESCAPES:
        out = out.replace(plain, escaped)
    return out


# -- the checksum: go-spew %#v of the Go struct, then FNV-1a 32 ------------------------------

def fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for x in data:
        h = ((h ^ x) * 0x01000193) & 0xFFFFFFFF
    return h


def _list(xs: Sequence[X] | None, render: Callable[[X], str]) -> str:
    return "<nil>" if xs is None else "[" + " ".join(render(x) for x in xs) + "]"


def _raw(raw: msgspec.Raw) -> str:
    data = bytes(raw)
    body = "<nil>" if data in (NULL, b"") else "[" + " ".join(str(b) for b in data) + "]"
    return "{Raw:([]uint8)" + body + " Object:(runtime.Object)<nil>}"


def _result(r: AllocationResultState) -> str:
    named = ("(*v1alpha2.NamedResourcesAllocationResult)<nil>" if r.namedResources is None
             else "(*v1alpha2.NamedResourcesAllocationResult){Name:(string)"
                  f"{r.namedResources.name}}}")
    return (f"{{VendorRequestParameters:(runtime.RawExtension){_raw(r.vendorRequestParameters)}"
            f" AllocationResultModel:(v1alpha2.AllocationResultModel){{NamedResources:{named}}}}}")


def _structured(s: StructuredHandleState | None) -> str:
    if s is None:
        return "(*v1alpha2.StructuredResourceHandle)<nil>"
    return ("(*v1alpha2.StructuredResourceHandle){"
            f"VendorClassParameters:(runtime.RawExtension){_raw(s.vendorClassParameters)}"
            f" VendorClaimParameters:(runtime.RawExtension){_raw(s.vendorClaimParameters)}"
            f" NodeName:(string){s.nodeName}"
            f" Results:([]v1alpha2.DriverAllocationResult){_list(s.results, _result)}}}")


def _handle(h: ResourceHandleState) -> str:
    return (f"{{DriverName:(string){h.driverName} Data:(string){h.data}"
            f" StructuredData:{_structured(h.structuredData)}}}")


def _entry(e: ClaimInfoState, *, with_handles: bool) -> str:
    pods = ("<nil>" if e.PodUIDs is None
            else "map[" + " ".join(f"{uid}:{{}}" for uid in sorted(e.PodUIDs)) + "]")
    cdi = ("<nil>" if e.CDIDevices is None
           else "map[" + " ".join(f"{k}:{_list(e.CDIDevices[k], str)}"
                                  for k in sorted(e.CDIDevices)) + "]")
    handles = (f" ResourceHandles:([]v1alpha2.ResourceHandle){_list(e.ResourceHandles, _handle)}"
               if with_handles else "")
    return (f"{{DriverName:(string){e.DriverName} ClassName:(string){e.ClassName}"
            f" ClaimUID:(types.UID){e.ClaimUID} ClaimName:(string){e.ClaimName}"
            f" Namespace:(string){e.Namespace} PodUIDs:(sets.Set[string]){pods}{handles}"
            f" CDIDevices:(map[string][]string){cdi}}}")


def checksum(version: str, entries: Sequence[ClaimInfoState] | None, *,
             with_handles: bool = True) -> int:
    """The checksum of a checkpoint; ``with_handles=False`` is the pre-ResourceHandles
    struct that v1.30 still accepts on read."""
    text = (f"(*state.DRAManagerCheckpoint){{Version:(string){version}"
            f" Entries:(state.ClaimInfoStateList)"
            f"{_list(entries, lambda e: _entry(e, with_handles=with_handles))}"
            " Checksum:(checksum.Checksum)0}")
    return fnv32a(text.encode())


# -- the file -----------------------------------------------------------------------------

def marshal(entries: Sequence[ClaimInfoState]) -> bytes:
    items = list(entries)
    body = _CheckpointOut(version=VERSION, entries=items or None,
                          checksum=checksum(VERSION, items))
    out = _encoder.encode(body)
    for plain, escaped in _GO_ESCAPES:
        out = out.replace(plain, escaped)
    return out


def unmarshal(data: bytes) -> list[ClaimInfoState]:
    """Parse and verify a checkpoint; a bad checksum is ``checkpoint is corrupted``."""
    try:
        parsed = _decoder.decode(data)
    except msgspec.DecodeError as e:
        text = str(e)
        raise CheckpointError("unexpected end of JSON input" if "truncated" in text
                              else f"invalid checkpoint JSON: {text}") from None
    if parsed.checksum not in (checksum(parsed.version, parsed.entries),
                               checksum(parsed.version, parsed.entries, with_handles=False)):
        raise CheckpointError("checkpoint is corrupted")
    return list(parsed.entries or ())


class CheckpointState:
    """Read once at start (creating an empty checkpoint if there is none), then rewritten
    atomically (temp file, fsync, rename) after every change, as the kubelet's file store."""

    def __init__(self, state_dir: str | os.PathLike[str], name: str = STATE_FILE) -> None:
        if not str(state_dir):
            raise CheckpointError("received empty string instead of state directory")
        if not name:
            raise CheckpointError("received empty string instead of checkpointName")
        self.dir = Path(state_dir)
        self.name = name
        self.path = self.dir / name

    def get_or_create(self) -> list[ClaimInfoState]:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            self.store([])
            return []
        try:
            return unmarshal(data)
        except CheckpointError as e:
            raise CheckpointError(f"failed to get checkpoint {self.name}: {e}") from None

    def store(self, entries: Sequence[ClaimInfoState]) -> None:
        write_atomically(self.path, marshal(entries))


def write_atomically(path: Path, data: bytes) -> None:
    """The kubelet's file store: a temp file beside ``path``, fsync, rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
