"""batch/v1 Job registry strategy (v1.30 ``pkg/registry/batch/job/strategy.go``).

The typed functions are the strategy proper: selector generation, dropping fields whose gate
is off (``spec.managedBy`` without ``JobManagedBy``), spec/status separation and the
generation bump. :class:`JobStrategy` binds them, with the serving gates, to the registry's
hooks.
"""

from __future__ import annotations

from kubedra.api import batch
from kubedra.api.base import Obj
from kubedra.api.batch import Job
from kubedra.api.core import PodSpec
from kubedra.api.features import FeatureGates
from kubedra.api.meta import LabelSelector
from kubedra.registry.strategies.base import Strategy
from kubedra.registry.strategies.podfields import ABSENT, drop_other_release_claim_fields
from kubedra.validation.equality import semantic_equal
from kubedra.validation.field import FieldError
from kubedra.validation.job import (
    default_job,
    validate_job,
    validate_job_status_update,
    validate_job_update,
)

# --- typed strategy -----------------------------------------------------------------------------


def generate_selector(job: Job) -> None:
    """Label the pod template with the job's name and uid and select on the uid (labels the
    user already set are kept; validation rejects conflicting ones)."""
    template = job.spec.template.metadata
    if template.labels is None:
        template.labels = {}
    name, uid = job.metadata.name or "", job.metadata.uid or ""
    for key in (batch.LEGACY_JOB_NAME_LABEL, batch.JOB_NAME_LABEL):
        template.labels.setdefault(key, name)
    for key in (batch.LEGACY_CONTROLLER_UID_LABEL, batch.CONTROLLER_UID_LABEL):
        template.labels.setdefault(key, uid)
    if job.spec.selector is None:
        job.spec.selector = LabelSelector()
    if job.spec.selector.match_labels is None:
        job.spec.selector.match_labels = {}
    job.spec.selector.match_labels.setdefault(batch.CONTROLLER_UID_LABEL, uid)


def _uses_dra(spec: PodSpec | None) -> bool:
    if spec is None:
        return False
    containers = (*spec.containers, *(spec.init_containers or ()))
    return bool(spec.resource_claims) or any(c.resources.claims for c in containers)


def _drop_disabled_template_fields(new: PodSpec, old: PodSpec | None, gates: FeatureGates) -> None:
    """``pod.DropDisabledTemplateFields`` for the gates kubedra knows (DRA claims), and the
    claim fields of the other release."""
    drop_other_release_claim_fields(new, gates.release)
    if gates.dynamic_resource_allocation or _uses_dra(old):
        return
    new.resource_claims = None
    for c in (*new.containers, *(new.init_containers or ())):
        c.resources.claims = None


def prepare_for_create(job: Job, gates: FeatureGates) -> None:
    """Generate the selector, clear status, start at generation 1, drop gated-off fields."""
    spec = job.spec
    if not spec.manual_selector:
        generate_selector(job)
    job.status = batch.JobStatus()
    job.metadata.generation = 1
    if not gates.job_pod_failure_policy:
        spec.pod_failure_policy = None
    if not gates.job_managed_by:
        spec.managed_by = None
    if not gates.job_success_policy:
        spec.success_policy = None
    if not gates.job_backoff_limit_per_index:
        spec.backoff_limit_per_index = None
        spec.max_failed_indexes = None
        if spec.pod_failure_policy is not None:
            spec.pod_failure_policy.rules = [
                r for r in spec.pod_failure_policy.rules if r.action != "FailIndex"
            ]
    if not gates.job_pod_replacement_policy:
        spec.pod_replacement_policy = None
    _drop_disabled_template_fields(spec.template.spec, None, gates)


def prepare_for_update(new: Job, old: Job, gates: FeatureGates) -> None:
    """Keep the stored status; drop gated-off fields unless the stored spec uses them (there
    is no such branch for managedBy: immutability rejects adding it); bump the generation
    when the spec changed. ``new.metadata.generation`` must already be the stored one."""
    new.status = old.status
    spec, old_spec = new.spec, old.spec
    if not gates.job_pod_failure_policy and old_spec.pod_failure_policy is None:
        spec.pod_failure_policy = None
    if not gates.job_success_policy and old_spec.success_policy is None:
        spec.success_policy = None
    if not gates.job_backoff_limit_per_index:
        if old_spec.backoff_limit_per_index is None:
            spec.backoff_limit_per_index = None
        if old_spec.max_failed_indexes is None:
            spec.max_failed_indexes = None
    if not gates.job_pod_replacement_policy and old_spec.pod_replacement_policy is None:
        spec.pod_replacement_policy = None
    _drop_disabled_template_fields(spec.template.spec, old_spec.template.spec, gates)
    if not semantic_equal(spec, old_spec):
        new.metadata.generation = (old.metadata.generation or 0) + 1


def prepare_for_status_update(new: Job, old: Job) -> None:
    """The status subresource writes status only: the spec is the stored one."""
    new.spec = old.spec


# --- the registry's hooks ---------------------------------------------------------------------


class JobStrategy(Strategy[Job]):
    """Jobs with the feature gates of the serving API server."""

    has_status_subresource = True
    tracks_generation = True
    default_propagation = "Orphan"  # batch/v1 DELETE orphans pods unless told otherwise
    extra_field_labels: tuple[str, ...] = ("status.successful",)

    def __init__(self, gates: FeatureGates) -> None:
        self.gates = gates
        self.absent_fields = ABSENT[gates.release]

    def default(self, obj: Job) -> None:
        default_job(obj, self.gates)

    def prepare_for_create(self, obj: Job) -> None:
        template_labels = dict(obj.spec.template.metadata.labels or {})
        prepare_for_create(obj, self.gates)
        # Upstream, a job without labels shares its template's label map (defaulting), so the
        # generated labels show up on the job too; keep that visible result.
        labels = obj.spec.template.metadata.labels
        if labels and (not obj.metadata.labels or obj.metadata.labels == template_labels):
            obj.metadata.labels = dict(labels)

    def prepare_for_update(self, new: Job, old: Job) -> None:
        new.metadata.generation = old.metadata.generation  # clients cannot set it
        prepare_for_update(new, old, self.gates)

    def validate(self, obj: Job) -> list[FieldError]:
        return validate_job(obj, self.gates)

    def validate_update(self, new: Job, old: Job) -> list[FieldError]:
        return validate_job_update(new, old, self.gates)

    def prepare_for_status_update(self, new: Job, old: Job) -> None:
        # Upstream's job status strategy resets only the spec (not labels or annotations);
        # the generation is the stored one, as for every update.
        prepare_for_status_update(new, old)
        new.metadata.generation = old.metadata.generation

    def validate_status_update(self, new: Job, old: Job) -> list[FieldError]:
        return validate_job_status_update(new, old, self.gates)

    def selectable_fields(self, obj: Obj) -> dict[str, str]:
        out = super().selectable_fields(obj)
        out["status.successful"] = str((obj.get("status") or {}).get("succeeded") or 0)
        return out

    def field_label_error(self, label: str) -> str:
        return f'field label "{label}" not supported for Job'
