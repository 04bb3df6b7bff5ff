"""The pod-template subset of ValidatePodSpec used by Job validation."""

from __future__ import annotations

from typing import Any

from kubedra.api import codec
from kubedra.api.core import PodTemplateSpec
from kubedra.validation.field import ROOT
from kubedra.validation.gorepr import go_time
from kubedra.validation.pod_template import default_pod_spec, validate_pod_template_spec


def check(raw: dict[str, Any], defaults: bool = True) -> list[str]:
    template = codec.decode(raw, PodTemplateSpec)
    if defaults:
        default_pod_spec(template.spec)
    return [str(e) for e in validate_pod_template_spec(template, ROOT.child("template"))]


def test_defaulted_template_is_valid() -> None:
    assert check({"spec": {"containers": [{"name": "a", "image": "x"}]}}) == []


def test_containers_are_required() -> None:
    assert check({"spec": {}}) == ["template.spec.containers: Required value"]


def test_container_rules() -> None:
    raw = {
        "spec": {
            "initContainers": [{"name": "a", "image": "x"}],
            "containers": [
                {"name": "a", "image": "x"},
                {"name": "B_", "imagePullPolicy": "Sometimes"},
            ],
            "volumes": [{"name": "v"}, {"name": "v"}],
            "dnsPolicy": "Cluster",
            "activeDeadlineSeconds": 0,
        }
    }
    got = check(raw)
    assert got[0] == 'template.spec.volumes[1].name: Duplicate value: "v"'
    assert got[1] == 'template.spec.containers[0].name: Duplicate value: "a"'
    assert got[2].startswith('template.spec.containers[1].name: Invalid value: "B_": a lowercase')
    assert got[3:] == [
        "template.spec.containers[1].image: Required value",
        'template.spec.containers[1].imagePullPolicy: Unsupported value: "Sometimes": supported '
        'values: "Always", "IfNotPresent", "Never"',
        'template.spec.dnsPolicy: Unsupported value: "Cluster": supported values: '
        '"ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"',
        "template.spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and "
        "2147483647, inclusive",
    ]


def test_undefaulted_policies_are_required() -> None:
    got = check({"spec": {"containers": [{"name": "a", "image": "x"}]}}, defaults=False)
    assert got == [
        "template.spec.containers[0].terminationMessagePolicy: Required value: must be 'File' "
        "or 'FallbackToLogsOnError'",
        "template.spec.containers[0].imagePullPolicy: Required value",
        "template.spec.restartPolicy: Required value",
        "template.spec.dnsPolicy: Required value",
    ]


def test_ephemeral_containers_are_forbidden_in_templates() -> None:
    raw = {"spec": {"containers": [{"name": "a", "image": "x"}], "ephemeralContainers": [{}]}}
    assert check(raw) == [
        "template.spec.ephemeralContainers: Forbidden: ephemeral containers not allowed in pod "
        "template"
    ]


def test_go_time_rendering() -> None:
    assert str(go_time("2024-01-01T01:30:00+01:00")) == "2024-01-01 00:30:00 +0000 UTC"
    assert str(go_time("2024-01-01T00:00:00.25Z")) == "2024-01-01 00:00:00.25 +0000 UTC"
    assert str(go_time("yesterday")) == "yesterday"
