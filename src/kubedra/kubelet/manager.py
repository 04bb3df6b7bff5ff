"""The DRA claim manager: prepares a pod's claims through their drivers before it runs and
unprepares them once no pod on the node uses them (upstream pkg/kubelet/cm/dra/manager.go,
claiminfo.go). This module holds what is v1.30's: reading the pod's claims from the API, the
claim info kept in ``dra_manager_state`` and the calls made from it; when each is written and
called is the ledger's rule (``ledger.py``), shared with any other checkpoint format.

Calls are batched per driver (one ``NodePrepareResources`` with all of a pod's claims for that
driver); a claim uid is prepared at most once however many pods share it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from kubedra.api import codec, resourceclaim
from kubedra.api.core import Pod
from kubedra.api.meta import ObjectMeta
from kubedra.api.resource.v1alpha2 import ResourceClaim, ResourceHandle
from kubedra.client.rest import Client
from kubedra.kubelet.checkpoint import (
    NULL,
    AllocationResultState,
    CheckpointState,
    ClaimInfoState,
    NamedResult,
    ResourceHandleState,
    StructuredHandleState,
    go_json,
)
from kubedra.kubelet.ledger import ClaimResult, DriverClient, Ledger, PrepareError
from kubedra.proto.convert import claim_to_proto

# -- claim info from the API object, and what the drivers are sent ----------------------------

def _raw(value: Any) -> msgspec.Raw:
    return msgspec.Raw(NULL if value is None else go_json(msgspec.json.encode(value)))


def _handle_state(h: ResourceHandle) -> ResourceHandleState:
    s = h.structured_data
    structured = None if s is None else StructuredHandleState(
        vendorClassParameters=_raw(s.vendor_class_parameters),
        vendorClaimParameters=_raw(s.vendor_claim_parameters),
        nodeName=s.node_name,
        results=[AllocationResultState(
            vendorRequestParameters=_raw(r.vendor_request_parameters),
            namedResources=None if r.named_resources is None
            else NamedResult(name=r.named_resources.name)) for r in s.results])
    return ResourceHandleState(driverName=h.driver_name, data=h.data, structuredData=structured)


def claim_info(claim: ResourceClaim) -> ClaimInfoState:
    """``newClaimInfoFromResourceClaim``: no handles means one empty handle, so the claim is
    still sent to ``status.driverName``."""
    allocation = claim.status.allocation
    handles = [_handle_state(h) for h in (allocation.resource_handles if allocation else None)
               or ()] or [ResourceHandleState()]
    meta = claim.metadata
    return ClaimInfoState(DriverName=claim.status.driver_name,
                          ClassName=claim.spec.resource_class_name, ClaimUID=meta.uid or "",
                          ClaimName=meta.name or "", Namespace=meta.namespace or "",
                          PodUIDs={}, ResourceHandles=handles, CDIDevices={})


def _plugin(info: ClaimInfoState, h: ResourceHandleState) -> str:
    return h.driverName or info.DriverName


def requests(info: ClaimInfoState) -> dict[str, list[Any]]:
    """One ``Claim`` per cached handle, by the driver that handles it."""
    claim = ResourceClaim(metadata=ObjectMeta(namespace=info.Namespace, name=info.ClaimName,
                                              uid=info.ClaimUID))
    out: dict[str, list[Any]] = {}
    for h in info.ResourceHandles or ():
        handle = codec.decode(msgspec.json.encode(h), ResourceHandle)
        out.setdefault(_plugin(info, h), []).append(claim_to_proto(claim, handle))
    return out


def is_prepared(info: ClaimInfoState) -> bool:
    """Every driver of the claim answered with its devices. A claim is recorded before its
    drivers are called, without their ``CDIDevices`` entries: until they answered it is
    unconfirmed, which the v1.30 format needs no new field to say (see docs/deviations.md)."""
    done = info.CDIDevices or {}
    return all(_plugin(info, h) in done for h in info.ResourceHandles or ())


class ClaimInfos:
    """The v1.30 checkpoint as a ledger :class:`~kubedra.kubelet.ledger.Format`."""

    def __init__(self, state: CheckpointState) -> None:
        self.state = state

    def load(self) -> list[ClaimInfoState]:
        return self.state.get_or_create()

    def store(self, entries: list[ClaimInfoState]) -> None:
        self.state.store(entries)

    def uid(self, entry: ClaimInfoState) -> str:
        return entry.ClaimUID

    def name(self, entry: ClaimInfoState) -> str:
        return f"{entry.Namespace}/{entry.ClaimName}"

    def pods(self, entry: ClaimInfoState) -> set[str]:
        return set(entry.PodUIDs or ())

    def set_pods(self, entry: ClaimInfoState, pods: set[str]) -> None:
        entry.PodUIDs = {uid: {} for uid in sorted(pods)}

    def requests(self, entry: ClaimInfoState) -> dict[str, list[Any]]:
        return requests(entry)

    def answered(self, entry: ClaimInfoState, driver: str, result: ClaimResult) -> None:
        entry.CDIDevices = {**(entry.CDIDevices or {}), driver: result.cdi_devices}

    def confirmed(self, entry: ClaimInfoState) -> bool:
        return is_prepared(entry)


def _used_by_containers(pod: Pod, name: str) -> bool:
    """Claims no container or init container lists in ``resources.claims`` are not prepared."""
    containers = [*(pod.spec.init_containers or ()), *pod.spec.containers]
    return any(c.name == name for ct in containers for c in ct.resources.claims or ())


# -- the manager ---------------------------------------------------------------------------------

class ClaimManager:
    def __init__(self, client: Client, checkpoint: CheckpointState,
                 get_driver: Callable[[str], DriverClient]) -> None:
        self.client = client
        self.ledger = Ledger(ClaimInfos(checkpoint), get_driver)

    def pod_uids(self) -> set[str]:
        """Pods some recorded claim still references (``PodMightNeedToUnprepareResources``)."""
        return self.ledger.pod_uids()

    def devices(self, pod: Pod) -> dict[str, list[str]]:
        """The CDI devices of each of the pod's prepared claims, by claim name."""
        return {info.ClaimName: [d for ds in (info.CDIDevices or {}).values() for d in ds]
                for info in self.ledger.of_pod(pod.metadata.uid or "")}

    async def _claims_of(self, pod: Pod) -> list[ResourceClaim]:
        ns = pod.metadata.namespace or ""
        out: list[ResourceClaim] = []
        for pc in pod.spec.resource_claims or ():
            name, must_own = resourceclaim.claim_name(pod, pc)
            if name is None:
                continue
            claim = await self.client.get(ResourceClaim, name, ns)
            if must_own and not resourceclaim.is_for_pod(pod, claim):
                raise PrepareError(resourceclaim.not_for_pod(pod, claim))
            if not resourceclaim.is_reserved_for_pod(pod, claim):
                raise PrepareError(f"pod {pod.metadata.name}({pod.metadata.uid}) is not allowed "
                                   f"to use resource claim {name}({claim.metadata.uid})")
            if _used_by_containers(pod, pc.name):
                out.append(claim)
        return out

    async def prepare(self, pod: Pod) -> None:
        """``PrepareResources``: errors leave the pod waiting; the caller retries."""
        try:
            claims = await self._claims_of(pod)
        except resourceclaim.ClaimNameError as e:
            raise PrepareError(str(e)) from e
        if claims:  # nothing to remember: no checkpoint write (an fsync) per plain pod
            await self.ledger.prepare(pod.metadata.uid or "", [claim_info(c) for c in claims])

    async def unprepare(self, pod_uid: str) -> None:
        """``UnprepareResources``: drop the pod from its claims; claims no other pod uses are
        unprepared through their drivers and forgotten."""
        await self.ledger.unprepare(pod_uid)
