"""The ResourceClaim controller (kube-controller-manager's, as v1.30 and v1.34 have it).

* Creates a claim for every ``pod.spec.resourceClaims`` entry that names a template, owned by
  the pod, and records its name in ``pod.status.resourceClaimStatuses``.
* For pods bound without the scheduler, reserves their already allocated claims.
* Drops ``reservedFor`` entries of pods that are gone, replaced or done; when the last
  consumer goes, deallocates claims that carry the generation's finalizer (clear
  ``status.allocation`` in the same status update, then drop the finalizer with an update);
  deletes unused claims generated for pods that will not run.

It serves the claims of the release the server emulates, ``resource.k8s.io/v1alpha2`` for
1.30 and ``v1`` for 1.34: the generation's kinds and finalizer are its
:class:`~kubedra.api.resourceclaim.ClaimAPI`; the two rules that differ by model are
:func:`deallocates` and :func:`refused_template`.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from typing import Any, NoReturn

import msgspec

from kubedra.api.core import Pod, PodResourceClaim
from kubedra.api.features import FeatureGates
from kubedra.api.release import R1_30, Release
from kubedra.api.resource import v1, v1alpha2
from kubedra.api.resourceclaim import (
    POD_CLAIM_NAME_ANNOTATION,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimTemplate,
    can_be_reserved,
    claim_api,
    claim_from_template,
    claim_names,
    claim_ref,
    consumer_ref,
    is_for_pod,
    is_reserved_for_pod,
    owning_pod,
    template_not_found,
)
from kubedra.client.errors import ApiError, is_not_found
from kubedra.client.events import EventRecorder
from kubedra.client.informer import Informer, Informers, object_key, run_informed
from kubedra.client.mutationcache import MutationCache
from kubedra.client.rest import Client
from kubedra.client.workqueue import WorkQueue
from kubedra.controllers.metrics import ControllerMetrics, controller_metrics

log = logging.getLogger(__name__)

RESOURCE_CLAIM_WORKERS = 10
"""Concurrent syncs, as kube-controller-manager v1.30 starts this controller with: each sync
waits on one or two writes, so fewer workers cap how fast pods get their claims."""


def deallocates(claim: ResourceClaim, deleting: bool) -> bool:
    """Whether a claim with the finalizer is deallocated when its last consumer goes: every
    v1 claim (1.34 has only delayed allocation); a v1alpha2 ``Immediate`` claim stays
    allocated until it is deleted."""
    if isinstance(claim, v1alpha2.ResourceClaim):
        return claim.spec.allocation_mode != v1alpha2.ALLOCATION_MODE_IMMEDIATE or deleting
    return True


def refused_template(template: ResourceClaimTemplate, gates: FeatureGates) -> str | None:
    """Why no claim is made from ``template`` under ``gates`` (a v1 template asking admin
    access with DRAAdminAccess off, as 1.34 refuses it), else None."""
    if isinstance(template, v1.ResourceClaimTemplate) and not gates.dra_admin_access and any(
            r.exactly is not None and r.exactly.admin_access is True
            for r in template.spec.spec.devices.requests or ()):
        return "admin access is requested, but the feature is disabled"
    return None


def unsupported_entry(ref: ResourceClaimConsumerReference) -> str:
    """upstream's text for a ``reservedFor`` entry that is not a pod (Go's ``%v`` of it);
    upstream fails the sync with it for ever, kubedra logs it and keeps the entry
    (docs/deviations.md)."""
    return f"unsupported ReservedFor entry: {{{ref.api_group} {ref.resource} {ref.name} {ref.uid}}}"


def is_pod_done(pod: Pod) -> bool:
    """Terminal phase, or deleted before it was ever scheduled: it will not use its claims."""
    if pod.status.phase in ("Succeeded", "Failed"):
        return True
    return pod.metadata.deletion_timestamp is not None and not pod.spec.node_name


class ResourceClaimController:
    def __init__(self, client: Client, *, release: Release = R1_30,
                 gates: FeatureGates | None = None, workers: int = RESOURCE_CLAIM_WORKERS,
                 metrics: ControllerMetrics | None = None,
                 informers: Informers | None = None) -> None:
        """``release``: the one the server emulates (its claims are served); ``gates``: the
        controller manager's (default: the release's); ``informers``: the process's shared
        ones (the controller manager's Job controller watches pods too), else its own."""
        self.client = client
        self.workers = workers
        self.api = claim_api(release)
        self.gates = gates if gates is not None else FeatureGates.for_release(release)
        shared = informers if informers is not None else Informers(client)
        self.pods = shared.get(Pod)
        self.claims: Informer[Any] = shared.get(self.api.claim)
        self.templates: Informer[Any] = shared.get(self.api.template)
        self.informers: tuple[Informer[Any], ...] = (self.pods, self.claims, self.templates)
        self.queue = WorkQueue("resource_claim", metrics=(metrics or controller_metrics()).queue)
        self.events = EventRecorder(client, "resource_claim")
        self._deleted_pods: OrderedDict[str, None] = OrderedDict()
        self._created: dict[tuple[str, str], str] = {}
        self._owned: dict[tuple[str, str], str] = {}  # (pod UID, pod claim name) -> claim
        self._written: MutationCache[ResourceClaim] = MutationCache()
        self._wire()

    def _wire(self) -> None:
        self.pods.add_handler(on_add=self._pod_changed,
                              on_update=lambda _old, new: self._pod_changed(new),
                              on_delete=self._pod_deleted)
        self.claims.add_handler(on_add=self._claim_changed,
                                on_update=lambda _old, new: self._claim_changed(new),
                                on_delete=self._claim_deleted)
        self.templates.add_handler(on_add=self._template_added)

    # --- event handlers -----------------------------------------------------------------

    def _pod_changed(self, pod: Pod) -> None:
        if pod.spec.resource_claims:
            self.queue.add("pod:" + object_key(pod))
        if is_pod_done(pod):
            self._enqueue_claims_of(pod)

    def _pod_deleted(self, pod: Pod) -> None:
        if pod.metadata.uid:
            self._deleted_pods[pod.metadata.uid] = None
            while len(self._deleted_pods) > 10_000:
                self._deleted_pods.popitem(last=False)
        self._enqueue_claims_of(pod)

    def _enqueue_claims_of(self, pod: Pod) -> None:
        ns = pod.metadata.namespace
        for name in sorted(claim_names(pod)):
            self.queue.add(f"claim:{ns}/{name}")

    def _claim_deleted(self, claim: ResourceClaim) -> None:
        key = _owner_key(claim)
        if key is not None and self._owned.get(key) == claim.metadata.name:
            del self._owned[key]
        self._written.forget(claim)
        self._claim_changed(claim)

    def _claim_changed(self, claim: ResourceClaim) -> None:
        self._written.observed(claim)
        key = _owner_key(claim)
        if key is not None and claim.metadata.deletion_timestamp is None:
            self._owned[key] = claim.metadata.name or ""
            self._created.pop(key, None)  # the informer knows it now
        if claim.status.reserved_for or claim.metadata.deletion_timestamp or owning_pod(claim):
            self.queue.add("claim:" + object_key(claim))

    def _template_added(self, template: ResourceClaimTemplate) -> None:
        ns, name = template.metadata.namespace, template.metadata.name
        for pod in self.pods.list():
            if pod.metadata.namespace == ns and any(
                    claim_ref(pc)[1] == name for pc in pod.spec.resource_claims or ()):
                self.queue.add("pod:" + object_key(pod))

    # --- running --------------------------------------------------------------------------

    async def run(self) -> None:
        log.info("Starting controller", {"controller": "resourceclaim-controller",
                                          "workers": self.workers})
        await run_informed(self.informers,
                           lambda: self.queue.run_workers(self.sync, self.workers))

    async def stop(self) -> None:
        for informer in self.informers:
            await informer.stop()

    async def sync(self, key: str) -> None:
        what, _, rest = key.partition(":")
        namespace, _, name = rest.partition("/")
        if what == "pod":
            await self.sync_pod(namespace, name)
        else:
            await self.sync_claim(namespace, name)

    # --- pods -----------------------------------------------------------------------------

    async def sync_pod(self, namespace: str, name: str) -> None:
        pod = self.pods.get(name, namespace)
        if pod is None or pod.metadata.deletion_timestamp is not None or is_pod_done(pod):
            return
        statuses = {s.name: s.resource_claim_name
                    for s in pod.status.resource_claim_statuses or ()}
        added: dict[str, str] = {}
        for pc in pod.spec.resource_claims or ():
            if claim_ref(pc)[1]:
                claim_name = await self._ensure_claim(pod, pc, statuses.get(pc.name))
                if claim_name is not None and statuses.get(pc.name) != claim_name:
                    added[pc.name] = claim_name
        if added:
            merged = [{"name": n, "resourceClaimName": c}
                      for n, c in {**{k: v for k, v in statuses.items() if v}, **added}.items()]
            await self.client.send_patch(Pod, name, {"status": {"resourceClaimStatuses": merged}},
                                         namespace=namespace, subresource="status")
        if pod.spec.node_name:
            await self._reserve_for_bound_pod(pod, {**statuses, **added})

    async def _ensure_claim(self, pod: Pod, pc: PodResourceClaim,
                            recorded: str | None) -> str | None:
        ns = pod.metadata.namespace or ""
        uid = pod.metadata.uid or ""
        if recorded:
            claim = self.claims.get(recorded, ns)
            if claim is None or is_for_pod(pod, claim):
                return recorded
        owned = self._owned.get((uid, pc.name))
        if owned is not None:
            return owned
        cached = self._created.get((uid, pc.name))
        if cached is not None:
            return cached
        template_name = claim_ref(pc)[1] or ""
        template: ResourceClaimTemplate | None = self.templates.get(template_name, ns)
        if template is None:
            await self._creation_failed(pod, pc, template_not_found(template_name))
        refused = refused_template(template, self.gates)
        if refused is not None:
            await self._creation_failed(pod, pc, refused)
        claim = claim_from_template(pod, pc.name, template)
        try:
            created = await self.client.create(claim)
        except ApiError as e:
            await self.events.record(pod, "Warning", "FailedResourceClaimCreation",
                                     f"PodResourceClaim {pc.name}: create ResourceClaim "
                                     f"{claim.metadata.generate_name}: {e.status.message}")
            raise
        assert created.metadata.name is not None
        self._created[(uid, pc.name)] = created.metadata.name
        return created.metadata.name

    async def _creation_failed(self, pod: Pod, pc: PodResourceClaim, message: str) -> NoReturn:
        await self.events.record(pod, "Warning", "FailedResourceClaimCreation",
                                 f"PodResourceClaim {pc.name}: {message}")
        raise LookupError(message)

    async def _reserve_for_bound_pod(self, pod: Pod, statuses: dict[str, str | None]) -> None:
        ns = pod.metadata.namespace or ""
        refs = [(pc.name, *claim_ref(pc)) for pc in pod.spec.resource_claims or ()]
        names = [statuses.get(name) if template else direct for name, direct, template in refs]
        for claim_name in names:
            # held back after a conflict, the informer's copy is tried anyway: a second 409
            # retries this pod with back-off, and no claim event would queue the pod again
            claim = (self._claim(claim_name, ns) or self.claims.get(claim_name, ns)
                     if claim_name else None)
            if claim is None or not can_be_reserved(claim) or is_reserved_for_pod(pod, claim):
                continue
            claim = msgspec.structs.replace(claim, status=msgspec.structs.replace(
                claim.status, reserved_for=[*(claim.status.reserved_for or ()),
                                            consumer_ref(pod, self.api)]))
            await self._written.write(claim, self.client.update_status)

    # --- claims ---------------------------------------------------------------------------

    def _claim(self, name: str, namespace: str) -> ResourceClaim | None:
        """The newest copy of a claim this controller knows (None: gone, or wait for the
        watch to bring the version a conflict showed)."""
        cached = self.claims.get(name, namespace)
        return None if cached is None else self._written.newest(cached)

    async def _pod_is_gone(self, namespace: str, name: str, uid: str) -> bool:
        if uid in self._deleted_pods:
            return True
        try:
            live = await self.client.get(Pod, name, namespace)
        except ApiError as e:
            if is_not_found(e):
                return True
            raise
        return live.metadata.uid != uid or is_pod_done(live)

    async def sync_claim(self, namespace: str, name: str) -> None:
        claim = self._claim(name, namespace)
        if claim is None:
            return
        reserved = claim.status.reserved_for or []
        valid: list[ResourceClaimConsumerReference] = []
        for ref in reserved:
            if ref.api_group or ref.resource != "pods":
                log.warning("claim %s/%s: %s", namespace, name, unsupported_entry(ref))
                valid.append(ref)
                continue
            pod = self.pods.get(ref.name, namespace)
            if pod is not None:
                if pod.metadata.uid == ref.uid and not is_pod_done(pod):
                    valid.append(ref)
            elif not await self._pod_is_gone(namespace, ref.name, ref.uid):
                valid.append(ref)
        has_finalizer = self.api.finalizer in (claim.metadata.finalizers or ())
        deleting = claim.metadata.deletion_timestamp is not None
        had_allocation = claim.status.allocation is not None
        if len(valid) < len(reserved):
            status = msgspec.structs.replace(claim.status, reserved_for=valid or None)
            if not valid and has_finalizer and deallocates(claim, deleting):
                status = msgspec.structs.replace(status, allocation=None)
            claim = await self._written.write(msgspec.structs.replace(claim, status=status),
                                              self.client.update_status)
            if had_allocation and claim.status.allocation is None:
                log.info("Deallocated claim", {"claim": object_key(claim)})
            if has_finalizer and claim.status.allocation is None:
                await self._drop_finalizer(claim)
        elif has_finalizer and deleting and not valid:
            if claim.status.allocation is not None:
                claim = await self._written.write(msgspec.structs.replace(
                    claim, status=msgspec.structs.replace(claim.status, allocation=None)),
                    self.client.update_status)
                log.info("Deallocated claim", {"claim": object_key(claim)})
            await self._drop_finalizer(claim)
        if not valid:
            await self._delete_if_unneeded(claim)

    async def _drop_finalizer(self, claim: ResourceClaim) -> None:
        finalizers = [f for f in claim.metadata.finalizers or ()
                      if f != self.api.finalizer]
        meta = msgspec.structs.replace(claim.metadata, finalizers=finalizers or None)
        await self._written.write(msgspec.structs.replace(claim, metadata=meta),
                                  self.client.update)

    async def _delete_if_unneeded(self, claim: ResourceClaim) -> None:
        owner = owning_pod(claim)
        if owner is None or claim.metadata.deletion_timestamp is not None:
            return
        pod_name, pod_uid = owner
        pod = self.pods.get(pod_name, claim.metadata.namespace)
        if pod is None:
            return  # the garbage collector removes claims of pods that are truly gone
        if pod.metadata.uid != pod_uid or is_pod_done(pod):
            try:
                await self.client.delete(self.api.claim, claim.metadata.name or "",
                                         claim.metadata.namespace)
            except ApiError as e:
                if not is_not_found(e):
                    raise


def _owner_key(claim: ResourceClaim) -> tuple[str, str] | None:
    """(pod UID, pod claim name) of a claim generated for a pod from a template."""
    owner = owning_pod(claim)
    pod_claim = (claim.metadata.annotations or {}).get(POD_CLAIM_NAME_ANNOTATION)
    return None if owner is None or pod_claim is None else (owner[1], pod_claim)
