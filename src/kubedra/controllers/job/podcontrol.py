"""Pod writes of the Job controller (``controller.RealPodControl`` and the Job controller's
finalizer patch): create a pod from the Job's template, delete it, drop its tracking
finalizer; each records the upstream event on the Job."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable

from kubedra.api import batch, codec
from kubedra.api.batch import Job
from kubedra.api.core import Pod, PodTemplateSpec
from kubedra.api.meta import ObjectMeta, OwnerReference, TypedObject
from kubedra.client.errors import ApiError, is_not_found
from kubedra.client.rest import Client
from kubedra.controllers.job.pods import has_tracking_finalizer

Record = Callable[[TypedObject, str, str, str], None]
"""Fire-and-forget event recording: (object, type, reason, message)."""

PARALLEL_WRITES = 64
REMOVE_FINALIZER_PATCH = {
    "metadata": {"$deleteFromPrimitiveList/finalizers": [batch.JOB_TRACKING_FINALIZER]}}


def job_template(job: Job) -> PodTemplateSpec:
    """A private copy of the Job's pod template, with the tracking finalizer added."""
    template = codec.decode(codec.encode(job.spec.template), PodTemplateSpec)
    finalizers = template.metadata.finalizers or []
    if batch.JOB_TRACKING_FINALIZER not in finalizers:
        finalizers.append(batch.JOB_TRACKING_FINALIZER)
    template.metadata.finalizers = finalizers
    return template


def pod_from_template(job: Job, template: PodTemplateSpec, generate_name: str) -> Pod:
    """``GetPodFromTemplate``: labels, annotations and finalizers of the template, the Job as
    controller owner."""
    tmeta = template.metadata
    meta = ObjectMeta(
        generate_name=generate_name, namespace=job.metadata.namespace,
        labels=dict(tmeta.labels) if tmeta.labels else None,
        annotations=dict(tmeta.annotations) if tmeta.annotations else None,
        finalizers=list(tmeta.finalizers) if tmeta.finalizers else None,
        owner_references=[OwnerReference(
            api_version="batch/v1", kind="Job", name=job.metadata.name or "",
            uid=job.metadata.uid or "", controller=True, block_owner_deletion=True)])
    spec = codec.decode(codec.encode(template.spec), type(template.spec))
    return Pod(api_version="v1", kind="Pod", metadata=meta, spec=spec)


class PodControl:
    def __init__(self, client: Client, record: Record) -> None:
        self.client = client
        self.record = record

    async def create(self, job: Job, pod: Pod) -> Pod:
        try:
            created = await self.client.create(pod)
        except ApiError as e:
            self.record(job, "Warning", "FailedCreate", f"Error creating: {e.status.message}")
            raise
        self.record(job, "Normal", "SuccessfulCreate", f"Created pod: {created.metadata.name}")
        return created

    async def delete(self, job: Job, pod: Pod) -> None:
        """Delete; a pod that is already gone counts as deleted."""
        name = pod.metadata.name or ""
        try:
            await self.client.delete(Pod, name, pod.metadata.namespace)
        except ApiError as e:
            if is_not_found(e):
                return
            self.record(job, "Warning", "FailedDelete", f"Error deleting: {e.status.message}")
            raise
        self.record(job, "Normal", "SuccessfulDelete", f"Deleted pod: {name}")

    async def remove_finalizer(self, pod: Pod) -> None:
        """Drop the tracking finalizer (strategic merge, as upstream); a pod that is gone or
        has no finalizer needs nothing."""
        if not has_tracking_finalizer(pod):
            return
        try:
            await self.client.send_patch(Pod, pod.metadata.name or "", REMOVE_FINALIZER_PATCH,
                                         namespace=pod.metadata.namespace, patch_type="strategic")
        except ApiError as e:
            if not is_not_found(e):
                raise


async def run_bounded(calls: Iterable[Awaitable[None]]) -> list[Exception | None]:
    """Run pod writes concurrently (at most 64 at a time); each result is None or its error."""
    gate = asyncio.Semaphore(PARALLEL_WRITES)

    async def run(call: Awaitable[None]) -> Exception | None:
        async with gate:
            try:
                await call
            except Exception as e:
                return e
            return None

    return list(await asyncio.gather(*(run(c) for c in calls)))
