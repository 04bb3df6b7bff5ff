"""The one object the request path asks "may they?": the authorizer chain of
``--authorization-mode``, NodeRestriction, escalation prevention and the access reviews, with
the views they read (node graph, RBAC index) and the policy they keep (bootstrap roles,
ClusterRole aggregation)."""

from __future__ import annotations

from kubedra.api.base import Obj
from kubedra.api.meta import TypedObject
from kubedra.apiserver.auth import User
from kubedra.apiserver.authz import bootstrap, noderestriction, reviews
from kubedra.apiserver.authz.aggregation import Aggregator
from kubedra.apiserver.authz.attributes import Attributes, Decision, forbidden
from kubedra.apiserver.authz.chain import DEFAULT_MODES, AlwaysAllow, AlwaysDeny, Authorizer, Chain
from kubedra.apiserver.authz.escalation import Escalation
from kubedra.apiserver.authz.node import NodeAuthorizer, NodeGraph
from kubedra.apiserver.authz.rbac import RbacAuthorizer, RbacIndex
from kubedra.apiserver.hub import WatchHub
from kubedra.apiserver.registry import Registry, Resource
from kubedra.apiserver.rest import Rest
from kubedra.storage.contract import Store

_RBAC = "rbac.authorization.k8s.io"


class Access:
    def __init__(self, hub: WatchHub, store: Store, registry: Registry, rest: Rest,
                 modes: tuple[str, ...] = DEFAULT_MODES) -> None:
        self.modes = modes
        self.registry = registry
        self.rest = rest
        self.store = store
        self.release = registry.gates.release
        slices = _served(registry, noderestriction.SLICES)
        self.graph = NodeGraph(hub, store, self.release,
                               slices.kind.resource.prefix if slices else None)
        self.index = RbacIndex(hub, store)
        chain: list[Authorizer] = []
        for mode in modes:
            if mode == "Node":
                chain.append(NodeAuthorizer(self.graph))
            elif mode == "RBAC":
                chain.append(RbacAuthorizer(self.index))
            elif mode == "AlwaysAllow":
                chain.append(AlwaysAllow())
            else:
                chain.append(AlwaysDeny())
        self.chain = Chain(chain)
        self.escalation = Escalation(self.chain, self.index)
        roles = registry.get(_RBAC, "v1", "clusterroles")
        pods = registry.get("", "v1", "pods")
        assert roles is not None and pods is not None
        #: Where NodeRestriction reads stored objects, by (group, plural).
        self.stored = {("", "pods"): pods, **({noderestriction.SLICES: slices} if slices else {})}
        self.aggregator = Aggregator(self.index, rest, roles)
        self.index.listeners.append(self.aggregator.dirty.set)

    @property
    def rbac(self) -> bool:
        return "RBAC" in self.modes

    async def start(self) -> None:
        """Views complete before the first request; then the bootstrap policy."""
        if "Node" in self.modes:
            await self.graph.follower.start()
        if self.rbac:
            await self.index.follower.start()
            await bootstrap.ensure(self.registry, self.rest, self.release,
                                   self.graph.release.rules)
            await self.aggregator.start(self.store)

    async def stop(self) -> None:
        await self.aggregator.stop()
        await self.index.follower.stop()
        await self.graph.follower.stop()

    # --- the request path ----------------------------------------------------------------

    def authorize(self, a: Attributes) -> None:
        """403 unless the chain allows."""
        verdict = self.chain.decide(a)
        if verdict.decision is not Decision.ALLOW:
            raise forbidden(a, verdict.reason)

    async def check(self, a: Attributes) -> None:
        """Authorization, then NodeRestriction on the stored object a node writes."""
        self.authorize(a)
        await noderestriction.admit_existing(a, self.rest, self.stored, self.release)

    def admit_write(self, user: User, res: Resource, namespace: str, obj: TypedObject,
                    old: Obj | None = None, subresource: str = "") -> None:
        """Admission of a decoded create body, or of an update's new object over the stored
        ``old``."""
        if old is None:
            noderestriction.admit_create(user, res, obj, self.release)
        else:
            noderestriction.admit_update(user, res, subresource, obj, old)
        if self.rbac and res.kind.group == _RBAC:
            self.escalation.admit(user, res, namespace, obj)

    @staticmethod
    def answers(obj: TypedObject) -> bool:
        """Access reviews are answered, not stored."""
        return isinstance(obj, reviews.REVIEWS)

    def review(self, user: User, obj: TypedObject) -> Obj:
        return reviews.answer(self.chain, user, obj)


def _served(registry: Registry, group_resource: tuple[str, str]) -> Resource | None:
    """A served version of the resource (any: they share the store), None if unserved."""
    return next((r for r in registry
                 if (r.kind.group, r.kind.plural) == group_resource), None)
