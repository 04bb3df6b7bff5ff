"""The DRA claim manager: prepares a pod's claims through their drivers before it runs and
unprepares them once no pod on the node uses them (upstream pkg/kubelet/cm/dra/manager.go,
claiminfo.go), remembering every claim in the checkpoint so a restart neither prepares again
nor forgets to unprepare.

Calls are batched per driver (one ``NodePrepareResources`` with all of a pod's claims for that
driver); a claim uid is prepared at most once however many pods share it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

import msgspec

from kubedra.api import codec, resourceclaim
from kubedra.api.core import Pod
from kubedra.api.meta import ObjectMeta
from kubedra.api.resource import ResourceClaim, ResourceHandle
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
from kubedra.proto.convert import claim_to_proto

log = logging.getLogger(__name__)


class PrepareError(Exception):
    pass


@dataclass(frozen=True)
class ClaimResult:
    cdi_devices: list[str] = field(default_factory=list)
    error: str = ""


class DriverClient(Protocol):
    """The batched DRA calls of one registered driver (``registration.DraClient``)."""

    async def prepare(self, claims: list[Any]) -> dict[str, ClaimResult]: ...

    async def unprepare(self, claims: list[Any]) -> dict[str, ClaimResult]: ...


# -- claim info from the API object, and the per-driver batches --------------------------------

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


def batches(infos: Iterable[ClaimInfoState]) -> dict[str, list[Any]]:
    """One ``Claim`` per cached handle, grouped by the driver that handles it."""
    out: dict[str, list[Any]] = {}
    for info in infos:
        claim = ResourceClaim(metadata=ObjectMeta(namespace=info.Namespace, name=info.ClaimName,
                                                  uid=info.ClaimUID))
        for h in info.ResourceHandles or ():
            handle = codec.decode(msgspec.json.encode(h), ResourceHandle)
            out.setdefault(_plugin(info, h), []).append(claim_to_proto(claim, handle))
    return out


def is_prepared(info: ClaimInfoState) -> bool:
    """Every driver of the claim answered with its devices (restored from the checkpoint:
    see docs/deviations.md; upstream v1.30 prepares every claim again after a restart)."""
    done = info.CDIDevices or {}
    return all(_plugin(info, h) in done for h in info.ResourceHandles or ())


def _used_by_containers(pod: Pod, name: str) -> bool:
    """Claims no container or init container lists in ``resources.claims`` are not prepared."""
    containers = [*(pod.spec.init_containers or ()), *pod.spec.containers]
    return any(c.name == name for ct in containers for c in ct.resources.claims or ())


# -- the manager ---------------------------------------------------------------------------------

class ClaimManager:
    def __init__(self, client: Client, checkpoint: CheckpointState,
                 get_driver: Callable[[str], DriverClient]) -> None:
        self.client = client
        self.checkpoint = checkpoint
        self.get_driver = get_driver
        self._lock = asyncio.Lock()
        self.cache: dict[tuple[str, str], ClaimInfoState] = {}
        self.prepared: set[str] = set()
        for info in checkpoint.get_or_create():
            self.cache[(info.Namespace, info.ClaimName)] = info
            if is_prepared(info):
                self.prepared.add(info.ClaimUID)

    def _store(self) -> None:
        try:
            self.checkpoint.store(list(self.cache.values()))
        except OSError as e:
            raise PrepareError(f"failed to checkpoint claimInfo state, err: {e}") from e

    def pod_uids(self) -> set[str]:
        """Pods some cached claim still references (``PodMightNeedToUnprepareResources``)."""
        return {uid for info in self.cache.values() for uid in info.PodUIDs or {}}

    def devices(self, pod: Pod) -> dict[str, list[str]]:
        """The CDI devices of each of the pod's prepared claims, by claim name."""
        return {info.ClaimName: [d for ds in (info.CDIDevices or {}).values() for d in ds]
                for info in self.cache.values()
                if pod.metadata.uid in (info.PodUIDs or {})}

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
        if not claims:
            return  # nothing to remember: no checkpoint write (an fsync) per plain pod
        async with self._lock:
            pending: list[ClaimInfoState] = []
            for claim in claims:
                key = (claim.metadata.namespace or "", claim.metadata.name or "")
                info = self.cache.get(key)
                if info is None or info.ClaimUID != claim.metadata.uid:
                    info = claim_info(claim)
                    self.cache[key] = info
                info.PodUIDs = {**(info.PodUIDs or {}), pod.metadata.uid or "": {}}
                if info.ClaimUID not in self.prepared:
                    pending.append(info)
            await self._checkpointed(pending, prepare=True)

    async def unprepare(self, pod_uid: str) -> None:
        """``UnprepareResources``: drop the pod from its claims; claims no other pod uses are
        unprepared through their drivers and forgotten."""
        async with self._lock:
            pending: list[ClaimInfoState] = []
            referenced = False
            for info in self.cache.values():
                pods = info.PodUIDs or {}
                if pod_uid not in pods:
                    continue
                referenced = True
                if len(pods) > 1:
                    info.PodUIDs = {u: v for u, v in pods.items() if u != pod_uid}
                else:
                    pending.append(info)
            if referenced:
                await self._checkpointed(pending, prepare=False)

    async def _checkpointed(self, infos: list[ClaimInfoState], *, prepare: bool) -> None:
        """Call the drivers (each batch is checkpointed), and checkpoint the pod references
        when there was nothing to call or a call failed."""
        try:
            await self._call(infos, prepare=prepare)
        except BaseException:
            self._store()
            raise
        if not infos:
            self._store()

    async def _call(self, infos: list[ClaimInfoState], *, prepare: bool) -> None:
        by_uid = {info.ClaimUID: info for info in infos}
        rpc = "NodePrepareResources" if prepare else "NodeUnprepareResources"
        for plugin, claims in batches(infos).items():
            try:
                driver = self.get_driver(plugin)
            except Exception as e:
                raise PrepareError(f"failed to get DRA Plugin client for plugin name "
                                   f"{plugin}: {e}") from e
            try:
                results = await (driver.prepare(claims) if prepare else driver.unprepare(claims))
            except Exception as e:
                raise PrepareError(f"{rpc} failed: {e}") from e
            for uid, result in results.items():
                info = by_uid.get(uid)
                if info is None:
                    raise PrepareError(f"{rpc} returned result for unknown claim UID {uid}")
                if result.error:
                    raise PrepareError(f"{rpc} failed for claim {info.Namespace}/"
                                       f"{info.ClaimName}: {result.error}")
                if prepare:
                    info.CDIDevices = {**(info.CDIDevices or {}), plugin: result.cdi_devices}
                    if is_prepared(info):
                        self.prepared.add(uid)
                else:
                    self.cache.pop((info.Namespace, info.ClaimName), None)
                    self.prepared.discard(uid)
            self._store()
            if len(results) < len(claims):
                raise PrepareError(f"{rpc} left out {len(claims) - len(results)} claims")
