"""The Job registry strategy: typed functions and the generic registry's dict hooks."""

from __future__ import annotations

import copy
from typing import Any

from kubedra.api.batch import Job
from kubedra.api.features import FeatureGates
from kubedra.registry.resources import strategies
from kubedra.registry.strategies.job import (
    JobStrategy,
    prepare_for_create,
    prepare_for_update,
)
from tests.unit.registry.json_hooks import OnJSON
from tests.unit.validation.job_samples import copy as copy_job
from tests.unit.validation.job_samples import created, manifest, stored

ON = FeatureGates(job_managed_by=True)


def jobs(gates: FeatureGates | None = None) -> OnJSON:
    """The Job strategy under ``gates`` (default: the default gates), driven with dicts."""
    return OnJSON(JobStrategy(gates or FeatureGates()), Job)


def create(strategy: OnJSON, raw: dict[str, Any]) -> dict[str, Any]:
    obj = copy.deepcopy(raw)
    strategy.default(obj)
    strategy.prepare_for_create(obj)
    assert strategy.validate(obj) == []
    obj["metadata"]["resourceVersion"] = "3"
    return obj


def test_create_flow_generates_selector_labels_and_clears_status() -> None:
    raw = manifest()
    raw["status"] = {"active": 3}
    obj = create(jobs(), raw)
    generated = {
        "job-name": "pi",
        "batch.kubernetes.io/job-name": "pi",
        "controller-uid": "uid-1",
        "batch.kubernetes.io/controller-uid": "uid-1",
    }
    assert obj["spec"]["template"]["metadata"]["labels"] == generated
    assert obj["spec"]["selector"] == {
        "matchLabels": {"batch.kubernetes.io/controller-uid": "uid-1"}
    }
    # A job without labels shows its template's labels (upstream shares the label map).
    assert obj["metadata"]["labels"] == generated
    assert obj["metadata"]["generation"] == 1
    assert obj["status"] == {}


def test_user_labels_are_kept() -> None:
    raw = manifest()
    raw["metadata"]["labels"] = {"team": "a"}
    assert create(jobs(), raw)["metadata"]["labels"] == {"team": "a"}


def test_manual_selector_is_left_alone() -> None:
    raw = manifest(manualSelector=True, selector={"matchLabels": {"app": "pi"}})
    raw["spec"]["template"]["metadata"] = {"labels": {"app": "pi"}}
    obj = create(jobs(), raw)
    assert obj["spec"]["selector"] == {"matchLabels": {"app": "pi"}}
    assert obj["spec"]["template"]["metadata"]["labels"] == {"app": "pi"}


def test_managed_by_follows_the_gate_on_create() -> None:
    raw = manifest(managedBy="kueue.x-k8s.io/multikueue")
    assert "managedBy" not in create(jobs(), raw)["spec"]
    assert create(jobs(ON), raw)["spec"]["managedBy"] == "kueue.x-k8s.io/multikueue"


def test_gated_fields_are_dropped_on_create() -> None:
    gates = FeatureGates(job_pod_replacement_policy=False, job_backoff_limit_per_index=False)
    raw = manifest(
        completionMode="Indexed",
        completions=2,
        backoffLimitPerIndex=1,
        maxFailedIndexes=1,
        podFailurePolicy={
            "rules": [
                {"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [1]}},
                {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]},
            ]
        },
    )
    job = created(raw, gates)
    assert job.spec.backoff_limit_per_index is None and job.spec.max_failed_indexes is None
    assert job.spec.pod_failure_policy is not None
    assert [r.action for r in job.spec.pod_failure_policy.rules] == ["Ignore"]
    assert job.spec.pod_replacement_policy is None


def test_dra_claims_are_dropped_when_dra_is_off() -> None:
    raw = manifest()
    pod = raw["spec"]["template"]["spec"]
    pod["resourceClaims"] = [{"name": "gpu", "source": {"resourceClaimTemplateName": "t"}}]
    pod["containers"][0]["resources"] = {"claims": [{"name": "gpu"}]}
    off = FeatureGates(dynamic_resource_allocation=False)
    job = created(raw, off)
    assert job.spec.template.spec.resource_claims is None
    assert job.spec.template.spec.containers[0].resources.claims is None
    job = created(raw)
    assert job.spec.template.spec.resource_claims is not None
    # An update keeps claims the stored object already uses.
    old = created(raw)
    new = copy_job(old)
    prepare_for_update(new, old, off)
    assert new.spec.template.spec.resource_claims is not None


def test_update_keeps_status_and_bumps_generation_on_spec_changes_only() -> None:
    s = jobs()
    old = create(s, manifest())
    old["status"] = {"active": 1, "startTime": "2024-01-01T00:00:00Z"}
    new = copy.deepcopy(old)
    new["status"] = {"succeeded": 9}
    new["metadata"]["labels"] = {"x": "y"}
    new["metadata"]["generation"] = 42
    s.default(new)
    s.prepare_for_update(new, old)
    assert new["status"] == old["status"]
    assert new["metadata"]["generation"] == 1
    new["spec"]["parallelism"] = 3
    s.prepare_for_update(new, old)
    assert new["metadata"]["generation"] == 2
    assert s.validate_update(new, old) == []


def test_update_cannot_add_managed_by_even_with_the_gate_off() -> None:
    s = jobs()
    old = create(s, manifest())
    new = copy.deepcopy(old)
    new["spec"]["managedBy"] = "example.com/ctrl"
    s.default(new)
    s.prepare_for_update(new, old)
    assert new["spec"]["managedBy"] == "example.com/ctrl"
    assert [str(e) for e in s.validate_update(new, old)] == [
        'spec.managedBy: Invalid value: "example.com/ctrl": field is immutable'
    ]


def test_gated_fields_survive_updates_when_stored() -> None:
    gates = FeatureGates(job_pod_replacement_policy=False)
    old = stored(manifest(podReplacementPolicy="Failed"))
    new = copy_job(old)
    prepare_for_update(new, old, gates)
    assert new.spec.pod_replacement_policy == "Failed"
    old.spec.pod_replacement_policy = None
    prepare_for_update(new, old, gates)
    assert new.spec.pod_replacement_policy is None


def test_status_update_takes_spec_from_storage_only() -> None:
    s = jobs(ON)
    old = create(s, manifest())
    new = copy.deepcopy(old)
    new["spec"]["parallelism"] = 7
    new["metadata"]["labels"] = {"x": "y"}
    new["metadata"]["generation"] = 9
    new["status"] = {"active": 1, "startTime": "2024-01-01T00:00:00Z"}
    s.prepare_for_status_update(new, old)
    assert new["spec"] == old["spec"]
    assert new["metadata"]["generation"] == 1
    assert new["metadata"]["labels"] == {"x": "y"}  # upstream's job status strategy keeps them
    assert new["status"]["active"] == 1
    assert s.validate_status_update(new, old) == []
    new["status"]["active"] = -1
    assert [str(e) for e in s.validate_status_update(new, old)] == [
        "status.active: Invalid value: -1: must be greater than or equal to 0"
    ]


def test_field_selectors_and_propagation() -> None:
    s = jobs()
    obj = create(s, manifest())
    assert s.selectable_fields(obj)["status.successful"] == "0"
    obj["status"] = {"succeeded": 2}
    assert s.selectable_fields(obj) == {
        "metadata.name": "pi",
        "metadata.namespace": "default",
        "status.successful": "2",
    }
    assert s.field_label_error("spec.x") == 'field label "spec.x" not supported for Job'
    assert s.default_propagation == "Orphan"


def test_typed_prepare_for_create_sets_generation_one() -> None:
    job = stored()
    job.metadata.generation = 5
    prepare_for_create(job, FeatureGates())
    assert job.metadata.generation == 1


def test_registry_entry_point_uses_the_gates() -> None:
    job_strategy = strategies(ON)[("batch", "v1", "jobs")]
    assert isinstance(job_strategy, JobStrategy) and job_strategy.gates is ON
