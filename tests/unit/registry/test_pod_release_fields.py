"""The core/v1 Pod's claim fields per emulated release: one row, served in both releases, whose
strategy keeps the serving release's shape (v1.30 ``source``; v1.34 top-level names and the
container ``request``) and validates it with that release's texts and paths."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubedra.api import kinds
from kubedra.api.batch import Job
from kubedra.api.core import Pod
from kubedra.api.features import FeatureGates
from kubedra.api.release import R1_30, R1_34
from kubedra.registry import pipeline
from kubedra.registry.strategies.core import PodStrategy
from kubedra.registry.strategies.job import JobStrategy
from kubedra.validation import field
from tests.unit.registry.json_hooks import OnJSON
from tests.unit.validation.job_samples import manifest as job_manifest

Obj = dict[str, Any]


def pod(claims: list[Obj], refs: list[Obj] | None = None, name: str = "p") -> Obj:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "ns", "uid": "uid-p"},
            "spec": {"containers": [{"name": "c", "image": "busybox",
                                     "resources": {"claims": refs or []}}],
                     "resourceClaims": claims}}


def created(release: Any, raw: Obj) -> tuple[Obj, list[str]]:
    """``raw`` after defaulting and PrepareForCreate, and its validation errors (as
    ``<path>: <ErrorBody>``, the Status causes' field and message)."""
    strategy = OnJSON(PodStrategy(release), Pod)
    obj = copy.deepcopy(raw)
    strategy.default(obj)
    strategy.prepare_for_create(obj)
    with field.apimachinery(field.apimachinery_of(release)):  # as admission renders
        return obj, [str(e) for e in strategy.validate(obj)]


BOTH_SHAPES = [{"name": "gpu", "resourceClaimTemplateName": "t",
                "source": {"resourceClaimTemplateName": "t"}},
               {"name": "net", "resourceClaimName": "shared",
                "source": {"resourceClaimName": "shared"}}]
BOTH_REFS = [{"name": "gpu", "request": "big"}, {"name": "net"}]


def test_1_34_keeps_its_shape_and_drops_source() -> None:
    obj, errors = created(R1_34, pod(BOTH_SHAPES, BOTH_REFS))
    assert errors == []
    assert obj["spec"]["resourceClaims"] == [
        {"name": "gpu", "resourceClaimTemplateName": "t"},
        {"name": "net", "resourceClaimName": "shared"}]
    assert obj["spec"]["containers"][0]["resources"]["claims"] == BOTH_REFS


def test_1_30_keeps_source_and_drops_the_1_34_fields() -> None:
    obj, errors = created(R1_30, pod(BOTH_SHAPES, BOTH_REFS))
    assert errors == []
    assert obj["spec"]["resourceClaims"] == [
        {"name": "gpu", "source": {"resourceClaimTemplateName": "t"}},
        {"name": "net", "source": {"resourceClaimName": "shared"}}]
    assert obj["spec"]["containers"][0]["resources"]["claims"] == [{"name": "gpu"},
                                                                   {"name": "net"}]


def test_1_30_writes_an_empty_source_as_go_does_and_refuses_it() -> None:
    obj, errors = created(R1_30, pod([{"name": "gpu", "resourceClaimName": "c"}]))
    assert obj["spec"]["resourceClaims"] == [{"name": "gpu", "source": {}}]
    assert errors == ["spec.resourceClaims[0].source: Invalid value: {}: must specify one of: "
                      "`resourceClaimName`, `resourceClaimTemplateName`"]


def test_a_1_30_shaped_pod_is_refused_by_1_34() -> None:
    obj, errors = created(R1_34, pod([{"name": "gpu", "source": {"resourceClaimName": "c"}}]))
    assert obj["spec"]["resourceClaims"] == [{"name": "gpu"}]
    assert errors == [
        'spec.resourceClaims[0]: Invalid value: {"Name":"gpu","ResourceClaimName":null,'
        '"ResourceClaimTemplateName":null}: must specify one of: `resourceClaimName`, '
        "`resourceClaimTemplateName`"]


def test_1_34_claim_entry_texts() -> None:
    _, errors = created(R1_34, pod([
        {"name": "", "resourceClaimName": "a"},
        {"name": "x", "resourceClaimName": "a", "resourceClaimTemplateName": "b"},
        {"name": "x", "resourceClaimName": "Not_OK"},
        {"name": "Bad", "resourceClaimTemplateName": ""},
    ]))
    assert errors == [
        "spec.resourceClaims[0].name: Required value",
        'spec.resourceClaims[1]: Invalid value: {"Name":"x","ResourceClaimName":"a",'
        '"ResourceClaimTemplateName":"b"}: at most one of `resourceClaimName` or '
        "`resourceClaimTemplateName` may be specified",
        'spec.resourceClaims[2].name: Duplicate value: "x"',
        'spec.resourceClaims[2].resourceClaimName: Invalid value: "Not_OK": a lowercase RFC '
        "1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
        "must start and end with an alphanumeric character (e.g. 'example.com', regex used "
        "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        'spec.resourceClaims[3].name: Invalid value: "Bad": a lowercase RFC 1123 label must '
        "consist of lower case alphanumeric characters or '-', and must start and end with an "
        "alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        'spec.resourceClaims[3].resourceClaimTemplateName: Invalid value: "": a lowercase '
        "RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
        "and must start and end with an alphanumeric character (e.g. 'example.com', regex "
        "used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ]


def test_only_1_30_checks_the_generated_claim_name() -> None:
    long_name = "p" * 250
    raw = pod([{"name": "gpu", "resourceClaimTemplateName": "t",
                "source": {"resourceClaimTemplateName": "t"}}], name=long_name)
    assert created(R1_34, raw)[1] == []
    assert [e.split(": ")[0] for e in created(R1_30, raw)[1]] == [
        "spec.resourceClaims[0].name"]


def test_1_34_container_requests() -> None:
    claims = [{"name": "gpu", "resourceClaimName": "g"}, {"name": "net", "resourceClaimName": "n"}]
    _, errors = created(R1_34, pod(claims, [
        {"name": "gpu", "request": "a"},
        {"name": "gpu", "request": "a"},    # the same request again
        {"name": "gpu"},                    # the whole claim after one of its requests
        {"name": "gpu", "request": "b"},    # a request after the whole claim
        {"name": "net", "request": "Bad"},
        {"name": "other"},
        {"name": ""},
    ]))
    assert errors == [
        'spec.containers[0].resources.claims[1]: Duplicate value: "gpu/a"',
        'spec.containers[0].resources.claims[2]: Duplicate value: "gpu"',
        'spec.containers[0].resources.claims[3]: Duplicate value: "gpu"',
        'spec.containers[0].resources.claims[4].request: Invalid value: "Bad": a lowercase '
        "RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
        "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
        "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        'spec.containers[0].resources.claims[5]: Not found: "other": must be one of the names '
        "in pod.spec.resourceClaims: gpu, net",
        "spec.containers[0].resources.claims[6]: Required value",
    ]


def test_1_30_container_claims_unchanged() -> None:
    claims = [{"name": "gpu", "source": {"resourceClaimName": "g"}}]
    _, errors = created(R1_30, pod(claims, [{"name": "gpu", "request": "a"},
                                            {"name": "gpu", "request": "b"}]))
    assert errors == ['spec.containers[0].resources.claims[1]: Duplicate value: "gpu"']


def test_statuses_validate_alike_in_both_releases() -> None:
    for release, entry in ((R1_30, {"name": "gpu", "source": {"resourceClaimTemplateName": "t"}}),
                           (R1_34, {"name": "gpu", "resourceClaimTemplateName": "t"})):
        strategy = OnJSON(PodStrategy(release), Pod)
        old, _ = created(release, pod([entry]))
        old["metadata"]["resourceVersion"] = "2"
        new = copy.deepcopy(old)
        new["status"]["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": "p-gpu-1"},
                                                  {"name": "nic"}]
        strategy.prepare_for_status_update(new, old)
        assert [str(e) for e in strategy.validate_status_update(new, old)] == [
            'status.resourceClaimStatuses[1].name: Invalid value: "nic": must match the name '
            "of an entry in `spec.resourceClaims`"]


@pytest.mark.parametrize(("release", "expected"), [
    (R1_30, [{"name": "gpu", "source": {"resourceClaimName": "c"}}]),
    (R1_34, [{"name": "gpu", "resourceClaimName": "c"}]),
])
def test_job_templates_take_the_release_shape(release: Any, expected: list[Obj]) -> None:
    raw = job_manifest()
    spec = raw["spec"]["template"]["spec"]
    spec["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "c",
                               "source": {"resourceClaimName": "c"}}]
    strategy = OnJSON(JobStrategy(FeatureGates.for_release(release)), Job)
    strategy.default(raw)
    strategy.prepare_for_create(raw)
    assert raw["spec"]["template"]["spec"]["resourceClaims"] == expected


@pytest.mark.parametrize(("release", "unknown"), [
    (R1_30, ['unknown field "spec.resourceClaims[0].resourceClaimTemplateName"',
             'unknown field "spec.resourceClaims[1].resourceClaimName"',
             'unknown field "spec.containers[0].resources.claims[0].request"']),
    (R1_34, ['unknown field "spec.resourceClaims[0].source"',
             'unknown field "spec.resourceClaims[1].source"']),
])
def test_the_other_releases_fields_are_unknown_to_a_strict_decode(
        release: Any, unknown: list[str]) -> None:
    """Upstream's Pod type of each release lacks the other's fields: Strict refuses them,
    Warn warns (and the strategy drops them), Ignore says nothing."""
    kind = kinds.by_gvk("", "v1", "Pod")
    assert kind is not None
    strategy = PodStrategy(release)
    raw = pod(BOTH_SHAPES, BOTH_REFS)
    with pytest.raises(pipeline.StrictDecodingError) as strict:
        pipeline.decode(kind, copy.deepcopy(raw), "Strict", strategy=strategy)
    assert strict.value.message == ('Pod in version "v1" cannot be handled as a Pod: '
                                    "strict decoding error: " + ", ".join(sorted(
                                        unknown, key=lambda u: "containers" not in u)))
    assert pipeline.decode(kind, copy.deepcopy(raw), "Warn", strategy=strategy).warnings \
        == sorted(unknown, key=lambda u: "containers" not in u)
    assert pipeline.decode(kind, copy.deepcopy(raw), "Ignore", strategy=strategy).warnings == []
    one_release = pod([{"name": "gpu", "source": {"resourceClaimTemplateName": "t"}}]
                      if release == R1_30 else
                      [{"name": "gpu", "resourceClaimTemplateName": "t"}])
    assert pipeline.decode(kind, one_release, "Strict", strategy=strategy).warnings == []


def test_job_templates_know_only_their_releases_claim_fields() -> None:
    kind = kinds.by_gvk("batch", "v1", "Job")
    assert kind is not None
    raw = job_manifest()
    raw["spec"]["template"]["spec"]["resourceClaims"] = [
        {"name": "gpu", "source": {"resourceClaimName": "c"}}]
    strategy = JobStrategy(FeatureGates.for_release(R1_34))
    with pytest.raises(pipeline.StrictDecodingError, match=(
            r'unknown field "spec\.template\.spec\.resourceClaims\[0\]\.source"')):
        pipeline.decode(kind, raw, "Strict", strategy=strategy)
    strategy = JobStrategy(FeatureGates.for_release(R1_30))
    assert pipeline.decode(kind, raw, "Strict", strategy=strategy).warnings == []
