"""The claims a driver's callbacks receive: 1.30's typed :class:`Claim`, one per call, and
1.34's batches of v1 ResourceClaims (prepare) or :class:`ClaimRef` (unprepare) with their
per-claim results.

1.30's :class:`Claim` is what the e2e test driver reads from a ``v1alpha3.Claim``
(test/e2e/dra/test-driver/app/kubeletplugin.go@v1.30): the opaque ``resource_handle`` of a
control-plane controller, or exactly one structured handle (the proto field is ``repeated``
only as a gogo/protobuf workaround).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from kubedra.api.resource import v1
from kubedra.api.resource import v1alpha2 as api
from kubedra.proto import convert


class ClaimError(Exception):
    """Raise from a callback to fail one claim with exactly this message (no traceback logged);
    any other exception fails the claim too, with its text, and is logged as a driver bug."""


@dataclasses.dataclass(frozen=True)
class Claim:
    namespace: str
    uid: str
    name: str
    resource_handle: str = ""
    """Opaque data from a control-plane controller; empty with structured parameters."""
    structured: api.StructuredResourceHandle | None = None
    """The allocation made by the scheduler with structured parameters (vendor parameters are
    decoded JSON values, ``None`` when empty)."""

    @property
    def node_name(self) -> str:
        return self.structured.node_name if self.structured is not None else ""

    @property
    def instance_names(self) -> list[str]:
        """The named-resources instances allocated to this claim, in result order."""
        if self.structured is None:
            return []
        return [r.named_resources.name for r in self.structured.results if r.named_resources]


def claim_from_proto(pb: Any) -> Claim:
    """A ``v1alpha3.Claim`` -> :class:`Claim`; raises :class:`ClaimError` for one that cannot be
    understood (the kubelet then gets that text as the claim's error)."""
    handles = pb.structured_resource_handle
    if len(handles) > 1:
        raise ClaimError(
            f"invalid length of NodePrepareResourceRequest.StructuredResourceHandle: {len(handles)}"
        )
    structured = None
    if handles:
        try:
            structured = convert.handle_from_proto(handles[0])
        except convert.ConversionError as err:
            raise ClaimError(f"decoding structured resource handle: {err}") from None
    return Claim(
        namespace=pb.namespace,
        uid=pb.uid,
        name=pb.name,
        resource_handle=pb.resource_handle,
        structured=structured,
    )


# --- 1.34 (resource.k8s.io/v1, DRA gRPC v1/v1beta1) ----------------------------------------


@dataclasses.dataclass(frozen=True)
class ClaimRef:
    """A claim as the 1.34 kubelet names it (upstream's ``NamespacedObject``): unprepare gets
    only this, since the claim may be gone from the API by then."""

    namespace: str
    uid: str
    name: str


@dataclasses.dataclass(frozen=True)
class Device:
    """One allocated device as prepared for the containers (upstream's ``kubeletplugin.Device``).
    ``requests`` name the claim's requests it serves (empty: all); a ``<request>/<subrequest>``
    is sent as its request."""

    pool_name: str
    device_name: str
    cdi_device_ids: Sequence[str] = ()
    requests: Sequence[str] = ()


@dataclasses.dataclass(frozen=True)
class PrepareResult:
    """One claim's outcome: its devices, or ``error`` (non-empty: the claim failed, the devices
    are ignored and the kubelet tries again later)."""

    devices: Sequence[Device] = ()
    error: str = ""


PrepareClaimsFunc = Callable[
    [list[v1.ResourceClaim]], Awaitable[Mapping[str, PrepareResult | Exception]]]
"""Prepare a batch of claims (fetched from the API, allocated, uids checked); claim uid ->
its result, or an exception whose text fails that claim. Raising fails the whole call."""
UnprepareClaimsFunc = Callable[[list[ClaimRef]], Awaitable[Mapping[str, Exception | None]]]
"""Undo a prepare, idempotently; claim uid -> ``None`` or an exception failing that claim."""
