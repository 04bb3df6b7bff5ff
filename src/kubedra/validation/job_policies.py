"""Job ``podFailurePolicy``, ``successPolicy`` and ``podReplacementPolicy`` rules (v1.30)."""

from __future__ import annotations

from kubedra.api import batch
from kubedra.api.batch import JobSpec, PodFailurePolicyRule, SuccessPolicyRule
from kubedra.api.goformat import go_quote
from kubedra.validation import gorepr
from kubedra.validation.field import (
    OMIT_VALUE,
    ErrorList,
    Path,
    duplicate,
    invalid,
    not_supported,
    required,
    too_long,
    too_many,
)
from kubedra.validation.job_status import IndexFormatError, validate_indexes_format
from kubedra.validation.meta import validate_label_name, validate_nonnegative_field

MAX_POD_FAILURE_POLICY_RULES = 20
MAX_POD_FAILURE_POLICY_ON_EXIT_CODES_VALUES = 255
MAX_POD_FAILURE_POLICY_ON_POD_CONDITIONS_PATTERNS = 20
MAX_SUCCESS_POLICY_SUCCEEDED_INDEXES_LENGTH = 64 * 1024
MAX_SUCCESS_POLICY_RULES = 20

_CONDITION_STATUSES = ("False", "True", "Unknown")
_REPLACEMENT_POLICIES = (batch.FAILED, batch.TERMINATING_OR_FAILED)


def _int32_slice(values: list[int] | None) -> gorepr.GoRepr:
    if values is None:
        return gorepr.GoRepr("[]int32(nil)")
    return gorepr.GoRepr("[]int32{" + ", ".join(str(v) for v in values) + "}")


def _go_list(values: tuple[str, ...]) -> str:
    """Go's ``%q`` of a ``[]string``: ``["a" "b"]``."""
    return "[" + " ".join(go_quote(v) for v in values) + "]"


def _validate_pod_failure_rule(
    spec: JobSpec, rule: PodFailurePolicyRule, path: Path, containers: set[str]
) -> ErrorList:
    errs: ErrorList = []
    action = path.child("action")
    if not rule.action:
        errs.append(required(action, f"valid values: {_go_list(batch.POD_FAILURE_POLICY_ACTIONS)}"))
    elif rule.action == "FailIndex":
        if spec.backoff_limit_per_index is None:
            errs.append(invalid(action, rule.action, "requires the backoffLimitPerIndex to be set"))
    elif rule.action not in batch.POD_FAILURE_POLICY_ACTIONS:
        errs.append(not_supported(action, rule.action, batch.POD_FAILURE_POLICY_ACTIONS))
    codes = rule.on_exit_codes
    if codes is not None:
        cpath = path.child("onExitCodes")
        operator = cpath.child("operator")
        if not codes.operator:
            errs.append(
                required(operator, f"valid values: {_go_list(batch.POD_FAILURE_POLICY_OPERATORS)}")
            )
        elif codes.operator not in batch.POD_FAILURE_POLICY_OPERATORS:
            errs.append(not_supported(operator, codes.operator, batch.POD_FAILURE_POLICY_OPERATORS))
        if codes.container_name is not None and codes.container_name not in containers:
            errs.append(
                invalid(
                    cpath.child("containerName"),
                    codes.container_name,
                    "must be one of the container or initContainer names in the pod template",
                )
            )
        vpath = cpath.child("values")
        if not codes.values:
            errs.append(
                invalid(vpath, _int32_slice(codes.values), "at least one value is required")
            )
        elif len(codes.values) > MAX_POD_FAILURE_POLICY_ON_EXIT_CODES_VALUES:
            errs.append(
                too_many(vpath, len(codes.values), MAX_POD_FAILURE_POLICY_ON_EXIT_CODES_VALUES)
            )
        seen: set[int] = set()
        for j, code in enumerate(codes.values):
            if codes.operator == "In" and code == 0:
                errs.append(invalid(vpath.index(j), code, "must not be 0 for the In operator"))
            if code in seen:
                errs.append(duplicate(vpath.index(j), code))
            seen.add(code)
        if any(a > b for a, b in zip(codes.values, codes.values[1:], strict=False)):
            errs.append(invalid(vpath, _int32_slice(codes.values), "must be ordered"))
    patterns = rule.on_pod_conditions or []
    if patterns:
        ppath = path.child("onPodConditions")
        if len(patterns) > MAX_POD_FAILURE_POLICY_ON_POD_CONDITIONS_PATTERNS:
            errs.append(
                too_many(ppath, len(patterns), MAX_POD_FAILURE_POLICY_ON_POD_CONDITIONS_PATTERNS)
            )
        for j, pattern in enumerate(patterns):
            errs += validate_label_name(pattern.type, ppath.index(j).child("type"))
            status = ppath.index(j).child("status")
            if not pattern.status:
                errs.append(required(status, f"valid values: {_go_list(_CONDITION_STATUSES)}"))
            elif pattern.status not in _CONDITION_STATUSES:
                errs.append(not_supported(status, pattern.status, _CONDITION_STATUSES))
    if codes is not None and patterns:
        errs.append(
            invalid(
                path, OMIT_VALUE, "specifying both OnExitCodes and OnPodConditions is not supported"
            )
        )
    if codes is None and not patterns:
        errs.append(
            invalid(
                path, OMIT_VALUE, "specifying one of OnExitCodes and OnPodConditions is required"
            )
        )
    return errs


def validate_pod_failure_policy(spec: JobSpec, path: Path) -> ErrorList:
    assert spec.pod_failure_policy is not None
    rules = spec.pod_failure_policy.rules
    errs: ErrorList = []
    if len(rules) > MAX_POD_FAILURE_POLICY_RULES:
        errs.append(too_many(path.child("rules"), len(rules), MAX_POD_FAILURE_POLICY_RULES))
    pod = spec.template.spec
    containers = {c.name for c in (*pod.containers, *(pod.init_containers or ()))}
    for i, rule in enumerate(rules):
        errs += _validate_pod_failure_rule(spec, rule, path.child("rules").index(i), containers)
    return errs


def _validate_success_rule(spec: JobSpec, rule: SuccessPolicyRule, path: Path) -> ErrorList:
    errs: ErrorList = []
    if rule.succeeded_count is None and rule.succeeded_indexes is None:
        errs.append(
            required(path, "at least one of succeededCount or succeededIndexes must be specified")
        )
    completions = spec.completions
    total = 0
    if rule.succeeded_indexes is not None:
        ipath = path.child("succeededIndexes")
        if len(rule.succeeded_indexes.encode()) > MAX_SUCCESS_POLICY_SUCCEEDED_INDEXES_LENGTH:
            errs.append(
                too_long(ipath, rule.succeeded_indexes, MAX_SUCCESS_POLICY_SUCCEEDED_INDEXES_LENGTH)
            )
        if completions is not None:  # upstream dereferences a nil completions here and panics
            try:
                total = validate_indexes_format(rule.succeeded_indexes, completions)
            except IndexFormatError as e:
                errs.append(
                    invalid(ipath, rule.succeeded_indexes, f"error parsing succeededIndexes: {e}")
                )
    if rule.succeeded_count is not None:
        cpath = path.child("succeededCount")
        count = rule.succeeded_count
        errs += validate_nonnegative_field(count, cpath)
        if completions is not None and count > completions:
            errs.append(
                invalid(
                    cpath,
                    count,
                    f"must be less than or equal to {completions} "
                    "(the number of specified completions)",
                )
            )
        if rule.succeeded_indexes is not None and count > total:
            errs.append(
                invalid(
                    cpath,
                    count,
                    f"must be less than or equal to {total} "
                    "(the number of indexes in the specified succeededIndexes field)",
                )
            )
    return errs


def validate_success_policy(spec: JobSpec, path: Path) -> ErrorList:
    """Only Indexed jobs may have one; then at most 20 rules, each well-formed."""
    assert spec.success_policy is not None
    if spec.completion_mode != batch.INDEXED_COMPLETION:
        return [
            invalid(
                path, gorepr.struct_json(spec.success_policy), "requires indexed completion mode"
            )
        ]
    errs: ErrorList = []
    rules = spec.success_policy.rules
    if not rules:
        errs.append(
            required(
                path.child("rules"),
                "at least one rules must be specified when the successPolicy is specified",
            )
        )
    if len(rules) > MAX_SUCCESS_POLICY_RULES:
        errs.append(too_many(path.child("rules"), len(rules), MAX_SUCCESS_POLICY_RULES))
    for i, rule in enumerate(rules):
        errs += _validate_success_rule(spec, rule, path.child("rules").index(i))
    return errs


def validate_pod_replacement_policy(spec: JobSpec, path: Path) -> ErrorList:
    """``Failed`` only with a podFailurePolicy, else ``Failed`` or ``TerminatingOrFailed``."""
    value = spec.pod_replacement_policy
    if value is None:
        return []
    if spec.pod_failure_policy is not None:
        return [] if value == batch.FAILED else [not_supported(path, value, (batch.FAILED,))]
    if value not in _REPLACEMENT_POLICIES:
        return [not_supported(path, value, _REPLACEMENT_POLICIES)]
    return []
