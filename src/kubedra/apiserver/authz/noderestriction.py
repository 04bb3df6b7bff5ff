"""NodeRestriction admission (upstream ``plugin/pkg/admission/noderestriction`` at v1.30 and
v1.34): what the Node authorizer cannot see from the URL alone. A node may create only its own
Node, its own Lease, ResourceSlices naming itself and mirror pods bound to itself (naming no
ResourceClaim), modify only its own Node (never its taints, nor labels outside the kubelet's
set), and delete or update the status of only the pods bound to it (never their labels or
``resourceClaimStatuses``); from 1.34 on it deletes only ResourceSlices naming itself. The
ResourceSlice rules of each release are ``validation.nodeauthz.SLICE_RULES``, the node a
slice names ``node.RELEASES``."""

from __future__ import annotations

from collections.abc import Mapping

from kubedra.api import codec
from kubedra.api.base import Obj
from kubedra.api.coordination import Lease
from kubedra.api.core import Node, Pod
from kubedra.api.meta import TypedObject
from kubedra.api.release import Release
from kubedra.apiserver import errors
from kubedra.apiserver.auth import User
from kubedra.apiserver.authz.attributes import Attributes
from kubedra.apiserver.authz.node import MIRROR_ANNOTATION, NODE_LEASE_NAMESPACE, RELEASES
from kubedra.apiserver.registry import Resource
from kubedra.apiserver.rest import Rest
from kubedra.validation import nodeauthz

_WRITES = ("update", "patch", "delete")
SLICES = (nodeauthz.RESOURCE_GROUP, nodeauthz.RESOURCE_SLICES)

# The labels a kubelet may set on its own Node (``k8s.io/kubelet/pkg/apis`` well-known labels)
_KUBELET_LABELS = frozenset({
    "kubernetes.io/hostname", "kubernetes.io/os", "kubernetes.io/arch",
    "topology.kubernetes.io/zone", "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region",
    "beta.kubernetes.io/instance-type", "node.kubernetes.io/instance-type",
    "beta.kubernetes.io/os", "beta.kubernetes.io/arch",
})
_KUBELET_DOMAINS = ("kubelet.kubernetes.io", "node.kubernetes.io")
_RESTRICTED_DOMAIN = "node-restriction.kubernetes.io"


def _in_domain(key: str, *domains: str) -> bool:
    """Whether the label's prefix is one of ``domains`` or a subdomain of one."""
    prefix = key.split("/", 1)[0] if "/" in key else ""
    return any(prefix == d or prefix.endswith("." + d) for d in domains)


def forbidden_labels(new: dict[str, str], old: dict[str, str]) -> list[str]:
    """The changed label keys a node may not add, change or remove, sorted: the
    ``node-restriction.kubernetes.io`` ones and the ``kubernetes.io``/``k8s.io`` ones that are
    not the kubelet's own."""
    changed = {k for k in new.keys() | old.keys() if new.get(k) != old.get(k)}
    return sorted(k for k in changed if _in_domain(k, _RESTRICTED_DOMAIN) or (
        _in_domain(k, "kubernetes.io", "k8s.io") and k not in _KUBELET_LABELS
        and not _in_domain(k, *_KUBELET_DOMAINS)))


def _node_of(user: User) -> str | None:
    """The requesting node's name; None for non-nodes; 403 for a nameless node."""
    node, is_node = nodeauthz.node_identity(user.name, user.groups)
    if not is_node:
        return None
    if not node:
        raise errors.ApiError(errors.status_body(
            403, "Forbidden", f'could not determine node from user "{user.name}"'))
    return node


def admit_create(user: User, res: Resource, obj: TypedObject, release: Release) -> None:
    """The body of a node's create."""
    node = _node_of(user)
    if node is None:
        return
    name = obj.metadata.name or ""
    why = None
    if (res.kind.group, res.kind.plural) == SLICES:
        why = _slice(user, "CREATE", codec.to_builtins(obj), release)
    elif isinstance(obj, Node):
        why = _node_create(node, obj)
    elif isinstance(obj, Lease) and obj.metadata.namespace == NODE_LEASE_NAMESPACE and (
        name != node
    ):
        why = "can only access node lease with the same name as the requesting node"
    elif isinstance(obj, Pod):
        if MIRROR_ANNOTATION not in (obj.metadata.annotations or {}):
            why = (f'pod does not have "{MIRROR_ANNOTATION}" annotation, node "{node}" can '
                   "only create mirror pods")
        elif obj.spec.node_name != node:
            why = f'node "{node}" can only create pods with spec.nodeName set to itself'
        elif obj.spec.resource_claims:
            why = f'node "{node}" can not create pods that reference resourceclaims'
    if why is not None:
        raise errors.forbidden_object(res.kind.plural, res.kind.group, name, why)


def _node_create(node: str, obj: Node) -> str | None:
    name = obj.metadata.name or ""
    if name != node:
        return f'node "{node}" is not allowed to modify node "{name}"'
    if obj.spec.config_source is not None:
        return f'node "{node}" is not allowed to create pods with a non-nil configSource'
    if forbidden := forbidden_labels(obj.metadata.labels or {}, {}):
        return f'node "{node}" is not allowed to set the following labels: {", ".join(forbidden)}'
    return None


def admit_update(user: User, res: Resource, subresource: str, obj: TypedObject,
                 old: Obj) -> None:
    """A node's update (PUT or patch) of its Node or of a pod, judged on the new object
    against the stored one ``old``."""
    node = _node_of(user)
    if node is None:
        return
    why = None
    if isinstance(obj, Node):
        why = _node_update(node, obj, old)
    elif isinstance(obj, Pod):
        if subresource == "status":
            why = _pod_status_update(node, obj, old)
        elif not subresource:
            why = (f'unexpected operation "UPDATE", node "{node}" can only create and delete '
                   "mirror pods")
    if why is not None:
        raise errors.forbidden_object(res.kind.plural, res.kind.group, obj.metadata.name or "",
                                      why)


def _node_update(node: str, obj: Node, old: Obj) -> str | None:
    old_spec = old.get("spec") or {}
    source = obj.spec.config_source
    if source is not None and codec.to_builtins(source) != old_spec.get("configSource"):
        return (f'node "{node}" is not allowed to update configSource to a new non-nil '
                "configSource")
    if codec.to_builtins(obj.spec.taints or []) != (old_spec.get("taints") or []):
        return f'node "{node}" is not allowed to modify taints'
    old_labels = (old.get("metadata") or {}).get("labels") or {}
    if forbidden := forbidden_labels(obj.metadata.labels or {}, old_labels):
        return f"is not allowed to modify labels: {', '.join(forbidden)}"
    return None


def _pod_status_update(node: str, obj: Pod, old: Obj) -> str | None:
    if (obj.metadata.labels or {}) != ((old.get("metadata") or {}).get("labels") or {}):
        return f'node "{node}" cannot update labels through pod status'
    new_claims = [(s.name, s.resource_claim_name)
                  for s in obj.status.resource_claim_statuses or ()]
    old_claims = [(s.get("name", ""), s.get("resourceClaimName"))
                  for s in (old.get("status") or {}).get("resourceClaimStatuses") or ()]
    if new_claims != old_claims:
        return f'node "{node}" cannot update resource claim statues'  # sic, upstream's text
    return None


def _slice(user: User, operation: str, obj: Obj, release: Release) -> str | None:
    return nodeauthz.SLICE_RULES[release].admit(user.name, user.groups, operation,
                                                RELEASES[release].slice_node(obj))


async def admit_existing(a: Attributes, rest: Rest, stored: Mapping[tuple[str, str], Resource],
                         release: Release) -> None:
    """A node's update, patch or delete of a Node, a pod or (as the release says) a
    ResourceSlice, judged on the stored object; ``stored`` has the resources to read it from,
    by (group, plural)."""
    group_resource = (a.api_group, a.resource)
    if group_resource == SLICES:
        await _admit_stored_slice(a, rest, stored, release)
        return
    if a.verb not in _WRITES or group_resource not in (("", "nodes"), ("", "pods")):
        return
    node = _node_of(a.user)
    if node is None:
        return
    why = None
    if a.resource == "nodes" and a.name != node:
        why = f'node "{node}" is not allowed to modify node "{a.name}"'
    elif a.resource == "pods" and (a.verb == "delete" or a.subresource == "status"):
        try:
            pod, _ = await rest.get(stored[("", "pods")], a.namespace, a.name)
        except errors.ApiError:
            return  # the handler answers the 404
        if str((pod.get("spec") or {}).get("nodeName") or "") != node:
            why = (f'node "{node}" can only delete pods with spec.nodeName set to itself'
                   if a.verb == "delete" else
                   f'node "{node}" can only update pod status for pods with spec.nodeName '
                   "set to itself")
    if why is not None:
        raise errors.forbidden_object(a.resource, a.api_group, a.name, why)


async def _admit_stored_slice(a: Attributes, rest: Rest,
                              stored: Mapping[tuple[str, str], Resource],
                              release: Release) -> None:
    """The release's admission of a node's delete of a ResourceSlice, on the stored one (a
    deletecollection needs none: the authorizer admits it only for the node's own slices)."""
    res = stored.get(SLICES)
    if a.verb != "delete" or res is None or (
        "DELETE" not in nodeauthz.SLICE_RULES[release].admits_stored
    ) or _node_of(a.user) is None:
        return
    try:
        obj, _ = await rest.get(res, "", a.name)
    except errors.ApiError:
        return  # the handler answers the 404
    why = _slice(a.user, "DELETE", obj, release)
    if why is not None:
        raise errors.forbidden_object(a.resource, a.api_group, a.name, why)
