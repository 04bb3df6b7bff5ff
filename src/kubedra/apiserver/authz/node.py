"""The Node authorizer (upstream ``plugin/pkg/auth/authorizer/node`` at v1.30 and v1.34): a
kubelet (``system:node:<N>`` in ``system:nodes``) may reach the objects its graph connects to
node N (its ResourceSlices, the ResourceClaims of pods bound to it), its own Lease, and what
the static node rules grant; everything else is NoOpinion.

The graph follows the watch hub (slices and pods), so it is eventually consistent, as
upstream's informer-fed graph is. What differs by release is read from :data:`RELEASES`:
where a stored slice names its node, how a pod names its claims, the static rules; the
ResourceSlice decisions are ``validation.nodeauthz.SLICE_RULES``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from kubedra.api.base import Obj
from kubedra.api.release import R1_30, R1_34, Release
from kubedra.apiserver.auth import User
from kubedra.apiserver.authz.attributes import ALLOW, NO_OPINION, Attributes, Verdict
from kubedra.apiserver.authz.follow import Follower
from kubedra.apiserver.authz.rules import Permissions, Rule
from kubedra.apiserver.hub import WatchHub
from kubedra.storage.contract import Store
from kubedra.validation import nodeauthz

PODS = "/registry/core/pods/"
NODE_LEASE_NAMESPACE = "kube-node-lease"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
_READ = ("get", "list", "watch")

#: ``NodeRules()`` of the bootstrap policy, for the resources kubedra serves.
NODE_RULES: tuple[Rule, ...] = (
    Rule(("create",), ("authorization.k8s.io",), ("subjectaccessreviews",)),
    Rule(_READ, ("",), ("services",)),
    Rule(("create", "get", "list", "watch"), ("",), ("nodes",)),
    Rule(("update", "patch"), ("",), ("nodes/status",)),
    Rule(("update", "patch"), ("",), ("nodes",)),
    Rule(("create", "update", "patch"), ("", "events.k8s.io"), ("events",)),
    Rule(_READ, ("",), ("pods",)),
    Rule(("create", "delete"), ("",), ("pods",)),
    Rule(("update", "patch"), ("",), ("pods/status",)),
    Rule(("create",), ("",), ("pods/eviction",)),
    Rule(("get", "create", "update", "patch", "delete"), ("coordination.k8s.io",),
         ("leases",)),
    Rule(("get",), ("resource.k8s.io",), ("resourceclaims",)),
)
#: 1.34 adds what the kubelet needs to wipe its slices (``DeleteCollection`` by node name).
NODE_RULES_1_34: tuple[Rule, ...] = (
    *NODE_RULES, Rule(("deletecollection",), ("resource.k8s.io",), ("resourceslices",)),
)


def pod_claim_names(pod: Obj) -> list[str]:
    """``resourceclaim.Name`` (1.30: ``source``) for each of the pod's claims that has one
    yet."""
    generated = {str(s.get("name")): s.get("resourceClaimName")
                 for s in (pod.get("status") or {}).get("resourceClaimStatuses") or ()
                 if isinstance(s, dict)}
    out = []
    for pc in (pod.get("spec") or {}).get("resourceClaims") or ():
        if not isinstance(pc, dict):
            continue
        source = pc.get("source") or {}
        name = source.get("resourceClaimName") or generated.get(str(pc.get("name")))
        if name:
            out.append(str(name))
    return out


def pod_claim_names_1_34(pod: Obj) -> list[str]:
    """``resourceclaim.Name`` of 1.34 (the fields moved out of ``source``) for each of the
    pod's claims that has one yet: a direct name, or the one recorded in
    ``status.resourceClaimStatuses`` for a template's claim."""
    generated = {str(s.get("name")): s.get("resourceClaimName")
                 for s in (pod.get("status") or {}).get("resourceClaimStatuses") or ()
                 if isinstance(s, dict)}
    out = []
    for pc in (pod.get("spec") or {}).get("resourceClaims") or ():
        if not isinstance(pc, dict):
            continue
        name = pc.get("resourceClaimName")
        if not name and pc.get("resourceClaimTemplateName"):
            name = generated.get(str(pc.get("name")))
        if name:
            out.append(str(name))
    return out


@dataclass(frozen=True, slots=True)
class NodeRelease:
    """What the node rules read differently in one release."""

    #: The node a stored ResourceSlice names ("" for none: all nodes, a node selector).
    slice_node: Callable[[Obj], str]
    pod_claims: Callable[[Obj], list[str]]
    #: ``NodeRules()``: the static rules and the ``system:node`` ClusterRole.
    rules: tuple[Rule, ...]

    @property
    def static(self) -> Permissions:
        return Permissions(self.rules)


def _slice_node_1_30(obj: Obj) -> str:
    return str(obj.get("nodeName") or "")


def slice_node_1_34(obj: Obj) -> str:
    """``spec.nodeName`` of any served version of a ResourceSlice (v1beta1's ``""`` = unset)."""
    return str((obj.get("spec") or {}).get("nodeName") or "")


RELEASES: Mapping[Release, NodeRelease] = MappingProxyType({
    R1_30: NodeRelease(_slice_node_1_30, pod_claim_names, NODE_RULES),
    R1_34: NodeRelease(slice_node_1_34, pod_claim_names_1_34, NODE_RULES_1_34),
})


class NodeGraph:
    """slice → node, pod → node and claim → pod edges. ``slices`` is the store prefix of the
    ResourceSlices the release serves (None: it serves none)."""

    def __init__(self, hub: WatchHub, store: Store, release: Release,
                 slices: str | None) -> None:
        self.emulated = release
        self.release = RELEASES[release]
        self.slices_prefix = slices
        self.slices = nodeauthz.SliceGraph()
        self._pod_node: dict[tuple[str, str], str] = {}
        self._pod_claims: dict[tuple[str, str], list[str]] = {}
        self._claim_pods: dict[tuple[str, str], set[str]] = {}
        prefixes = (PODS,) if slices is None else (slices, PODS)
        self.follower = Follower(hub, store, prefixes, self._observe, self._reset,
                                 name="node-authorizer")

    def _reset(self) -> None:
        self.slices = nodeauthz.SliceGraph()
        self._pod_node.clear()
        self._pod_claims.clear()
        self._claim_pods.clear()

    def _observe(self, prefix: str, key: str, obj: Obj | None) -> None:
        name = key[len(prefix):]
        if prefix == self.slices_prefix:
            if obj is None:
                self.slices.forget(name)
            else:
                self.slices.observe(name, self.release.slice_node(obj))
            return
        ns, _, pod = name.partition("/")
        self._forget_pod(ns, pod)
        if obj is None:
            return
        node = str((obj.get("spec") or {}).get("nodeName") or "")
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        if not node or MIRROR_ANNOTATION in annotations:
            return
        self._pod_node[(ns, pod)] = node
        claims = self.release.pod_claims(obj)
        self._pod_claims[(ns, pod)] = claims
        for claim in claims:
            self._claim_pods.setdefault((ns, claim), set()).add(pod)

    def _forget_pod(self, ns: str, pod: str) -> None:
        self._pod_node.pop((ns, pod), None)
        for claim in self._pod_claims.pop((ns, pod), ()):
            pods = self._claim_pods.get((ns, claim))
            if pods is not None:
                pods.discard(pod)
                if not pods:
                    del self._claim_pods[(ns, claim)]

    def claim_on_node(self, namespace: str, claim: str, node: str) -> bool:
        return any(self._pod_node.get((namespace, p)) == node
                   for p in self._claim_pods.get((namespace, claim), ()))


class NodeAuthorizer:
    def __init__(self, graph: NodeGraph) -> None:
        self.graph = graph
        self._static = graph.release.static

    def authorize(self, a: Attributes) -> Verdict:
        node, is_node = nodeauthz.node_identity(a.user.name, a.user.groups)
        if not is_node:
            return NO_OPINION
        slices = nodeauthz.authorize_node_request(a.user.name, a.user.groups,
                                                  a.node_request(), self.graph.slices,
                                                  self.graph.emulated)
        if slices is not None:  # not a node, a nameless node, or a ResourceSlice request
            return slices
        if not a.resource_request:
            return NO_OPINION
        if (a.api_group, a.resource) == ("resource.k8s.io", "resourceclaims"):
            return self._claim(a, node)
        if (a.api_group, a.resource) == ("coordination.k8s.io", "leases"):
            return _lease(a, node)
        if self._static.allows(a.verb, a.api_group, a.combined_resource, a.name):
            return ALLOW
        return NO_OPINION

    def _claim(self, a: Attributes, node: str) -> Verdict:
        """``authorizeGet``: one claim by name, reachable from the node in the graph."""
        if a.verb != "get":
            return Verdict(nodeauthz.Decision.NO_OPINION,
                           "can only get individual resources of this type")
        if a.subresource:
            return Verdict(nodeauthz.Decision.NO_OPINION, "cannot get subresource")
        if self.graph.claim_on_node(a.namespace, a.name, node):
            return ALLOW
        return Verdict(nodeauthz.Decision.NO_OPINION,
                       f"no relationship found between node '{node}' and this object")

    def rules_for(self, user: User, namespace: str) -> list[Rule]:
        """The static rules (the graph-checked ones show as what they at most allow)."""
        _, is_node = nodeauthz.node_identity(user.name, user.groups)
        return list(self.graph.release.rules) if is_node else []


def _lease(a: Attributes, node: str) -> Verdict:
    """``authorizeLease``: the node's own Lease in kube-node-lease."""
    if a.verb not in ("get", "create", "update", "patch", "delete"):
        return Verdict(nodeauthz.Decision.NO_OPINION,
                       "can only get, create, update, patch, or delete a node lease")
    if a.namespace != NODE_LEASE_NAMESPACE:
        return Verdict(nodeauthz.Decision.NO_OPINION,
                       f'can only access leases in the "{NODE_LEASE_NAMESPACE}" system '
                       "namespace")
    if a.verb != "create" and a.name != node:
        return Verdict(nodeauthz.Decision.NO_OPINION,
                       "can only access node lease with the same name as the requesting node")
    return ALLOW
