"""ClusterRole aggregation (upstream's ``clusterrole-aggregation`` controller, run here in
the API server): a ClusterRole with an ``aggregationRule`` gets as ``rules`` the rules of
every other ClusterRole its selectors match, in name order, each rule once."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from kubedra.api import codec
from kubedra.api.base import Obj
from kubedra.api.meta import LabelSelector
from kubedra.apiserver import errors, objects
from kubedra.apiserver.authz.rbac import RbacIndex
from kubedra.apiserver.registry import Resource
from kubedra.apiserver.rest import Rest
from kubedra.storage.contract import Store
from kubedra.tasks import cancel_and_wait
from kubedra.validation.labelselector import selector_matches

log = logging.getLogger(__name__)


def aggregated_rules(role: Obj, roles: dict[str, Obj]) -> list[Obj]:
    name = role["metadata"]["name"]
    rules: list[Obj] = []
    for raw in (role.get("aggregationRule") or {}).get("clusterRoleSelectors") or ():
        selector = codec.decode(raw, LabelSelector)
        for other in sorted(roles):
            labels = roles[other].get("metadata", {}).get("labels")
            if other == name or not selector_matches(selector, labels):
                continue
            rules += [r for r in roles[other].get("rules") or () if r not in rules]
    return rules


class Aggregator:
    """Wakes on every ClusterRole change the index sees and writes what differs."""

    def __init__(self, index: RbacIndex, rest: Rest, res: Resource) -> None:
        self.index = index
        self.rest = rest
        self.res = res
        self.dirty = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def start(self, store: Store) -> None:
        """Aggregate what is stored now, then follow the index."""
        lr = await store.list(self.res.prefix)
        await self.sync({kv.key[len(self.res.prefix):]: objects.decode(kv.value)
                         for kv in lr.items})
        self.dirty.clear()
        self._task = asyncio.create_task(self._run(), name="clusterrole-aggregation")

    async def stop(self) -> None:
        if self._task is not None:
            await cancel_and_wait(self._task)

    async def _run(self) -> None:
        while True:
            await self.dirty.wait()
            self.dirty.clear()
            try:
                await self.sync()
            except Exception:  # a store hiccup: try again on the next change or in a while
                log.exception("clusterrole aggregation failed")
                await asyncio.sleep(1.0)
                self.dirty.set()

    async def sync(self, roles: dict[str, Obj] | None = None) -> None:
        roles = dict(self.index.cluster_role_objects) if roles is None else roles
        for name, role in roles.items():
            if not role.get("aggregationRule"):
                continue
            rules = aggregated_rules(role, roles)
            if (role.get("rules") or []) == rules:
                continue

            async def mutate(stored: Obj, rules: list[Obj] = rules) -> Obj:
                stored["rules"] = rules
                return stored

            with contextlib.suppress(errors.ApiError):  # gone meanwhile: nothing to fill
                await self.rest.update(self.res, "", name, mutate)
