"""The create pipeline end to end on typed objects: what a create stores, decoding errors
with upstream's prefix, and the strategy hooks of the core kinds."""

from __future__ import annotations

from typing import Any

import pytest

from kubedra.api import codec, kinds
from kubedra.api.features import FeatureGates
from kubedra.registry import pipeline, resources

STRATEGIES = resources.strategies(FeatureGates())


def create(raw: dict[str, Any], namespace: str = "default") -> dict[str, Any]:
    kind = codec.kind_of(raw)
    dec = pipeline.admit_new(STRATEGIES[kind.resource.storage_gvr], kind, raw, namespace=namespace,
                             mode="Strict")
    out: dict[str, Any] = codec.to_builtins(dec.obj)
    return out


def test_a_gated_pod_starts_pending_with_the_gated_condition() -> None:
    pod = create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                  "spec": {"schedulingGates": [{"name": "wait"}],
                           "containers": [{"name": "c", "image": "i", "resources": {
                               "requests": {"cpu": "1"}, "limits": {"cpu": "1000m"}}}]},
                  "status": {"phase": "Running"}})
    assert pod["metadata"]["namespace"] == "default"
    assert pod["metadata"]["uid"] and pod["metadata"]["creationTimestamp"]
    assert pod["status"] == {"phase": "Pending", "qosClass": "Burstable", "conditions": [{
        "type": "PodScheduled", "status": "False", "lastProbeTime": None,
        "lastTransitionTime": None, "reason": "SchedulingGated",
        "message": "Scheduling is blocked due to non-empty scheduling gates"}]}


def test_a_namespace_gets_its_finalizer_label_and_phase() -> None:
    ns = create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"generateName": "t-"}},
                namespace="ignored")
    name = ns["metadata"]["name"]
    assert name.startswith("t-") and len(name) == 7 and "namespace" not in ns["metadata"]
    assert ns["metadata"]["labels"] == {"kubernetes.io/metadata.name": name}
    assert ns["spec"] == {"finalizers": ["kubernetes"]}
    assert ns["status"] == {"phase": "Active"}


def test_decode_errors_carry_the_kind_prefix() -> None:
    kind = kinds.by_gvk("resource.k8s.io", "v1alpha2", "ResourceClaim")
    assert kind is not None
    raw = {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClaim",
           "metadata": {"name": "c"}, "spec": {"resourceClassName": 1}}
    with pytest.raises(pipeline.BadRequest) as err:
        pipeline.decode(kind, raw, "Strict")
    assert err.value.message == (
        'ResourceClaim in version "v1alpha2" cannot be handled as a ResourceClaim: '
        "spec.resourceClassName: Expected `str`, got `int`")
    raw["spec"] = {"resourceClassName": "gpu", "colour": "red"}
    with pytest.raises(pipeline.StrictDecodingError) as strict:
        pipeline.decode(kind, raw, "Strict")
    assert strict.value.message == (
        'ResourceClaim in version "v1alpha2" cannot be handled as a ResourceClaim: '
        'strict decoding error: unknown field "spec.colour"')


def test_a_namespace_other_than_the_requests_is_refused() -> None:
    with pytest.raises(pipeline.BadRequest, match="does not match the namespace"):
        create({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "p", "namespace": "a"},
                "spec": {"containers": [{"name": "c", "image": "i"}]}}, namespace="b")
