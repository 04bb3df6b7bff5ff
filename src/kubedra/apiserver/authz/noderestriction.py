"""NodeRestriction admission (upstream ``plugin/pkg/admission/noderestriction`` at v1.30):
what the Node authorizer cannot see from the URL alone. A node may create only its own Node,
its own Lease, ResourceSlices of its own ``nodeName`` and mirror pods bound to itself, modify
only its own Node, and delete or update the status of only the pods bound to it."""

from __future__ import annotations

from kubedra.api.coordination import Lease
from kubedra.api.core import Node, Pod
from kubedra.api.meta import TypedObject
from kubedra.api.resource import ResourceSlice
from kubedra.apiserver import errors
from kubedra.apiserver.auth import User
from kubedra.apiserver.authz.attributes import Attributes
from kubedra.apiserver.authz.node import MIRROR_ANNOTATION, NODE_LEASE_NAMESPACE
from kubedra.apiserver.registry import Resource
from kubedra.apiserver.rest import Rest
from kubedra.validation import nodeauthz

_WRITES = ("update", "patch", "delete")


def _node_of(user: User) -> str | None:
    """The requesting node's name; None for non-nodes; 403 for a nameless node."""
    node, is_node = nodeauthz.node_identity(user.name, user.groups)
    if not is_node:
        return None
    if not node:
        raise errors.ApiError(errors.status_body(
            403, "Forbidden", f'could not determine node from user "{user.name}"'))
    return node


def admit_create(user: User, res: Resource, obj: TypedObject) -> None:
    """The body of a node's create."""
    node = _node_of(user)
    if node is None:
        return
    name = obj.metadata.name or ""
    why = None
    if isinstance(obj, ResourceSlice):
        why = nodeauthz.admit_resource_slice(user.name, user.groups, "CREATE", obj.node_name)
    elif isinstance(obj, Node) and name != node:
        why = f'node "{node}" is not allowed to modify node "{name}"'
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
    if why is not None:
        raise errors.forbidden_object(res.kind.plural, res.kind.group, name, why)


async def admit_existing(a: Attributes, rest: Rest, res: Resource) -> None:
    """A node's update, patch or delete of a Node or a pod, judged on the stored object."""
    if a.verb not in _WRITES or (a.api_group, a.resource) not in (("", "nodes"), ("", "pods")):
        return
    node = _node_of(a.user)
    if node is None:
        return
    why = None
    if a.resource == "nodes" and a.name != node:
        why = f'node "{node}" is not allowed to modify node "{a.name}"'
    elif a.resource == "pods" and (a.verb == "delete" or a.subresource == "status"):
        try:
            pod, _ = await rest.get(res, a.namespace, a.name)
        except errors.ApiError:
            return  # the handler answers the 404
        if str((pod.get("spec") or {}).get("nodeName") or "") != node:
            why = (f'node "{node}" can only delete pods with spec.nodeName set to itself'
                   if a.verb == "delete" else
                   f'node "{node}" can only update pod status for pods with spec.nodeName '
                   "set to itself")
    if why is not None:
        raise errors.forbidden_object(a.resource, a.api_group, a.name, why)
