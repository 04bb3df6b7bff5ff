"""What a kubelet may do with ResourceSlices: the Node authorizer's decision and the
NodeRestriction admission check, as pure functions, one pair per release (:data:`SLICE_RULES`).

The authorizer knows a slice only through its graph: an edge ``slice(name) -> node(N)`` exists
when a slice of that name naming node N has been observed (:class:`SliceGraph`, fed by the
server from its store or an informer, hence eventually consistent); slices for ``allNodes`` or
a ``nodeSelector`` name no node and so have no edge. Admission sees the body of a create and
checks its node name. In 1.30 updates and deletes are left to the authorizer and lists and
watches are open; in 1.34 (``AuthorizeNodeWithSelectors`` GA) admission also checks the stored
object of a delete, and a list, watch or deletecollection must select ``spec.nodeName=<node>``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

from kubedra.api.release import R1_30, R1_34, Release

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
    #: The request's field selector as its equality terms ``(field, value)`` (``=`` and
    #: ``==``; upstream ``selection.Equals``); empty when it has none or fails to parse.
    field_equals: tuple[tuple[str, str], ...] = ()


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
    return _edge(node_name, attrs, graph)


_SELECTED_VERBS = ("watch", "list", "deletecollection")
_SLICE_NODE_FIELD = "spec.nodeName"


def authorize_resource_slice_1_34(node_name: str, attrs: RequestAttributes,
                                  graph: SliceGraph) -> Verdict:
    """``authorizeResourceSlice`` of 1.34 for a request from node ``node_name``: collections
    only through a ``spec.nodeName=<node>`` field selector."""
    if attrs.subresource:
        return Verdict(Decision.NO_OPINION, "cannot authorize ResourceSlice subresources")
    if attrs.verb == "create":
        # The body is checked by NodeRestriction admission.
        return Verdict(Decision.ALLOW)
    if attrs.verb in ("get", "update", "patch", "delete"):
        return _edge(node_name, attrs, graph)
    if attrs.verb in _SELECTED_VERBS:
        if (_SLICE_NODE_FIELD, node_name) in attrs.field_equals:
            return Verdict(Decision.ALLOW)
        return Verdict(Decision.NO_OPINION, "can only list/watch/deletecollection "
                       "resourceslices with nodeName field selector")
    return Verdict(Decision.NO_OPINION, "only the following verbs are allowed for a "
                   "ResourceSlice: get, watch, list, create, update, patch, delete, "
                   "deletecollection")


def _edge(node_name: str, attrs: RequestAttributes, graph: SliceGraph) -> Verdict:
    """Upstream ``authorize``: a named slice with a graph edge to the node."""
    if not attrs.name:
        return Verdict(Decision.NO_OPINION, "No Object name found")
    if graph.has_edge(attrs.name, node_name):
        return Verdict(Decision.ALLOW)
    return Verdict(Decision.NO_OPINION,
                   f"no relationship found between node '{node_name}' and this object")


def authorize_node_request(user_name: str, groups: Sequence[str], attrs: RequestAttributes,
                           graph: SliceGraph, release: Release) -> Verdict | None:
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
        return SLICE_RULES[release].authorize(node_name, attrs, graph)
    return None


def admit_resource_slice(user_name: str, groups: Sequence[str], operation: str,
                         slice_node_name: str | None) -> str | None:
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


def admit_resource_slice_1_34(user_name: str, groups: Sequence[str], operation: str,
                              slice_node_name: str | None) -> str | None:
    """NodeRestriction of 1.34 for a ResourceSlice: a create names the node itself
    (``spec.nodeName``, None when unset), a delete removes one that does (the stored object;
    the authorizer's graph may lag behind a delete and re-create under the same name)."""
    node_name, is_node = node_identity(user_name, groups)
    if not is_node:
        return None
    if not node_name:
        return f'could not determine node from user "{user_name}"'
    if operation in ("CREATE", "DELETE") and slice_node_name != node_name:
        verb = "create" if operation == "CREATE" else "delete"
        return f"can only {verb} ResourceSlice with the same NodeName as the requesting node"
    return None


@dataclass(frozen=True, slots=True)
class SliceRules:
    """One release's ResourceSlice rules for nodes: the authorizer's and admission's."""

    authorize: Callable[[str, RequestAttributes, SliceGraph], Verdict]
    admit: Callable[[str, Sequence[str], str, str | None], str | None]
    #: The operations admission judges on the stored object (besides a create's body).
    admits_stored: tuple[str, ...] = ()


SLICE_RULES: Mapping[Release, SliceRules] = MappingProxyType({
    R1_30: SliceRules(authorize_resource_slice, admit_resource_slice),
    R1_34: SliceRules(authorize_resource_slice_1_34, admit_resource_slice_1_34, ("DELETE",)),
})
