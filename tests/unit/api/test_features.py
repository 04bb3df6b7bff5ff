"""Feature gates per emulated release: each release's table, defaults and upstream errors."""

from __future__ import annotations

import dataclasses

import pytest

from kubedra.api.features import (
    KNOWN_GATES,
    RELEASE_GATES,
    FeatureGateError,
    FeatureGates,
    parse_feature_gates,
)
from kubedra.api.release import R1_30, R1_34

V134 = FeatureGates.for_release(R1_34)


def test_1_30_is_todays_table_and_the_class_defaults() -> None:
    assert RELEASE_GATES[R1_30] is KNOWN_GATES
    assert FeatureGates.for_release(R1_30) == FeatureGates()
    assert FeatureGates().release is R1_30


def test_1_34_defaults() -> None:
    assert V134.release is R1_34
    on = {"dynamic_resource_allocation", "job_managed_by", "job_success_policy",
          "job_backoff_limit_per_index", "job_pod_replacement_policy", "pod_index_label",
          "dra_admin_access", "dra_prioritized_list", "dra_resource_claim_device_status",
          "dra_scheduler_filter_timeout",
          # removed after GA: their behaviour stays on
          "elastic_indexed_job", "job_pod_failure_policy", "job_ready_pods"}
    for field in dataclasses.fields(FeatureGates):
        if field.name != "release":
            assert getattr(V134, field.name) is (field.name in on), field.name
    for name, spec in RELEASE_GATES[R1_34].items():
        assert V134.enabled(name) is spec.default


def test_every_table_names_real_attributes() -> None:
    attrs = {f.name for f in dataclasses.fields(FeatureGates)}
    for table in RELEASE_GATES.values():
        assert {spec.attr for spec in table.values()} <= attrs


@pytest.mark.parametrize("name", ["ElasticIndexedJob", "JobPodFailurePolicy", "JobReadyPods"])
def test_gates_removed_by_1_34_are_unrecognized(name: str) -> None:
    with pytest.raises(FeatureGateError) as err:
        parse_feature_gates(f"{name}=true", V134)
    assert str(err.value) == f"unrecognized feature gate: {name}"
    with pytest.raises(FeatureGateError):
        V134.enabled(name)


@pytest.mark.parametrize("name", ["DRAAdminAccess", "DRADeviceTaints"])
def test_1_34_gates_are_unrecognized_in_1_30(name: str) -> None:
    with pytest.raises(FeatureGateError) as err:
        parse_feature_gates(f"{name}=true")
    assert str(err.value) == f"unrecognized feature gate: {name}"


@pytest.mark.parametrize(("name", "attr"), [
    ("JobSuccessPolicy", "job_success_policy"),
    ("JobBackoffLimitPerIndex", "job_backoff_limit_per_index"),
    ("JobPodReplacementPolicy", "job_pod_replacement_policy"),
    ("PodIndexLabel", "pod_index_label"),
])
def test_gates_ga_in_1_34_are_locked(name: str, attr: str) -> None:
    with pytest.raises(FeatureGateError) as err:
        parse_feature_gates(f"{name}=false", V134)
    assert str(err.value) == (
        f"cannot set feature gate {name} to false, feature is locked to true")
    assert getattr(parse_feature_gates(f"{name}=true", V134), attr) is True


def test_1_34_parse_keeps_the_release_and_sets_gates() -> None:
    gates = parse_feature_gates("JobManagedBy=false,DRADeviceTaints=true,"
                                "DynamicResourceAllocation=false", V134)
    assert gates.release is R1_34
    assert (gates.job_managed_by, gates.dra_device_taints,
            gates.dynamic_resource_allocation) == (False, True, False)
    assert gates.to_flag() == ("DRADeviceTaints=true,DynamicResourceAllocation=false,"
                               "JobManagedBy=false")
    assert parse_feature_gates(gates.to_flag(), V134) == gates
    assert V134.to_flag() == ""


def test_1_34_all_alpha_and_all_beta_follow_its_stages() -> None:
    alpha = parse_feature_gates("AllAlpha=true", V134)
    assert alpha.dra_device_taints and alpha.dra_consumable_capacity
    assert alpha.dra_extended_resource and alpha.dra_partitionable_devices
    beta = parse_feature_gates("AllBeta=false", V134)
    assert not (beta.job_managed_by or beta.dra_admin_access or beta.dra_prioritized_list)
    assert beta.job_success_policy  # GA: untouched
