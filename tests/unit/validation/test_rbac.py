"""RBAC validation and defaults with upstream's texts (pkg/apis/rbac/validation)."""

from __future__ import annotations

from typing import Any

from kubedra.api import codec
from kubedra.api.rbac import ClusterRole, ClusterRoleBinding, Role, RoleBinding
from kubedra.validation import rbac


def _errors(errs: list[Any]) -> list[str]:
    return [str(e) for e in errs]


def test_policy_rules() -> None:
    role = codec.decode({"metadata": {"name": "r", "namespace": "ns"}, "rules": [
        {"verbs": []},
        {"verbs": ["get"], "nonResourceURLs": ["/healthz"]},
        {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]},
    ]}, Role)
    assert _errors(rbac.validate_role(role)) == [
        "rules[0].verbs: Required value: verbs must contain at least one value",
        "rules[0].apiGroups: Required value: resource rules must supply at least one api group",
        "rules[0].resources: Required value: resource rules must supply at least one resource",
        'rules[1].nonResourceURLs: Invalid value: []string{"/healthz"}: namespaced rules '
        "cannot apply to non-resource URLs",
    ]
    mixed = codec.decode({"metadata": {"name": "c"}, "rules": [
        {"verbs": ["get"], "resources": ["pods"], "nonResourceURLs": ["/x"]}],
        "aggregationRule": {}}, ClusterRole)
    assert _errors(rbac.validate_cluster_role(mixed)) == [
        'rules[0].nonResourceURLs: Invalid value: []string{"/x"}: rules cannot apply to both '
        "regular resources and non-resource URLs",
        "aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector "
        "required if aggregationRule is non-nil",
    ]
    assert _errors(rbac.validate_cluster_role(codec.decode(
        {"metadata": {"name": "a/b"}}, ClusterRole))) == [
        "metadata.name: Invalid value: \"a/b\": may not contain '/'"]


def test_bindings_default_and_validate() -> None:
    binding = codec.decode({"metadata": {"name": "b", "namespace": "ns"},
                            "roleRef": {"kind": "Role", "name": "r"},
                            "subjects": [{"kind": "User", "name": "u"},
                                         {"kind": "ServiceAccount", "name": "sa"},
                                         {"kind": "Robot", "name": "x"}]}, RoleBinding)
    rbac.default_binding(binding)
    assert binding.role_ref.api_group == rbac.GROUP
    assert binding.subjects is not None and binding.subjects[0].api_group == rbac.GROUP
    assert binding.subjects[1].api_group is None
    assert _errors(rbac.validate_role_binding(binding)) == [
        'subjects[2].kind: Unsupported value: "Robot": supported values: "ServiceAccount", '
        '"User", "Group"']
    cluster = codec.decode({"metadata": {"name": "b"},
                            "roleRef": {"apiGroup": rbac.GROUP, "kind": "Role", "name": "r"},
                            "subjects": [{"kind": "ServiceAccount", "name": "sa"}]},
                           ClusterRoleBinding)
    assert _errors(rbac.validate_cluster_role_binding(cluster)) == [
        'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"',
        "subjects[0].namespace: Required value"]
    changed = codec.decode(codec.to_builtins(binding), RoleBinding)
    changed.role_ref.name = "other"
    changed.metadata.resource_version = "1"
    assert "roleRef: Invalid value" in str(rbac.validate_binding_update(changed, binding)[0])
