"""Who a request is (:class:`User`, set on the request by :mod:`.authn`) and the Node
authorizer for ResourceSlices.

A kubelet authenticated as ``system:node:<N>`` in group ``system:nodes`` is held to the v1.30
Node authorizer rules for ResourceSlices and to the NodeRestriction check on create
(``kubedra.validation.nodeauthz``); every other request is allowed (there is no RBAC). The
authorizer's slice graph follows the watch hub, so it is eventually consistent, as upstream's
informer-fed graph is.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field

from aiohttp import web

from kubedra.api.base import Obj
from kubedra.api.meta import TypedObject
from kubedra.api.resource import ResourceSlice
from kubedra.apiserver import errors, objects
from kubedra.apiserver.hub import Overflow, WatchHub
from kubedra.apiserver.registry import Resource
from kubedra.storage.contract import Store
from kubedra.validation import nodeauthz

AUTHENTICATED = "system:authenticated"
MASTERS = "system:masters"


@dataclass(frozen=True, slots=True)
class User:
    """``user.Info``: name, groups, uid and extra (scopes, the pod of a token, ...)."""

    name: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    extra: dict[str, tuple[str, ...]] = field(default_factory=dict, hash=False)


#: The authenticated user of a request (set before routing).
USER = web.RequestKey("user", User)

ADMIN = User("admin", (MASTERS, AUTHENTICATED))
#: Who every request is on a server built without authentication (embedded in tests).
ANONYMOUS_ADMIN = User("system:admin", (MASTERS,))
#: Who a request without credentials is under ``--anonymous-auth``.
ANONYMOUS = User("system:anonymous", ("system:unauthenticated",))


class NodeAuthorizer:
    """The ResourceSlice part of upstream's Node authorizer plus NodeRestriction."""

    def __init__(self, hub: WatchHub, store: Store, slices: Resource) -> None:
        self.hub = hub
        self.store = store
        self.slices = slices
        self.graph = nodeauthz.SliceGraph()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        after = await self._load()
        self._task = asyncio.create_task(self._follow(after), name="node-authorizer")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task

    async def _load(self) -> int:
        self.graph = nodeauthz.SliceGraph()
        lr = await self.store.list(self.slices.prefix)
        for kv in lr.items:
            self._observe(kv.key, "ADDED", objects.decode(kv.value))
        return lr.revision

    def _observe(self, key: str, typ: str, obj: Obj | None) -> None:
        name = key[len(self.slices.prefix):]
        if typ == "DELETED":
            self.graph.forget(name)
        elif obj is not None:
            self.graph.observe(name, str(obj.get("nodeName") or ""))

    async def _follow(self, after: int) -> None:
        sub = self.hub.subscribe(self.slices.prefix, after)
        while True:
            try:
                ch = await sub.next()
            except Overflow:
                ch = None
            if ch is None:
                sub.close()
                if self.hub.stopped:
                    return
                sub = self.hub.subscribe(self.slices.prefix, await self._load())
                continue
            self._observe(ch.key, ch.type, ch.obj)

    def authorize(self, user: User, verb: str, res: Resource, namespace: str, name: str,
                  subresource: str) -> None:
        """403 when the Node authorizer refuses a node's ResourceSlice request."""
        _, is_node = nodeauthz.node_identity(user.name, user.groups)
        if not is_node:
            return  # NoOpinion for non-nodes: no other authorizer denies (no RBAC)
        attrs = nodeauthz.RequestAttributes(
            verb=verb, api_group=res.kind.group, resource=res.kind.plural,
            subresource=subresource, name=name, namespace=namespace,
        )
        verdict = nodeauthz.authorize_node_request(user.name, user.groups, attrs, self.graph)
        if verdict is None or verdict.decision is nodeauthz.Decision.ALLOW:
            return
        raise errors.ApiError(errors.status_body(
            403, "Forbidden",
            _forbidden_message(user, verb, res, namespace, name, subresource, verdict.reason),
            _details(res, name),
        ))

    @staticmethod
    def admit_create(user: User, res: Resource, obj: TypedObject) -> None:
        """NodeRestriction: a node may only create slices of its own node."""
        if not isinstance(obj, ResourceSlice):
            return
        why = nodeauthz.admit_resource_slice(user.name, user.groups, "CREATE", obj.node_name)
        if why is not None:
            raise errors.forbidden_object(res.kind.plural, res.kind.group,
                                          obj.metadata.name or "", why)


def _details(res: Resource, name: str) -> dict[str, str]:
    out = {"name": name} if name else {}
    out["group"] = res.kind.group
    out["kind"] = res.kind.plural
    return out


def _forbidden_message(user: User, verb: str, res: Resource, namespace: str, name: str,
                       subresource: str, reason: str) -> str:
    """``responsewriters.forbiddenMessage`` as kube-apiserver words it."""
    resource = res.kind.plural + (f"/{subresource}" if subresource else "")
    what = f"{res.kind.qualified} \"{name}\"" if name else res.kind.qualified
    scope = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
    msg = (f'{what} is forbidden: User "{user.name}" cannot {verb} resource "{resource}" '
           f'in API group "{res.kind.group}" {scope}')
    return f"{msg}: {reason}" if reason else msg
