"""Job ``managedBy`` as v1.34 has it: the JobManagedBy gate is beta and on by default, so the
field is kept and the strengthened status validation runs without any ``--feature-gates``;
the field's TooLong error is rendered as apimachinery v0.34 does. v1.30 is unchanged."""

from __future__ import annotations

import copy
from typing import Any

from kubedra.api.batch import Job
from kubedra.api.features import FeatureGates
from kubedra.api.release import R1_30, R1_34, Release
from kubedra.registry.strategies.job import JobStrategy
from kubedra.validation import field
from tests.unit.registry.json_hooks import OnJSON
from tests.unit.validation.job_samples import manifest

EXTERNAL = "kueue.x-k8s.io/multikueue"


def jobs(release: Release) -> OnJSON:
    return OnJSON(JobStrategy(FeatureGates.for_release(release)), Job)


def create(strategy: OnJSON, raw: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    obj = copy.deepcopy(raw)
    strategy.default(obj)
    strategy.prepare_for_create(obj)
    with field.apimachinery(field.apimachinery_of(strategy.strategy.gates.release)):
        return obj, [str(e) for e in strategy.validate(obj)]


def test_managed_by_is_kept_by_default_in_1_34_only() -> None:
    raw = manifest(managedBy=EXTERNAL)
    assert create(jobs(R1_34), raw)[0]["spec"]["managedBy"] == EXTERNAL
    assert "managedBy" not in create(jobs(R1_30), raw)[0]["spec"]


def test_managed_by_too_long_text_per_release() -> None:
    raw = manifest(managedBy="example.com/" + "a" * 60)
    on_1_30 = OnJSON(JobStrategy(FeatureGates(job_managed_by=True)), Job)
    assert create(on_1_30, raw)[1] == ["spec.managedBy: Too long: may not be longer than 63"]
    assert create(jobs(R1_34), raw)[1] == [
        "spec.managedBy: Too long: may not be more than 63 bytes"]


def test_strengthened_status_validation_is_on_by_default_in_1_34() -> None:
    for release, expected in ((R1_30, []), (R1_34, [
            'status.completionTime: Invalid value: "2024-01-01T00:01:00Z": cannot set '
            "completionTime when there is no Complete=True condition",
            "status.conditions: Invalid value: cannot disable the terminal Complete=True "
            "condition"])):
        strategy = jobs(release)
        old, _ = create(strategy, manifest(managedBy=EXTERNAL))
        old["metadata"]["resourceVersion"] = "2"
        old["status"] = {"startTime": "2024-01-01T00:00:00Z",
                         "completionTime": "2024-01-01T00:01:00Z", "succeeded": 1,
                         "conditions": [{"type": "Complete", "status": "True"}]}
        new = copy.deepcopy(old)
        new["status"]["conditions"] = []
        strategy.prepare_for_status_update(new, old)
        with field.apimachinery(field.apimachinery_of(release)):  # as admission renders
            assert [str(e) for e in strategy.validate_status_update(new, old)] == expected
