"""batch/v1 Job: defaults and validation as Kubernetes v1.30 (``pkg/apis/batch``).

The gate-level entry points (:func:`validate_job`, :func:`validate_job_update`,
:func:`validate_job_status_update`) are what the API server calls; they derive upstream's
option structs from the feature gates and the old object, then run the option-level
functions, which mirror ``ValidateJob``, ``ValidateJobUpdate`` and ``ValidateJobUpdateStatus``.
``spec.managedBy`` is validated whatever the gates say; the gate only decides, in the registry
strategy, whether the field survives a create.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import msgspec

from kubedra.api import batch
from kubedra.api.batch import Job, JobSpec
from kubedra.api.core import PodTemplateSpec
from kubedra.api.features import FeatureGates
from kubedra.validation import gorepr
from kubedra.validation.equality import semantic_equal
from kubedra.validation.field import (
    ROOT,
    ErrorList,
    Path,
    invalid,
    not_supported,
    required,
    too_long_max_length,
)
from kubedra.validation.job_policies import (
    validate_pod_failure_policy,
    validate_pod_replacement_policy,
    validate_success_policy,
)
from kubedra.validation.job_status import (
    JobStatusValidationOptions,
    status_validation_options,
    validate_job_status_transition,
)
from kubedra.validation.labelselector import (
    has_invalid_label_value,
    selector_matches,
    validate_label_selector,
)
from kubedra.validation.meta import (
    FIELD_IMMUTABLE,
    validate_nonnegative_field,
    validate_object_meta,
    validate_object_meta_update,
)
from kubedra.validation.names import is_dns1123_label, is_dns1123_subdomain, name_is_dns_subdomain
from kubedra.validation.pod_template import default_pod_spec, validate_pod_template_spec

MAX_INT32 = 2**31 - 1
MAX_MANAGED_BY_LENGTH = 63
MAX_PARALLELISM_FOR_INDEXED_JOB = 100_000
MAX_FAILED_INDEXES_FOR_INDEXED_JOB = 100_000
COMPLETIONS_SOFT_LIMIT = 100_000
PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS = 10_000
MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS = 10_000

_HTTP_PATH_FMT = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+"
_HTTP_PATH_CHARS = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/-._~%!$&'()*+,;=:"
)
SPEC = ROOT.child("spec")
METADATA = ROOT.child("metadata")


@dataclass(frozen=True, slots=True)
class JobValidationOptions:
    """Upstream ``JobValidationOptions`` (the pod options kubedra uses are folded in)."""

    allow_invalid_label_value_in_selector: bool = False
    allow_mutable_scheduling_directives: bool = False
    allow_elastic_indexed_jobs: bool = False
    require_prefixed_labels: bool = False


# --- defaults -----------------------------------------------------------------------------------


def default_job(job: Job, gates: FeatureGates) -> None:
    """``SetDefaults_Job`` plus the pod template's core defaults (mutates ``job``)."""
    spec = job.spec
    if spec.completions is None and spec.parallelism is None:
        spec.completions = 1
        spec.parallelism = 1
    if spec.parallelism is None:
        spec.parallelism = 1
    if spec.backoff_limit is None:
        spec.backoff_limit = MAX_INT32 if spec.backoff_limit_per_index is not None else 6
    template_labels = spec.template.metadata.labels
    if template_labels and not job.metadata.labels:
        job.metadata.labels = dict(template_labels)
    if spec.completion_mode is None:
        spec.completion_mode = batch.NON_INDEXED_COMPLETION
    if spec.suspend is None:
        spec.suspend = False
    for rule in spec.pod_failure_policy.rules if spec.pod_failure_policy else ():
        for pattern in rule.on_pod_conditions or ():
            if not pattern.status:
                pattern.status = "True"
    if gates.job_pod_replacement_policy and spec.pod_replacement_policy is None:
        spec.pod_replacement_policy = (
            batch.FAILED if spec.pod_failure_policy is not None else batch.TERMINATING_OR_FAILED
        )
    if spec.manual_selector is None:
        spec.manual_selector = False
    default_pod_spec(spec.template.spec)


# --- options ------------------------------------------------------------------------------------


def job_validation_options(new: Job, old: Job | None, gates: FeatureGates) -> JobValidationOptions:
    """``validationOptionsForJob``: create requires the prefixed labels; an update requires them
    only if the stored template has them, and relaxes rules the stored object already breaks."""
    opts = JobValidationOptions(
        allow_elastic_indexed_jobs=gates.elastic_indexed_job, require_prefixed_labels=True
    )
    if old is None:
        return opts
    labels = old.spec.template.metadata.labels or {}
    return dataclasses.replace(
        opts,
        allow_invalid_label_value_in_selector=has_invalid_label_value(old.spec.selector),
        allow_mutable_scheduling_directives=bool(old.spec.suspend)
        and old.status.start_time is None,
        require_prefixed_labels=batch.JOB_NAME_LABEL in labels
        and batch.CONTROLLER_UID_LABEL in labels,
    )


# --- spec.managedBy -----------------------------------------------------------------------------


def is_domain_prefixed_path(path: Path, value: str) -> ErrorList:
    """apimachinery ``IsDomainPrefixedPath``: ``<DNS subdomain>/<HTTP path>``."""
    if not value:
        return [required(path)]
    host, sep, rest = value.partition("/")
    if not sep or not host or not rest:
        return [invalid(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")')]
    errs = [invalid(path, host, msg) for msg in is_dns1123_subdomain(host)]
    if not set(rest) <= _HTTP_PATH_CHARS:
        errs.append(
            invalid(path, rest, f"Invalid path (regex used for validation is '{_HTTP_PATH_FMT}')")
        )
    return errs


def _validate_managed_by(value: str, path: Path) -> ErrorList:
    errs = is_domain_prefixed_path(path, value)
    if len(value.encode()) > MAX_MANAGED_BY_LENGTH:
        errs.append(too_long_max_length(path, value, MAX_MANAGED_BY_LENGTH))
    return errs


# --- create -------------------------------------------------------------------------------------


def _has_label(template: PodTemplateSpec, path: Path, key: str, expected: str) -> ErrorList:
    """``ValidateHasLabel`` on the pod template's metadata."""
    labels = template.metadata.labels or {}
    p = path.child("labels").key(key)
    if key not in labels:
        return [required(p, expected)]
    if labels[key] != expected:
        return [invalid(p, gorepr.GoRepr(gorepr.string_map(labels)), f"must be '{expected}'")]
    return []


def _validate_generated_selector(job: Job, require_prefixed_labels: bool) -> ErrorList:
    spec = job.spec
    if spec.manual_selector or spec.selector is None:
        return []
    uid, name = job.metadata.uid or "", job.metadata.name or ""
    errs: ErrorList = []
    if not uid:
        errs.append(required(METADATA.child("uid")))
    tpath = SPEC.child("template", "metadata")
    errs += _has_label(spec.template, tpath, batch.LEGACY_CONTROLLER_UID_LABEL, uid)
    errs += _has_label(spec.template, tpath, batch.LEGACY_JOB_NAME_LABEL, name)
    expected = {batch.LEGACY_CONTROLLER_UID_LABEL: uid, batch.LEGACY_JOB_NAME_LABEL: name}
    if require_prefixed_labels:
        errs += _has_label(spec.template, tpath, batch.CONTROLLER_UID_LABEL, uid)
        errs += _has_label(spec.template, tpath, batch.JOB_NAME_LABEL, name)
        expected[batch.CONTROLLER_UID_LABEL] = uid
        expected[batch.JOB_NAME_LABEL] = name
    if selector_matches(spec.selector, expected) is False:
        errs.append(
            invalid(
                SPEC.child("selector"),
                gorepr.label_selector(spec.selector),
                "`selector` not auto-generated",
            )
        )
    return errs


def _validate_indexed(spec: JobSpec, path: Path) -> ErrorList:
    errs: ErrorList = []
    if spec.completions is None:
        errs.append(required(path.child("completions"), "when completion mode is Indexed"))
    if spec.parallelism is not None and spec.parallelism > MAX_PARALLELISM_FOR_INDEXED_JOB:
        errs.append(
            invalid(
                path.child("parallelism"),
                spec.parallelism,
                f"must be less than or equal to {MAX_PARALLELISM_FOR_INDEXED_JOB} "
                "when completion mode is Indexed",
            )
        )
    max_failed = spec.max_failed_indexes
    if max_failed is not None and spec.completions is not None and max_failed > spec.completions:
        errs.append(
            invalid(
                path.child("maxFailedIndexes"),
                max_failed,
                "must be less than or equal to completions",
            )
        )
    if max_failed is not None and max_failed > MAX_FAILED_INDEXES_FOR_INDEXED_JOB:
        errs.append(
            invalid(
                path.child("maxFailedIndexes"),
                max_failed,
                f"must be less than or equal to {MAX_FAILED_INDEXES_FOR_INDEXED_JOB}",
            )
        )
    if (
        spec.completions is not None
        and spec.completions > COMPLETIONS_SOFT_LIMIT
        and spec.backoff_limit_per_index is not None
    ):
        high = (
            f"when completions are above {COMPLETIONS_SOFT_LIMIT} "
            "and used with backoff limit per index"
        )
        if max_failed is None:
            errs.append(
                required(
                    path.child("maxFailedIndexes"),
                    f"must be specified when completions is above {COMPLETIONS_SOFT_LIMIT}",
                )
            )
        if (
            spec.parallelism is not None
            and spec.parallelism > PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS
        ):
            errs.append(
                invalid(
                    path.child("parallelism"),
                    spec.parallelism,
                    "must be less than or equal to "
                    f"{PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS} {high}",
                )
            )
        if max_failed is not None and max_failed > MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS:
            errs.append(
                invalid(
                    path.child("maxFailedIndexes"),
                    max_failed,
                    "must be less than or equal to "
                    f"{MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS} {high}",
                )
            )
    return errs


def _validate_counts(spec: JobSpec, path: Path) -> ErrorList:
    errs: ErrorList = []
    for attr, name in (
        ("parallelism", "parallelism"),
        ("completions", "completions"),
        ("active_deadline_seconds", "activeDeadlineSeconds"),
        ("backoff_limit", "backoffLimit"),
        ("ttl_seconds_after_finished", "ttlSecondsAfterFinished"),
        ("backoff_limit_per_index", "backoffLimitPerIndex"),
    ):
        value = getattr(spec, attr)
        if value is not None:
            errs += validate_nonnegative_field(value, path.child(name))
    if spec.max_failed_indexes is not None:
        errs += validate_nonnegative_field(spec.max_failed_indexes, path.child("maxFailedIndexes"))
        if spec.backoff_limit_per_index is None:
            errs.append(
                required(path.child("backoffLimitPerIndex"), "when maxFailedIndexes is specified")
            )
    return errs


def _validate_restart_policy(spec: JobSpec, path: Path) -> ErrorList:
    policy = spec.template.spec.restart_policy or ""
    p = path.child("template", "spec", "restartPolicy")
    if policy in ("", "Always"):
        return [required(p, 'valid values: "OnFailure", "Never"')]
    if policy not in ("OnFailure", "Never"):
        return [not_supported(p, policy, ("OnFailure", "Never"))]
    if spec.pod_failure_policy is not None and policy != "Never":
        return [invalid(p, policy, 'only "Never" is supported when podFailurePolicy is specified')]
    return []


def _validate_job_spec_fields(spec: JobSpec, path: Path) -> ErrorList:
    """``validateJobSpec``: everything but the selector."""
    errs = _validate_counts(spec, path)
    if spec.managed_by is not None:
        errs += _validate_managed_by(spec.managed_by, path.child("managedBy"))
    mode = spec.completion_mode
    if mode is not None:
        if mode not in (batch.NON_INDEXED_COMPLETION, batch.INDEXED_COMPLETION):
            errs.append(
                not_supported(
                    path.child("completionMode"),
                    mode,
                    (batch.NON_INDEXED_COMPLETION, batch.INDEXED_COMPLETION),
                )
            )
        if mode == batch.INDEXED_COMPLETION:
            errs += _validate_indexed(spec, path)
    if mode in (None, batch.NON_INDEXED_COMPLETION):
        for attr, name in (
            ("backoff_limit_per_index", "backoffLimitPerIndex"),
            ("max_failed_indexes", "maxFailedIndexes"),
        ):
            value = getattr(spec, attr)
            if value is not None:
                errs.append(invalid(path.child(name), value, "requires indexed completion mode"))
    if spec.pod_failure_policy is not None:
        errs += validate_pod_failure_policy(spec, path.child("podFailurePolicy"))
    if spec.success_policy is not None:
        errs += validate_success_policy(spec, path.child("successPolicy"))
    errs += validate_pod_replacement_policy(spec, path.child("podReplacementPolicy"))
    errs += validate_pod_template_spec(spec.template, path.child("template"))
    errs += _validate_restart_policy(spec, path)
    return errs


def validate_job_spec(spec: JobSpec, path: Path, opts: JobValidationOptions) -> ErrorList:
    """``ValidateJobSpec``: the fields, a required selector, and selector/template agreement."""
    errs = _validate_job_spec_fields(spec, path)
    if spec.selector is None:
        errs.append(required(path.child("selector")))
    else:
        errs += validate_label_selector(
            spec.selector, path.child("selector"), opts.allow_invalid_label_value_in_selector
        )
    labels = spec.template.metadata.labels
    if selector_matches(spec.selector, labels) is False:
        errs.append(
            invalid(
                path.child("template", "metadata", "labels"),
                gorepr.GoRepr(gorepr.string_map(labels)),
                "`selector` does not match template `labels`",
            )
        )
    return errs


def validate_job_with_options(job: Job, opts: JobValidationOptions) -> ErrorList:
    """``ValidateJob``: metadata, generated selector, spec, and the Indexed pod hostnames."""
    errs = validate_object_meta(job.metadata, True, name_is_dns_subdomain, METADATA)
    errs += _validate_generated_selector(job, opts.require_prefixed_labels)
    errs += validate_job_spec(job.spec, SPEC, opts)
    spec = job.spec
    if (
        spec.completion_mode == batch.INDEXED_COMPLETION
        and spec.completions is not None
        and spec.completions > 0
    ):
        hostname = f"{job.metadata.name or ''}-{spec.completions - 1}"
        if is_dns1123_label(hostname):
            errs.append(
                invalid(
                    METADATA.child("name"),
                    job.metadata.name or "",
                    f"will not able to create pod with invalid DNS label: {hostname}",
                )
            )
    return errs


# --- update -------------------------------------------------------------------------------------


def _immutable_scalar(new: object, old: object, path: Path) -> ErrorList:
    """``ValidateImmutableField`` on a pointer to a scalar: nil differs from any value."""
    return [] if new == old else [invalid(path, new, FIELD_IMMUTABLE)]


def _immutable_struct(
    new: msgspec.Struct | None, old: msgspec.Struct | None, path: Path
) -> ErrorList:
    if semantic_equal(new, old):
        return []
    return [invalid(path, None if new is None else gorepr.struct_json(new), FIELD_IMMUTABLE)]


def _validate_completions_update(
    spec: JobSpec, old: JobSpec, path: Path, opts: JobValidationOptions
) -> ErrorList:
    indexed = spec.completion_mode == batch.INDEXED_COMPLETION
    if not opts.allow_elastic_indexed_jobs or not indexed:
        return _immutable_scalar(spec.completions, old.completions, path)
    if spec.completions == old.completions or spec.completions is None:
        return []
    if spec.completions != spec.parallelism:
        return [
            invalid(path, spec.completions, "can only be modified in tandem with spec.parallelism")
        ]
    return []


def _template_for_comparison(
    template: PodTemplateSpec, old: PodTemplateSpec, opts: JobValidationOptions
) -> PodTemplateSpec:
    """The old template with the fields a suspended, never-started job may change taken from
    the new one (``validatePodTemplateUpdate``)."""
    if not opts.allow_mutable_scheduling_directives:
        return old
    new_spec, old_spec = template.spec, old.spec
    affinity = old_spec.affinity
    if new_spec.affinity is None and affinity is not None:
        affinity = msgspec.structs.replace(affinity, node_affinity=None)
        if affinity.pod_affinity is None and affinity.pod_anti_affinity is None:
            affinity = None
    elif new_spec.affinity is not None:
        base = affinity if affinity is not None else type(new_spec.affinity)()
        affinity = msgspec.structs.replace(base, node_affinity=new_spec.affinity.node_affinity)
    spec = msgspec.structs.replace(
        old_spec,
        affinity=affinity,
        node_selector=new_spec.node_selector,
        tolerations=new_spec.tolerations,
        scheduling_gates=new_spec.scheduling_gates,
    )
    meta = msgspec.structs.replace(
        old.metadata,
        annotations=template.metadata.annotations,
        labels=template.metadata.labels,
    )
    return msgspec.structs.replace(old, metadata=meta, spec=spec)


def validate_job_spec_update(
    spec: JobSpec, old: JobSpec, path: Path, opts: JobValidationOptions
) -> ErrorList:
    """``ValidateJobSpecUpdate``: the spec again, then the immutable fields."""
    errs = validate_job_spec(spec, path, opts)
    errs += _validate_completions_update(spec, old, path.child("completions"), opts)
    if not semantic_equal(spec.selector, old.selector):
        errs.append(
            invalid(
                path.child("selector"),
                None if spec.selector is None else gorepr.label_selector(spec.selector),
                FIELD_IMMUTABLE,
            )
        )
    old_template = _template_for_comparison(spec.template, old.template, opts)
    errs += _immutable_struct(spec.template, old_template, path.child("template"))
    errs += _immutable_scalar(
        spec.completion_mode, old.completion_mode, path.child("completionMode")
    )
    errs += _immutable_struct(
        spec.pod_failure_policy, old.pod_failure_policy, path.child("podFailurePolicy")
    )
    errs += _immutable_scalar(
        spec.backoff_limit_per_index,
        old.backoff_limit_per_index,
        path.child("backoffLimitPerIndex"),
    )
    errs += _immutable_scalar(spec.managed_by, old.managed_by, path.child("managedBy"))
    errs += _immutable_struct(spec.success_policy, old.success_policy, path.child("successPolicy"))
    return errs


def validate_job_update_with_options(new: Job, old: Job, opts: JobValidationOptions) -> ErrorList:
    """``ValidateJobUpdate``: metadata update rules and ``ValidateJobSpecUpdate``."""
    errs = validate_object_meta_update(new.metadata, old.metadata, METADATA)
    errs += validate_job_spec_update(new.spec, old.spec, SPEC, opts)
    return errs


def validate_job_update_status_with_options(
    new: Job, old: Job, opts: JobStatusValidationOptions
) -> ErrorList:
    """``ValidateJobUpdateStatus``: metadata update rules and the status rules."""
    errs = validate_object_meta_update(new.metadata, old.metadata, METADATA)
    errs += validate_job_status_transition(new, old, opts)
    return errs


# --- what the API server calls -----------------------------------------------------------------


def validate_job(job: Job, gates: FeatureGates) -> ErrorList:
    """Create validation (``jobStrategy.Validate``)."""
    return validate_job_with_options(job, job_validation_options(job, None, gates))


def validate_job_update(new: Job, old: Job, gates: FeatureGates) -> ErrorList:
    """Update validation (``jobStrategy.ValidateUpdate``): the object, then the transition."""
    opts = job_validation_options(new, old, gates)
    return validate_job_with_options(new, opts) + validate_job_update_with_options(new, old, opts)


def validate_job_status_update(new: Job, old: Job, gates: FeatureGates) -> ErrorList:
    """Status update validation (``jobStatusStrategy.ValidateUpdate``)."""
    opts = status_validation_options(new, old, gates)
    return validate_job_update_status_with_options(new, old, opts)
