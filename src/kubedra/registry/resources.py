"""Which strategy serves each resource: its rules, bound to the resource table
(:data:`kubedra.api.scheme.SCHEME`) under the resource's storage version (upstream wires one
``NewREST`` per resource in ``pkg/registry``). A strategy is written once, on the stored
(hub) form, whatever versions the resource is served in.

Adding a resource is a row in the scheme and a row here; ``tests/unit/api/test_scheme.py``
fails until both exist.
"""

from __future__ import annotations

from kubedra.api.features import FeatureGates
from kubedra.api.scheme import AUTHENTICATION, AUTHORIZATION, GVR, RBAC, RESOURCE
from kubedra.registry.strategies import core, devices, job, rbac, resource
from kubedra.registry.strategies.base import AnyStrategy


def strategies(gates: FeatureGates) -> dict[GVR, AnyStrategy]:
    """Every resource's strategy under the serving feature gates, by its storage GVR
    (:attr:`kubedra.api.scheme.GroupResource.storage_gvr`)."""
    return {
        ("", "v1", "namespaces"): core.NamespaceStrategy(),
        ("", "v1", "nodes"): core.NodeStrategy(),
        ("", "v1", "pods"): core.PodStrategy(),
        ("", "v1", "events"): core.EventStrategy(),
        ("", "v1", "services"): core.ServiceStrategy(),
        ("", "v1", "serviceaccounts"): core.ServiceAccountStrategy(),
        ("coordination.k8s.io", "v1", "leases"): core.LeaseStrategy(),
        ("batch", "v1", "jobs"): job.JobStrategy(gates),
        (RESOURCE, "v1alpha2", "resourceclasses"): resource.resource_class(),
        (RESOURCE, "v1alpha2", "resourceclaims"): resource.resource_claim(),
        (RESOURCE, "v1alpha2", "resourceclaimtemplates"): resource.resource_claim_template(),
        (RESOURCE, "v1alpha2", "podschedulingcontexts"): resource.pod_scheduling_context(),
        (RESOURCE, "v1alpha2", "resourceslices"): resource.ResourceSliceStrategy(),
        (RESOURCE, "v1alpha2", "resourceclaimparameters"):
            resource.resource_claim_parameters(),
        (RESOURCE, "v1alpha2", "resourceclassparameters"):
            resource.resource_class_parameters(),
        **devices.strategies(gates),
        (RBAC, "v1", "roles"): rbac.RoleStrategy(),
        (RBAC, "v1", "clusterroles"): rbac.ClusterRoleStrategy(),
        (RBAC, "v1", "rolebindings"): rbac.RoleBindingStrategy(),
        (RBAC, "v1", "clusterrolebindings"): rbac.ClusterRoleBindingStrategy(),
        (AUTHORIZATION, "v1", "selfsubjectaccessreviews"):
            rbac.SelfSubjectAccessReviewStrategy(),
        (AUTHORIZATION, "v1", "subjectaccessreviews"): rbac.SubjectAccessReviewStrategy(),
        (AUTHORIZATION, "v1", "selfsubjectrulesreviews"):
            rbac.SelfSubjectRulesReviewStrategy(),
        (AUTHENTICATION, "v1", "selfsubjectreviews"): rbac.SelfSubjectReviewStrategy(),
    }
