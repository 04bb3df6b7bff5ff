"""The typed claim a driver's ``prepare``/``unprepare`` callbacks receive.

Mirrors what the e2e test driver reads from a ``v1alpha3.Claim`` (test/e2e/dra/test-driver/app/
kubeletplugin.go@v1.30): the opaque ``resource_handle`` of a control-plane controller, or exactly
one structured handle (the proto field is ``repeated`` only as a gogo/protobuf workaround).
"""

from __future__ import annotations

import dataclasses
from typing import Any

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
