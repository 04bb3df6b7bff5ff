"""SetDefaults_Job and the pod template's core defaults."""

from __future__ import annotations

from typing import Any

import pytest

from kubedra.api import codec
from kubedra.api.batch import Job
from kubedra.api.features import FeatureGates
from kubedra.validation.job import MAX_INT32, default_job
from tests.unit.validation.job_samples import manifest


def defaulted(raw: dict[str, Any], gates: FeatureGates | None = None) -> Job:
    job = codec.decode(raw, Job)
    default_job(job, gates or FeatureGates())
    return job


def test_non_parallel_job_gets_one_and_one() -> None:
    spec = defaulted(manifest()).spec
    assert (spec.completions, spec.parallelism) == (1, 1)
    assert spec.backoff_limit == 6
    assert spec.completion_mode == "NonIndexed"
    assert spec.suspend is False
    assert spec.manual_selector is False
    assert spec.pod_replacement_policy == "TerminatingOrFailed"
    assert spec.managed_by is None  # never defaulted


def test_work_queue_job_keeps_nil_completions() -> None:
    spec = defaulted(manifest(parallelism=3)).spec
    assert (spec.completions, spec.parallelism) == (None, 3)
    spec = defaulted(manifest(completions=5)).spec
    assert (spec.completions, spec.parallelism) == (5, 1)


def test_backoff_limit_per_index_makes_backoff_limit_unbounded() -> None:
    raw = manifest(completionMode="Indexed", completions=3, backoffLimitPerIndex=1)
    assert defaulted(raw).spec.backoff_limit == MAX_INT32
    assert defaulted(manifest(backoffLimit=0)).spec.backoff_limit == 0


def test_pod_failure_policy_defaults() -> None:
    raw = manifest(
        podFailurePolicy={"rules": [{"action": "Ignore", "onPodConditions": [{"type": "X"}]}]}
    )
    spec = defaulted(raw).spec
    assert spec.pod_replacement_policy == "Failed"
    assert spec.pod_failure_policy is not None
    on = spec.pod_failure_policy.rules[0].on_pod_conditions
    assert on is not None and on[0].status == "True"


def test_pod_replacement_policy_needs_its_gate() -> None:
    gates = FeatureGates(job_pod_replacement_policy=False)
    assert defaulted(manifest(), gates).spec.pod_replacement_policy is None


def test_job_labels_come_from_the_template_only_when_unset() -> None:
    raw = manifest()
    raw["spec"]["template"]["metadata"] = {"labels": {"app": "pi"}}
    assert defaulted(raw).metadata.labels == {"app": "pi"}
    raw["metadata"]["labels"] = {"team": "a"}
    assert defaulted(raw).metadata.labels == {"team": "a"}


@pytest.mark.parametrize(
    ("image", "policy"),
    [
        ("busybox", "Always"),
        ("busybox:latest", "Always"),
        ("registry:5000/busybox", "Always"),
        ("registry:5000/busybox:1.36", "IfNotPresent"),
        ("busybox@sha256:" + "a" * 64, "IfNotPresent"),
    ],
)
def test_image_pull_policy_follows_the_tag(image: str, policy: str) -> None:
    raw = manifest()
    raw["spec"]["template"]["spec"]["containers"][0]["image"] = image
    container = defaulted(raw).spec.template.spec.containers[0]
    assert container.image_pull_policy == policy


def test_pod_spec_defaults() -> None:
    raw = manifest()
    raw["spec"]["template"]["spec"].pop("restartPolicy")
    raw["spec"]["template"]["spec"]["containers"][0]["ports"] = [{"containerPort": 80}]
    pod = defaulted(raw).spec.template.spec
    assert pod.restart_policy == "Always"  # then rejected by Job validation
    assert pod.dns_policy == "ClusterFirst"
    assert pod.termination_grace_period_seconds == 30
    assert pod.scheduler_name == "default-scheduler"
    assert pod.security_context == {}
    c = pod.containers[0]
    assert (c.termination_message_path, c.termination_message_policy) == (
        "/dev/termination-log",
        "File",
    )
    assert c.ports is not None and c.ports[0].protocol == "TCP"
