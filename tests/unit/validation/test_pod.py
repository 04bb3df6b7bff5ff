"""Pod DRA fields as v1.30 checks them: spec.resourceClaims, containers' claims,
resourceClaimStatuses, updates."""

from __future__ import annotations

from typing import Any

import msgspec

from kubedra.api import codec
from kubedra.api.core import Pod
from kubedra.api.release import R1_30
from kubedra.validation.field import FieldError
from kubedra.validation.pod import (
    validate_pod,
    validate_pod_status_update,
    validate_pod_update,
)
from kubedra.validation.pod_template import default_pod_spec


def make_pod(name: str = "pod", claims: Any = None, refs: Any = None, **spec: Any) -> Pod:
    raw: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ns", "resourceVersion": "1"},
        "spec": {
            "containers": [{"name": "c", "image": "busybox", "resources": {"claims": refs or []}}],
            **spec,
        },
    }
    if claims is not None:
        raw["spec"]["resourceClaims"] = claims
    pod = codec.decode(raw, Pod)
    default_pod_spec(pod.spec)
    return pod


def summary(errors: list[FieldError]) -> list[tuple[str, str, str]]:
    return [(e.type.value, str(e.field), e.detail) for e in errors]


def test_valid_pod_with_claims() -> None:
    pod = make_pod(
        claims=[
            {"name": "gpu", "source": {"resourceClaimTemplateName": "gpu-template"}},
            {"name": "shared", "source": {"resourceClaimName": "shared-claim"}},
        ],
        refs=[{"name": "gpu"}, {"name": "shared"}],
    )
    assert validate_pod(pod, R1_30) == []


def test_claim_names_and_sources() -> None:
    pod = make_pod(
        claims=[
            {"name": "", "source": {"resourceClaimName": "a"}},
            {"name": "x", "source": {}},
            {"name": "x", "source": {"resourceClaimName": "a", "resourceClaimTemplateName": "b"}},
            {"name": "Bad", "source": {"resourceClaimName": "Not_OK"}},
        ]
    )
    assert [(t, f) for t, f, _ in summary(validate_pod(pod, R1_30))] == [
        ("FieldValueRequired", "spec.resourceClaims[0].name"),
        ("FieldValueInvalid", "spec.resourceClaims[1].source"),
        ("FieldValueDuplicate", "spec.resourceClaims[2].name"),
        ("FieldValueInvalid", "spec.resourceClaims[2].source"),
        ("FieldValueInvalid", "spec.resourceClaims[3].name"),
        ("FieldValueInvalid", "spec.resourceClaims[3].source.resourceClaimName"),
    ]
    errs = validate_pod(pod, R1_30)
    assert errs[1].detail == "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"
    assert errs[3].detail == (
        "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified"
    )


def test_final_claim_name_too_long() -> None:
    pod = make_pod(
        name="p" * 250,
        claims=[
            {"name": "claim", "source": {"resourceClaimTemplateName": "t"}},
        ],
    )
    errs = validate_pod(pod, R1_30)
    assert [(str(e.field), e.bad_value) for e in errs] == [
        ("spec.resourceClaims[0].name", "p" * 250 + "-claim")
    ]
    assert errs[0].detail == "final ResourceClaim name: must be no more than 253 characters"
    # A claim that names an existing ResourceClaim generates nothing.
    pod = make_pod(name="p" * 250, claims=[{"name": "claim", "source": {"resourceClaimName": "c"}}])
    assert validate_pod(pod, R1_30) == []


def test_container_claim_references() -> None:
    pod = make_pod(
        claims=[
            {"name": "b", "source": {"resourceClaimName": "x"}},
            {"name": "a", "source": {"resourceClaimName": "y"}},
        ],
        refs=[{"name": ""}, {"name": "a"}, {"name": "a"}, {"name": "zz"}],
    )
    errs = validate_pod(pod, R1_30)
    assert summary(errs) == [
        ("FieldValueRequired", "spec.containers[0].resources.claims[0]", ""),
        ("FieldValueDuplicate", "spec.containers[0].resources.claims[2]", ""),
        (
            "FieldValueNotFound",
            "spec.containers[0].resources.claims[3]",
            "must be one of the names in pod.spec.resourceClaims: a, b",
        ),
    ]
    assert str(errs[2]) == (
        'spec.containers[0].resources.claims[3]: Not found: "zz": must be '
        "one of the names in pod.spec.resourceClaims: a, b"
    )
    pod = make_pod(refs=[{"name": "a"}])
    assert validate_pod(pod, R1_30)[0].detail == (
        "must be one of the names in pod.spec.resourceClaims which is empty"
    )


def test_init_container_claims() -> None:
    pod = make_pod(
        initContainers=[{"name": "i", "image": "x", "resources": {"claims": [{"name": "nope"}]}}]
    )
    default_pod_spec(pod.spec)
    assert [str(e.field) for e in validate_pod(pod, R1_30)] == [
        "spec.initContainers[0].resources.claims[0]"
    ]


def test_resource_claims_are_immutable() -> None:
    old = make_pod(claims=[{"name": "a", "source": {"resourceClaimName": "x"}}])
    new = msgspec.structs.replace(old, spec=msgspec.structs.replace(old.spec, resource_claims=[]))
    errs = validate_pod_update(new, old, R1_30)
    assert [(e.type.value, str(e.field)) for e in errs] == [("FieldValueForbidden", "spec")]
    assert errs[0].detail.startswith(
        "pod updates may not change fields other than `spec.containers[*].image`,"
    )
    assert "spec.resourceClaims" in errs[0].detail


def test_allowed_pod_updates() -> None:
    old = make_pod(
        activeDeadlineSeconds=100,
        schedulingGates=[{"name": "g"}],
        tolerations=[{"key": "k", "operator": "Exists"}],
    )
    new = make_pod(
        activeDeadlineSeconds=50, tolerations=[{"key": "k", "operator": "Exists"}, {"key": "k2"}]
    )
    new.spec.containers[0].image = "other"
    assert validate_pod_update(new, old, R1_30) == []
    grown = make_pod(activeDeadlineSeconds=200, schedulingGates=[{"name": "g"}, {"name": "h"}])
    assert summary(validate_pod_update(grown, old, R1_30)) == [
        (
            "FieldValueInvalid",
            "spec.activeDeadlineSeconds",
            "must be less than or equal to previous value",
        ),
        (
            "FieldValueForbidden",
            "spec.tolerations",
            "existing toleration can not be modified except its tolerationSeconds",
        ),
        (
            "FieldValueForbidden",
            "spec.schedulingGates[1].name",
            "only deletion is allowed, but found new scheduling gate 'h'",
        ),
    ]


def test_resource_claim_statuses() -> None:
    old = make_pod(claims=[{"name": "a", "source": {"resourceClaimTemplateName": "t"}}])
    new = codec.decode(
        {
            **codec.to_builtins(old),
            "status": {
                "resourceClaimStatuses": [
                    {"name": "a", "resourceClaimName": "pod-a-xyz"},
                    {"name": "a"},
                    {"name": "b", "resourceClaimName": "Bad!"},
                ]
            },
        },
        Pod,
    )
    errs = validate_pod_status_update(new, old)
    assert [(e.type.value, str(e.field), e.bad_value) for e in errs] == [
        ("FieldValueDuplicate", "status.resourceClaimStatuses[1].name", "a"),
        ("FieldValueInvalid", "status.resourceClaimStatuses[2].name", "b"),
        ("FieldValueInvalid", "status.resourceClaimStatuses[2].name", "Bad!"),
    ]
    assert errs[1].detail == "must match the name of an entry in `spec.resourceClaims`"
