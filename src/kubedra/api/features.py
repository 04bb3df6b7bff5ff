"""Feature gates: an immutable value parsed from ``--feature-gates=A=true,B=false``.

Only the gates kubedra acts on are known; names, defaults and the parse errors are those of
Kubernetes v1.30 (``pkg/features/kube_features.go``, ``component-base/featuregate``), except
``DynamicResourceAllocation``, which is on by default here because DRA is what kubedra serves.
Components take a :class:`FeatureGates` argument instead of reading process-global state, so
tests and in-process clusters can run with different gates side by side.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from kubedra.api.goformat import go_quote


@dataclass(frozen=True, slots=True)
class GateSpec:
    attr: str
    default: bool
    stage: str  # "ALPHA", "BETA", "GA"
    locked: bool = False


# Upstream gate name -> how kubedra stores it (v1.30 stage and default).
KNOWN_GATES: Mapping[str, GateSpec] = {
    "DynamicResourceAllocation": GateSpec("dynamic_resource_allocation", True, "ALPHA"),
    "ElasticIndexedJob": GateSpec("elastic_indexed_job", True, "BETA"),
    "JobBackoffLimitPerIndex": GateSpec("job_backoff_limit_per_index", True, "BETA"),
    "JobManagedBy": GateSpec("job_managed_by", False, "ALPHA"),
    "JobPodFailurePolicy": GateSpec("job_pod_failure_policy", True, "BETA"),
    "JobPodReplacementPolicy": GateSpec("job_pod_replacement_policy", True, "BETA"),
    "JobReadyPods": GateSpec("job_ready_pods", True, "GA", locked=True),
    "JobSuccessPolicy": GateSpec("job_success_policy", False, "ALPHA"),
    "PodIndexLabel": GateSpec("pod_index_label", True, "BETA"),
}

_ALL_STAGE = {"AllAlpha": "ALPHA", "AllBeta": "BETA"}


class FeatureGateError(ValueError):
    """A ``--feature-gates`` value upstream would refuse (same message)."""


@dataclass(frozen=True, slots=True)
class FeatureGates:
    dynamic_resource_allocation: bool = True
    elastic_indexed_job: bool = True
    job_backoff_limit_per_index: bool = True
    job_managed_by: bool = False
    job_pod_failure_policy: bool = True
    job_pod_replacement_policy: bool = True
    job_ready_pods: bool = True
    job_success_policy: bool = False
    pod_index_label: bool = True

    def enabled(self, name: str) -> bool:
        """The state of the gate with upstream name ``name`` (``"JobManagedBy"``)."""
        spec = KNOWN_GATES.get(name)
        if spec is None:
            raise FeatureGateError(f"feature {name!r} is not registered in FeatureGate")
        return bool(getattr(self, spec.attr))

    def with_gates(self, values: Mapping[str, bool]) -> FeatureGates:
        """A copy with the gates in ``values`` (upstream names) set; ``AllAlpha``/``AllBeta``
        set every unlisted gate of that stage."""
        changes: dict[str, bool] = {}
        for key, stage in _ALL_STAGE.items():
            if key in values:
                for name, spec in KNOWN_GATES.items():
                    if spec.stage == stage and name not in values:
                        changes[spec.attr] = values[key]
        for name, value in values.items():
            if name in _ALL_STAGE:
                continue
            gate = KNOWN_GATES.get(name)
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
            for name, spec in sorted(KNOWN_GATES.items())
            if getattr(self, spec.attr) != spec.default
        ]
        return ",".join(parts)


def parse_feature_gates(text: str, base: FeatureGates | None = None) -> FeatureGates:
    """Parse ``A=true,B=false`` as ``featureGate.Set`` does (errors carry its messages)."""
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
    if raw in ("1", "t", "T", "true", "TRUE", "True"):
        return True
    if raw in ("0", "f", "F", "false", "FALSE", "False"):
        return False
    raise FeatureGateError(
        f"invalid value of {key}={raw}, err: strconv.ParseBool: parsing {go_quote(raw)}: "
        "invalid syntax"
    )


def _go_bool(value: bool) -> str:
    return "true" if value else "false"
