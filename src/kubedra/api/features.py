"""Feature gates: an immutable value parsed from ``--feature-gates=A=true,B=false``.

Only the gates kubedra acts on are known. Each emulated release (:mod:`kubedra.api.release`)
has its own table with that release's stages, defaults and locks, read from upstream's
``pkg/features/kube_features.go`` (versioned specs) and the DRA spec §1; the parse errors are
``component-base/featuregate``'s. In v1.30, ``DynamicResourceAllocation`` is on by default
here because DRA is what kubedra serves (upstream: alpha, off). A gate the release no longer
has (removed after GA) is unknown to ``--feature-gates`` and keeps its GA state.
Components take a :class:`FeatureGates` argument instead of reading process-global state, so
tests and in-process clusters can run with different gates side by side.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

from kubedra.api.goformat import parse_bool
from kubedra.api.release import R1_30, R1_34, Release


@dataclass(frozen=True, slots=True)
class GateSpec:
    attr: str
    default: bool
    stage: str  # "ALPHA", "BETA", "GA"
    locked: bool = False


# Upstream gate name -> how kubedra stores it (v1.30 stage and default).
KNOWN_GATES: Mapping[str, GateSpec] = MappingProxyType({
    "DynamicResourceAllocation": GateSpec("dynamic_resource_allocation", True, "ALPHA"),
    "ElasticIndexedJob": GateSpec("elastic_indexed_job", True, "BETA"),
    "JobBackoffLimitPerIndex": GateSpec("job_backoff_limit_per_index", True, "BETA"),
    "JobManagedBy": GateSpec("job_managed_by", False, "ALPHA"),
    "JobPodFailurePolicy": GateSpec("job_pod_failure_policy", True, "BETA"),
    "JobPodReplacementPolicy": GateSpec("job_pod_replacement_policy", True, "BETA"),
    "JobReadyPods": GateSpec("job_ready_pods", True, "GA", locked=True),
    "JobSuccessPolicy": GateSpec("job_success_policy", False, "ALPHA"),
    "PodIndexLabel": GateSpec("pod_index_label", True, "BETA"),
})

# v1.34: ElasticIndexedJob, JobPodFailurePolicy and JobReadyPods are removed (GA, on).
_GATES_1_34: Mapping[str, GateSpec] = MappingProxyType({
    "DRAAdminAccess": GateSpec("dra_admin_access", True, "BETA"),
    "DRAConsumableCapacity": GateSpec("dra_consumable_capacity", False, "ALPHA"),
    "DRADeviceBindingConditions": GateSpec("dra_device_binding_conditions", False, "ALPHA"),
    "DRADeviceTaints": GateSpec("dra_device_taints", False, "ALPHA"),
    "DRAExtendedResource": GateSpec("dra_extended_resource", False, "ALPHA"),
    "DRAPartitionableDevices": GateSpec("dra_partitionable_devices", False, "ALPHA"),
    "DRAPrioritizedList": GateSpec("dra_prioritized_list", True, "BETA"),
    "DRAResourceClaimDeviceStatus": GateSpec("dra_resource_claim_device_status", True, "BETA"),
    "DRASchedulerFilterTimeout": GateSpec("dra_scheduler_filter_timeout", True, "BETA"),
    "DynamicResourceAllocation": GateSpec("dynamic_resource_allocation", True, "GA"),
    "JobBackoffLimitPerIndex": GateSpec("job_backoff_limit_per_index", True, "GA", locked=True),
    "JobManagedBy": GateSpec("job_managed_by", True, "BETA"),
    "JobPodReplacementPolicy": GateSpec("job_pod_replacement_policy", True, "GA",
                                        locked=True),
    "JobSuccessPolicy": GateSpec("job_success_policy", True, "GA", locked=True),
    "PodIndexLabel": GateSpec("pod_index_label", True, "GA", locked=True),
})

#: Each release's known gates.
RELEASE_GATES: Final[Mapping[Release, Mapping[str, GateSpec]]] = MappingProxyType({
    R1_30: KNOWN_GATES,
    R1_34: _GATES_1_34,
})

_ALL_STAGE = {"AllAlpha": "ALPHA", "AllBeta": "BETA"}


class FeatureGateError(ValueError):
    """A ``--feature-gates`` value upstream would refuse (same message)."""


@dataclass(frozen=True, slots=True)
class FeatureGates:
    """The gates of one release; the class defaults are v1.30's table (:meth:`for_release`
    gives a release's, as the commands build theirs from ``--emulated-version``). Attributes
    of gates a release lacks hold what that release does: off before a gate exists, on once
    it was removed after GA."""

    release: Release = R1_30
    dynamic_resource_allocation: bool = True
    elastic_indexed_job: bool = True
    job_backoff_limit_per_index: bool = True
    job_managed_by: bool = False
    job_pod_failure_policy: bool = True
    job_pod_replacement_policy: bool = True
    job_ready_pods: bool = True
    job_success_policy: bool = False
    pod_index_label: bool = True
    dra_admin_access: bool = False
    dra_prioritized_list: bool = False
    dra_resource_claim_device_status: bool = False
    dra_scheduler_filter_timeout: bool = False
    dra_device_taints: bool = False
    dra_partitionable_devices: bool = False
    dra_consumable_capacity: bool = False
    dra_device_binding_conditions: bool = False
    dra_extended_resource: bool = False

    @classmethod
    def for_release(cls, release: Release) -> FeatureGates:
        """``release``'s defaults (gates it no longer has keep this class's GA-on default)."""
        known = RELEASE_GATES[release]
        return cls(release, **{spec.attr: spec.default for spec in known.values()})

    @property
    def known(self) -> Mapping[str, GateSpec]:
        """The gates of this release, by upstream name."""
        return RELEASE_GATES[self.release]

    def enabled(self, name: str) -> bool:
        """The state of the gate with upstream name ``name`` (``"JobManagedBy"``)."""
        spec = self.known.get(name)
        if spec is None:
            raise FeatureGateError(f"feature {name!r} is not registered in FeatureGate")
        return bool(getattr(self, spec.attr))

    def with_gates(self, values: Mapping[str, bool]) -> FeatureGates:
        """A copy with the gates in ``values`` (upstream names) set; ``AllAlpha``/``AllBeta``
        set every unlisted gate of that stage."""
        known = self.known
        changes: dict[str, Any] = {}  # gate attributes only (bool); Any for replace()
        for key, stage in _ALL_STAGE.items():
            if key in values:
                for name, spec in known.items():
                    if spec.stage == stage and name not in values:
                        changes[spec.attr] = values[key]
        for name, value in values.items():
            if name in _ALL_STAGE:
                continue
            gate = known.get(name)
            if gate is None:
                raise FeatureGateError(f"unrecognized feature gate: {name}")
            if gate.locked and value != gate.default:
                raise FeatureGateError(
                    f"cannot set feature gate {name} to {_go_bool(value)}, "
                    f"feature is locked to {_go_bool(gate.default)}"
                )
            changes[gate.attr] = value
        return dataclasses.replace(self, **changes)

    def to_flag(self) -> str:
        """The ``--feature-gates`` value that reproduces this state (non-defaults only)."""
        parts = [
            f"{name}={_go_bool(getattr(self, spec.attr))}"
            for name, spec in sorted(self.known.items())
            if getattr(self, spec.attr) != spec.default
        ]
        return ",".join(parts)


def parse_feature_gates(text: str, base: FeatureGates | None = None) -> FeatureGates:
    """Parse ``A=true,B=false`` as ``featureGate.Set`` does (errors carry its messages), over
    ``base`` (v1.30's defaults when not given; its release decides which gates exist)."""
    values: dict[str, bool] = {}
    for item in text.split(","):
        if not item:
            continue
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep:
            raise FeatureGateError(f"missing bool value for {key}")
        raw = raw.strip()
        values[key] = _parse_go_bool(key, raw)
    return (base or FeatureGates()).with_gates(values)


def _parse_go_bool(key: str, raw: str) -> bool:
    try:
        return parse_bool(raw)
    except ValueError as err:
        raise FeatureGateError(f"invalid value of {key}={raw}, err: {err}") from None


def _go_bool(value: bool) -> str:
    return "true" if value else "false"
