"""Which strategy serves each kind: one explicit table, keyed like ``api.kinds.KINDS`` by
Kind name (upstream wires one ``NewREST`` per resource in ``pkg/registry``).

Adding a kind is a row in ``api/kinds.py`` and a row here; a test checks the two match.
"""

from __future__ import annotations

from kubedra.api.features import FeatureGates
from kubedra.registry.strategies import core, job, rbac, resource
from kubedra.registry.strategies.base import AnyStrategy


def strategies(gates: FeatureGates) -> dict[str, AnyStrategy]:
    """Every kind's strategy under the serving feature gates."""
    return {
        "Namespace": core.NamespaceStrategy(),
        "Node": core.NodeStrategy(),
        "Pod": core.PodStrategy(),
        "Event": core.EventStrategy(),
        "Service": core.ServiceStrategy(),
        "ServiceAccount": core.ServiceAccountStrategy(),
        "Lease": core.LeaseStrategy(),
        "Job": job.JobStrategy(gates),
        "ResourceClass": resource.resource_class(),
        "ResourceClaim": resource.resource_claim(),
        "ResourceClaimTemplate": resource.resource_claim_template(),
        "PodSchedulingContext": resource.pod_scheduling_context(),
        "ResourceSlice": resource.ResourceSliceStrategy(),
        "ResourceClaimParameters": resource.resource_claim_parameters(),
        "ResourceClassParameters": resource.resource_class_parameters(),
        "Role": rbac.RoleStrategy(),
        "ClusterRole": rbac.ClusterRoleStrategy(),
        "RoleBinding": rbac.RoleBindingStrategy(),
        "ClusterRoleBinding": rbac.ClusterRoleBindingStrategy(),
        "SelfSubjectAccessReview": rbac.SelfSubjectAccessReviewStrategy(),
        "SubjectAccessReview": rbac.SubjectAccessReviewStrategy(),
        "SelfSubjectRulesReview": rbac.SelfSubjectRulesReviewStrategy(),
        "SelfSubjectReview": rbac.SelfSubjectReviewStrategy(),
    }
