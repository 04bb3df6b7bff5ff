"""Job create/update validation beyond the managedBy vectors (v1.30 texts and paths)."""

from __future__ import annotations

from typing import Any

from kubedra.api.features import FeatureGates
from kubedra.validation.field import FieldError
from kubedra.validation.job import (
    job_validation_options,
    validate_job,
    validate_job_update,
)
from tests.unit.validation.job_samples import copy, created, manifest, stored

GATES = FeatureGates()


def messages(errs: list[FieldError]) -> list[str]:
    return [str(e) for e in errs]


def raw_errors(raw: dict[str, Any], gates: FeatureGates = GATES) -> list[str]:
    """Create validation of the manifest ``raw`` after defaulting and PrepareForCreate."""
    return messages(validate_job(created(raw, gates), gates))


def create_errors(**spec: Any) -> list[str]:
    return raw_errors(manifest(**spec))


def set_restart_policy(raw: dict[str, Any], policy: str) -> None:
    raw["spec"]["template"]["spec"]["restartPolicy"] = policy


def test_defaulted_and_prepared_manifest_is_valid() -> None:
    assert validate_job(created(), GATES) == []
    assert create_errors(completionMode="Indexed", completions=4, parallelism=2) == []
    assert create_errors(parallelism=5, activeDeadlineSeconds=60, ttlSecondsAfterFinished=0) == []


def test_restart_policy_must_be_on_failure_or_never() -> None:
    raw = manifest()
    set_restart_policy(raw, "Always")
    assert raw_errors(raw) == [
        'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'
    ]
    set_restart_policy(raw, "Sometimes")
    assert raw_errors(raw) == [
        'spec.template.spec.restartPolicy: Unsupported value: "Sometimes": supported values: '
        '"Always", "OnFailure", "Never"',
        'spec.template.spec.restartPolicy: Unsupported value: "Sometimes": supported values: '
        '"OnFailure", "Never"',
    ]


def test_negative_counts() -> None:
    assert create_errors(parallelism=-1, backoffLimit=-2) == [
        "spec.parallelism: Invalid value: -1: must be greater than or equal to 0",
        "spec.backoffLimit: Invalid value: -2: must be greater than or equal to 0",
    ]


def test_selector_must_match_template_labels() -> None:
    job = created(manifest(manualSelector=True, selector={"matchLabels": {"app": "x"}}))
    assert messages(validate_job(job, GATES)) == [
        "spec.template.metadata.labels: Invalid value: map[string]string(nil): "
        "`selector` does not match template `labels`"
    ]
    job.spec.template.metadata.labels = {"app": "y"}
    assert messages(validate_job(job, GATES)) == [
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"y"}: '
        "`selector` does not match template `labels`"
    ]
    job.spec.template.metadata.labels = {"app": "x"}
    assert validate_job(job, GATES) == []


def test_generated_labels_must_carry_the_job_identity() -> None:
    job = created()
    assert job.spec.template.metadata.labels is not None
    job.spec.template.metadata.labels["job-name"] = "other"
    errs = messages(validate_job(job, GATES))
    assert errs[0].startswith(
        'spec.template.metadata.labels[job-name]: Invalid value: map[string]string{"batch.'
    )
    assert errs[0].endswith(": must be 'pi'")
    job = created()
    job.metadata.uid = None
    assert "metadata.uid: Required value" in messages(validate_job(job, GATES))


def test_selector_not_auto_generated() -> None:
    job = created()
    assert job.spec.selector is not None and job.spec.selector.match_labels is not None
    job.spec.selector.match_labels["batch.kubernetes.io/controller-uid"] = "wrong"
    errs = messages(validate_job(job, GATES))
    assert (
        'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"batch.'
        'kubernetes.io/controller-uid":"wrong"}, MatchExpressions:[]v1.LabelSelectorRequirement'
        "(nil)}: `selector` not auto-generated"
    ) in errs


def test_missing_selector_is_required_and_matches_nothing() -> None:
    job = created(manifest(manualSelector=True))
    job.spec.template.metadata.labels = {"a": "b"}
    assert messages(validate_job(job, GATES)) == [
        "spec.selector: Required value",
        'spec.template.metadata.labels: Invalid value: map[string]string{"a":"b"}: '
        "`selector` does not match template `labels`",
    ]


def test_label_selector_expressions_are_validated() -> None:
    selector = {"matchExpressions": [{"key": "a", "operator": "In"}]}
    job = created(manifest(manualSelector=True, selector=selector))
    job.spec.template.metadata.labels = {"a": "b"}
    assert messages(validate_job(job, GATES)) == [
        "spec.selector.matchExpressions[0].values: Required value: must be specified when "
        "`operator` is 'In' or 'NotIn'"
    ]


def test_indexed_rules() -> None:
    assert create_errors(completionMode="Indexed", parallelism=2) == [
        "spec.completions: Required value: when completion mode is Indexed"
    ]
    assert create_errors(backoffLimitPerIndex=1, maxFailedIndexes=1) == [
        "spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode",
        "spec.maxFailedIndexes: Invalid value: 1: requires indexed completion mode",
    ]
    assert create_errors(completionMode="Sometimes") == [
        'spec.completionMode: Unsupported value: "Sometimes": supported values: "NonIndexed", '
        '"Indexed"'
    ]
    raw = manifest(completionMode="Indexed", completions=10)
    raw["metadata"]["name"] = "n" * 62
    assert raw_errors(raw) == [
        f'metadata.name: Invalid value: "{"n" * 62}": will not able to create pod with invalid '
        f"DNS label: {'n' * 62}-9"
    ]


def test_pod_failure_policy_rules() -> None:
    policy = {
        "rules": [
            {"action": ""},
            {"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [0, 3, 3, 1]}},
            {
                "action": "Ignore",
                "onExitCodes": {"operator": "NotIn", "values": [1], "containerName": "nope"},
                "onPodConditions": [{"type": "DisruptionTarget", "status": "Maybe"}],
            },
        ]
    }
    assert create_errors(podFailurePolicy=policy) == [
        'spec.podFailurePolicy.rules[0].action: Required value: valid values: ["Count" '
        '"FailIndex" "FailJob" "Ignore"]',
        "spec.podFailurePolicy.rules[0]: Invalid value: specifying one of OnExitCodes and "
        "OnPodConditions is required",
        'spec.podFailurePolicy.rules[1].action: Invalid value: "FailIndex": requires the '
        "backoffLimitPerIndex to be set",
        "spec.podFailurePolicy.rules[1].onExitCodes.values[0]: Invalid value: 0: must not be 0 "
        "for the In operator",
        "spec.podFailurePolicy.rules[1].onExitCodes.values[2]: Duplicate value: 3",
        "spec.podFailurePolicy.rules[1].onExitCodes.values: Invalid value: []int32{0, 3, 3, 1}: "
        "must be ordered",
        'spec.podFailurePolicy.rules[2].onExitCodes.containerName: Invalid value: "nope": must '
        "be one of the container or initContainer names in the pod template",
        'spec.podFailurePolicy.rules[2].onPodConditions[0].status: Unsupported value: "Maybe": '
        'supported values: "False", "True", "Unknown"',
        "spec.podFailurePolicy.rules[2]: Invalid value: specifying both OnExitCodes and "
        "OnPodConditions is not supported",
    ]


def test_pod_failure_policy_needs_never_and_failed_replacement() -> None:
    raw = manifest(
        podFailurePolicy={
            "rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}]
        },
        podReplacementPolicy="TerminatingOrFailed",
    )
    set_restart_policy(raw, "OnFailure")
    assert raw_errors(raw) == [
        'spec.podReplacementPolicy: Unsupported value: "TerminatingOrFailed": supported values: '
        '"Failed"',
        'spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is '
        "supported when podFailurePolicy is specified",
    ]


def test_success_policy() -> None:
    gates = FeatureGates(job_success_policy=True)
    rules = {"rules": [{"succeededCount": 5, "succeededIndexes": "0-1"}]}
    raw = manifest(completionMode="Indexed", completions=3, successPolicy=rules)
    assert raw_errors(raw, gates) == [
        "spec.successPolicy.rules[0].succeededCount: Invalid value: 5: must be less than or "
        "equal to 3 (the number of specified completions)",
        "spec.successPolicy.rules[0].succeededCount: Invalid value: 5: must be less than or "
        "equal to 2 (the number of indexes in the specified succeededIndexes field)",
    ]
    raw = manifest(completionMode="Indexed", completions=3, successPolicy={"rules": []})
    assert raw_errors(raw, gates) == [
        "spec.successPolicy.rules: Required value: at least one rules must be specified when "
        "the successPolicy is specified"
    ]
    raw = manifest(successPolicy={"rules": [{"succeededCount": 1}]})
    errs = raw_errors(raw, gates)
    assert len(errs) == 1 and errs[0].startswith("spec.successPolicy: Invalid value: ")
    assert errs[0].endswith(": requires indexed completion mode")
    # With the gate off (the v1.30 default) the field is dropped on create.
    assert created(raw).spec.success_policy is None


def test_success_policy_of_an_indexed_job_without_completions() -> None:
    """Upstream dereferences the nil completions (a 500); we answer that they are required
    and skip the rules that need them (docs/deviations.md)."""
    raw = manifest(completionMode="Indexed", parallelism=2,
                   successPolicy={"rules": [{"succeededCount": 5}]})
    assert raw_errors(raw, FeatureGates(job_success_policy=True)) == [
        "spec.completions: Required value: when completion mode is Indexed"]


# --- update ----------------------------------------------------------------------------------


def update_errors(old_raw: dict[str, Any] | None = None, **changes: Any) -> list[str]:
    old = stored(old_raw)
    new = copy(old)
    for key, value in changes.items():
        setattr(new.spec, key, value)
    return messages(validate_job_update(new, old, GATES))


def test_unchanged_update_is_valid() -> None:
    assert update_errors() == []


def test_parallelism_is_mutable_completions_is_not() -> None:
    assert update_errors(parallelism=4) == []
    assert update_errors(completions=2) == [
        "spec.completions: Invalid value: 2: field is immutable"
    ]


def test_elastic_indexed_jobs_scale_completions_with_parallelism() -> None:
    old = manifest(completionMode="Indexed", completions=3, parallelism=3)
    assert update_errors(old, completions=4, parallelism=4) == []
    assert update_errors(old, completions=4) == [
        "spec.completions: Invalid value: 4: can only be modified in tandem with spec.parallelism"
    ]


def test_immutable_fields() -> None:
    errs = update_errors(completion_mode="Indexed", backoff_limit_per_index=1)
    assert 'spec.completionMode: Invalid value: "Indexed": field is immutable' in errs
    assert "spec.backoffLimitPerIndex: Invalid value: 1: field is immutable" in errs
    errs = update_errors(managed_by="")
    # ValidateJob and ValidateJobSpecUpdate both run the spec checks: upstream repeats errors.
    assert errs == [
        "spec.managedBy: Required value",
        "spec.managedBy: Required value",
        'spec.managedBy: Invalid value: "": field is immutable',
    ]


def test_selector_is_immutable() -> None:
    old = stored()
    new = copy(old)
    assert new.spec.selector is not None
    new.spec.selector.match_expressions = []
    assert validate_job_update(new, old, GATES) == []  # nil and empty are equal
    new.spec.selector.match_labels = {"batch.kubernetes.io/controller-uid": "uid-1", "x": "y"}
    errs = messages(validate_job_update(new, old, GATES))
    assert any(e.startswith("spec.selector: Invalid value: v1.LabelSelector{") for e in errs)
    assert errs[-1].endswith(": field is immutable")


def test_template_is_immutable_unless_suspended_and_never_started() -> None:
    old = stored()
    new = copy(old)
    new.spec.template.spec.node_selector = {"zone": "a"}
    errs = messages(validate_job_update(new, old, GATES))
    assert len(errs) == 1 and errs[0].startswith("spec.template: Invalid value: ")
    old.spec.suspend = True
    new.spec.suspend = True
    assert validate_job_update(new, old, GATES) == []
    new.spec.template.spec.containers[0].image = "busybox:1.37"
    assert len(validate_job_update(new, old, GATES)) == 1
    old.status.start_time = "2024-01-01T00:00:00Z"
    new.spec.template.spec.containers[0].image = "busybox:1.36"
    assert len(validate_job_update(new, old, GATES)) == 1


def test_update_options_follow_the_stored_object() -> None:
    old = stored()
    assert job_validation_options(old, old, GATES).require_prefixed_labels is True
    assert old.spec.template.metadata.labels is not None
    del old.spec.template.metadata.labels["batch.kubernetes.io/job-name"]
    opts = job_validation_options(old, old, GATES)
    assert opts.require_prefixed_labels is False
    assert opts.allow_mutable_scheduling_directives is False
    assert job_validation_options(old, None, GATES).require_prefixed_labels is True


def test_update_checks_metadata() -> None:
    old = stored()
    new = copy(old)
    new.metadata.resource_version = None
    new.metadata.name = "other"
    errs = messages(validate_job_update(new, old, GATES))
    assert 'metadata.resourceVersion: Invalid value: "": must be specified for an update' in errs
    assert 'metadata.name: Invalid value: "other": field is immutable' in errs
