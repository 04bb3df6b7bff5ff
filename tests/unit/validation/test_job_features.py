"""Feature gates: v1.30 defaults, ``--feature-gates`` parsing and its upstream error texts."""

from __future__ import annotations

import pytest

from kubedra.api.features import (
    KNOWN_GATES,
    FeatureGateError,
    FeatureGates,
    parse_feature_gates,
)


def test_defaults_are_v1_30_except_dra() -> None:
    gates = FeatureGates()
    assert gates.job_managed_by is False
    assert gates.job_success_policy is False
    assert gates.job_pod_replacement_policy is True
    assert gates.job_backoff_limit_per_index is True
    assert gates.job_pod_failure_policy is True
    assert gates.elastic_indexed_job is True
    assert gates.dynamic_resource_allocation is True  # upstream: False (alpha)
    for name, spec in KNOWN_GATES.items():
        assert gates.enabled(name) is spec.default


def test_parse_sets_gates_and_keeps_the_rest() -> None:
    gates = parse_feature_gates(" JobManagedBy = true ,DynamicResourceAllocation=false,")
    assert gates.job_managed_by is True
    assert gates.dynamic_resource_allocation is False
    assert gates.job_pod_replacement_policy is True
    assert parse_feature_gates("") == FeatureGates()


@pytest.mark.parametrize("value", ["1", "t", "T", "true", "TRUE", "True"])
def test_go_bool_true_spellings(value: str) -> None:
    assert parse_feature_gates(f"JobManagedBy={value}").job_managed_by is True


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("NoSuchGate=true", "unrecognized feature gate: NoSuchGate"),
        ("JobManagedBy", "missing bool value for JobManagedBy"),
        (
            "JobManagedBy=yes",
            'invalid value of JobManagedBy=yes, err: strconv.ParseBool: parsing "yes": '
            "invalid syntax",
        ),
        (
            "JobReadyPods=false",
            "cannot set feature gate JobReadyPods to false, feature is locked to true",
        ),
    ],
)
def test_parse_errors(text: str, message: str) -> None:
    with pytest.raises(FeatureGateError) as err:
        parse_feature_gates(text)
    assert str(err.value) == message


def test_all_alpha_sets_unlisted_alpha_gates_only() -> None:
    gates = parse_feature_gates("AllAlpha=true,JobSuccessPolicy=false")
    assert gates.job_managed_by is True
    assert gates.job_success_policy is False
    assert gates.pod_index_label is True  # beta: untouched
    assert parse_feature_gates("AllBeta=false").job_pod_replacement_policy is False


def test_to_flag_round_trips() -> None:
    gates = parse_feature_gates("JobManagedBy=true,PodIndexLabel=false")
    assert gates.to_flag() == "JobManagedBy=true,PodIndexLabel=false"
    assert parse_feature_gates(gates.to_flag()) == gates
    assert FeatureGates().to_flag() == ""


def test_enabled_rejects_unknown_names() -> None:
    with pytest.raises(FeatureGateError):
        FeatureGates().enabled("Nope")


def test_gates_are_immutable() -> None:
    gates = FeatureGates()
    with pytest.raises(AttributeError):
        gates.job_managed_by = True  # type: ignore[misc]
