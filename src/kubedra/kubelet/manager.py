"""The DRA claim manager: prepares a pod's claims through their drivers before it runs and
unprepares them once no pod on the node uses them (upstream pkg/kubelet/cm/dra/manager.go,
claiminfo.go). This module reads the pod's claims from the API and holds v1.30's claim info
kept in ``dra_manager_state`` and the calls made from it; a :class:`ClaimFormat` is what an
era decides (its claim kind, its checkpoint entry: ``devicestate.ClaimStates`` for 1.34); when
each is written and called is the ledger's rule (``ledger.py``), shared by every format.

Calls are batched per driver (one ``NodePrepareResources`` with all of a pod's claims for that
driver); a claim uid is prepared at most once however many pods share it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

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
from kubedra.kubelet.ledger import (
    ClaimResult,
    DriverClient,
    DriverDevices,
    Format,
    Ledger,
    PreparedDevice,
    PrepareError,
)
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


E = TypeVar("E")


class ClaimFormat(Format[E], Protocol[E]):
    """One era's node side: the claims it reads and the checkpoint entry it keeps for each."""

    @property
    def claim_kind(self) -> type[resourceclaim.ResourceClaim]:
        """The claim kind of the era's ``resource.k8s.io`` version."""
        ...

    def from_claim(self, claim: Any) -> E:
        """A new entry for an allocated claim of ``claim_kind``; :class:`PrepareError` if it
        cannot be prepared."""
        ...

    def claim_name(self, entry: E) -> str: ...

    def cdi_devices(self, entry: E) -> list[str]: ...

    def held(self, entry: E) -> list[DriverDevices]:
        """The devices each driver prepared for the claim, by driver name."""
        ...


def held_devices(info: ClaimInfoState) -> list[DriverDevices]:
    """v1.30: each handle's named resources (their pool is the node's, the slice's), and the
    CDI ids its driver answered with for the whole claim."""
    devices: dict[str, list[PreparedDevice]] = {}
    for h in info.ResourceHandles or ():
        named = devices.setdefault(_plugin(info, h), [])
        if (s := h.structuredData) is not None:
            named += [PreparedDevice(pool=s.nodeName, device=r.namedResources.name)
                      for r in s.results or () if r.namedResources is not None]
    cdi = info.CDIDevices or {}
    return [DriverDevices(driver, tuple(devices[driver]), tuple(cdi.get(driver) or ()))
            for driver in sorted(devices)]


class ClaimInfos:
    """The v1.30 checkpoint as a ledger :class:`~kubedra.kubelet.ledger.Format`."""

    claim_kind = ResourceClaim

    def __init__(self, state: CheckpointState) -> None:
        self.state = state

    def from_claim(self, claim: ResourceClaim) -> ClaimInfoState:
        return claim_info(claim)

    def claim_name(self, entry: ClaimInfoState) -> str:
        return entry.ClaimName

    def cdi_devices(self, entry: ClaimInfoState) -> list[str]:
        return [d for ds in (entry.CDIDevices or {}).values() for d in ds]

    def held(self, entry: ClaimInfoState) -> list[DriverDevices]:
        return held_devices(entry)

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
    """``fmt``: the era's :class:`ClaimFormat` over its ``checkpoint`` (1.30's by default)."""

    def __init__(self, client: Client, checkpoint: Any,
                 get_driver: Callable[[str], DriverClient],
                 fmt: Callable[[Any], ClaimFormat[Any]] = ClaimInfos) -> None:
        self.client = client
        self.format = fmt(checkpoint)
        self.ledger = Ledger(self.format, get_driver)

    def pod_uids(self) -> set[str]:
        """Pods some recorded claim still references (``PodMightNeedToUnprepareResources``)."""
        return self.ledger.pod_uids()

    def devices(self, pod: Pod) -> dict[str, list[str]]:
        """The CDI devices of each of the pod's prepared claims, by claim name."""
        return {self.format.claim_name(e): self.format.cdi_devices(e)
                for e in self.ledger.of_pod(pod.metadata.uid or "")}

    def held(self, pod: Pod) -> dict[str, list[DriverDevices]]:
        """The devices of each of the pod's prepared claims, by claim name."""
        return {self.format.claim_name(e): self.format.held(e)
                for e in self.ledger.of_pod(pod.metadata.uid or "")}

    async def _claims_of(self, pod: Pod) -> list[resourceclaim.ResourceClaim]:
        ns = pod.metadata.namespace or ""
        out: list[resourceclaim.ResourceClaim] = []
        for pc in pod.spec.resource_claims or ():
            name, must_own = resourceclaim.claim_name(pod, pc)
            if name is None:
                continue
            claim = await self.client.get(self.format.claim_kind, name, ns)
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
            await self.ledger.prepare(pod.metadata.uid or "",
                                      [self.format.from_claim(c) for c in claims])

    async def unprepare(self, pod_uid: str) -> None:
        """``UnprepareResources``: drop the pod from its claims; claims no other pod uses are
        unprepared through their drivers and forgotten."""
        await self.ledger.unprepare(pod_uid)
