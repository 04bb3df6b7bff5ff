"""What a kubelet may do with ResourceSlices (k8s v1.30): the Node authorizer's decision and the
NodeRestriction admission check, as pure functions.

The authorizer knows a slice only through its graph: an edge ``slice(name) -> node(N)`` exists
when a slice of that name with ``nodeName == N`` has been observed (:class:`SliceGraph`, fed by
the server from its store or an informer, hence eventually consistent). Admission sees the body
of a create and checks its ``nodeName``; updates and deletes are left to the authorizer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

NODE_USER_PREFIX = "system:node:"
NODES_GROUP = "system:nodes"
RESOURCE_GROUP = "resource.k8s.io"
RESOURCE_SLICES = "resourceslices"


class Decision(StrEnum):
    ALLOW = "Allow"
    DENY = "Deny"
    NO_OPINION = "NoOpinion"


@dataclass(frozen=True, slots=True)
class Verdict:
    """An authorizer answer: the decision and the reason text (empty when allowed)."""

    decision: Decision
    reason: str = ""


@dataclass(frozen=True, slots=True)
class RequestAttributes:
    """The parts of ``authorizer.Attributes`` these rules read."""

    verb: str
    api_group: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    namespace: str = ""
    resource_request: bool = True


def node_identity(user_name: str, groups: Sequence[str]) -> tuple[str, bool]:
    """``(node name, is a node)``: ``system:node:<N>`` in the ``system:nodes`` group.

    A node with an empty name is still a node (``("", True)``); both layers reject it."""
    if not user_name.startswith(NODE_USER_PREFIX) or NODES_GROUP not in groups:
        return "", False
    return user_name[len(NODE_USER_PREFIX):], True


class SliceGraph:
    """The authorizer graph's slice edges: slice name -> node name (only non-empty ones)."""

    def __init__(self) -> None:
        self._node_of: dict[str, str] = {}

    def observe(self, name: str, node_name: str) -> None:
        """A slice was added (``nodeName`` is immutable, so updates change nothing)."""
        if node_name:
            self._node_of[name] = node_name
        else:
            self._node_of.pop(name, None)

    def forget(self, name: str) -> None:
        """A slice was deleted."""
        self._node_of.pop(name, None)

    def has_edge(self, name: str, node_name: str) -> bool:
        return self._node_of.get(name) == node_name


_NAMED_VERBS = ("get", "create", "update", "patch", "delete")


def authorize_resource_slice(node_name: str, attrs: RequestAttributes,
                             graph: SliceGraph) -> Verdict:
    """``authorizeResourceSlice`` for a request from node ``node_name`` (non-empty)."""
    if attrs.subresource:
        return Verdict(Decision.NO_OPINION, "cannot authorize ResourceSlice subresources")
    if attrs.verb in ("list", "watch"):
        # Upstream trusts the kubelet to filter by its own nodeName.
        return Verdict(Decision.ALLOW)
    if attrs.verb not in _NAMED_VERBS:
        return Verdict(Decision.NO_OPINION,
                       "can only get, create, update, patch, or delete a ResourceSlice")
    if attrs.verb == "create":
        # The body is checked by NodeRestriction admission.
        return Verdict(Decision.ALLOW)
    if not attrs.name:
        return Verdict(Decision.NO_OPINION, "No Object name found")
    if graph.has_edge(attrs.name, node_name):
        return Verdict(Decision.ALLOW)
    return Verdict(Decision.NO_OPINION,
                   f"no relationship found between node '{node_name}' and this object")


def authorize_node_request(user_name: str, groups: Sequence[str], attrs: RequestAttributes,
                           graph: SliceGraph) -> Verdict | None:
    """The Node authorizer's answer when it decides alone, else ``None``.

    ``None`` means "not a ResourceSlice request of a node": the caller goes on with its other
    node rules. Non-nodes and nameless nodes get NoOpinion as upstream."""
    node_name, is_node = node_identity(user_name, groups)
    if not is_node:
        return Verdict(Decision.NO_OPINION)
    if not node_name:
        return Verdict(Decision.NO_OPINION, f'unknown node for user "{user_name}"')
    if attrs.resource_request and (attrs.api_group, attrs.resource) == (
        RESOURCE_GROUP, RESOURCE_SLICES
    ):
        return authorize_resource_slice(node_name, attrs, graph)
    return None


def admit_resource_slice(user_name: str, groups: Sequence[str], operation: str,
                         slice_node_name: str) -> str | None:
    """NodeRestriction admission for a ResourceSlice request: the Forbidden message, or
    ``None`` when admitted. ``operation`` is CREATE, UPDATE, DELETE or CONNECT."""
    node_name, is_node = node_identity(user_name, groups)
    if not is_node:
        return None
    if not node_name:
        return f'could not determine node from user "{user_name}"'
    if operation == "CREATE" and slice_node_name != node_name:
        return "can only create ResourceSlice with the same NodeName as the requesting node"
    return None
