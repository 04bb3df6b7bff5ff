"""The bootstrap policy kept at start (upstream's ``rbac/bootstrap-roles`` post-start hook):
missing roles and bindings are created; stored ones annotated
``rbac.authorization.kubernetes.io/autoupdate: "true"`` get what they lack added (rules,
subjects, labels, annotations), never removed, so a restart changes nothing."""

from __future__ import annotations

import logging
from typing import Any

from kubedra.api import codec
from kubedra.api.base import Obj
from kubedra.api.release import Release
from kubedra.apiserver import errors, objects
from kubedra.apiserver.authz import policy
from kubedra.apiserver.registry import Registry, Resource
from kubedra.apiserver.rest import Rest

log = logging.getLogger(__name__)


def _union(have: list[Any], want: list[Any]) -> list[Any]:
    return have + [w for w in want if w not in have]


def reconciled(stored: Obj, desired: Obj) -> Obj:
    """``stored`` with what ``desired`` adds (a copy)."""
    out = objects.clone(stored)
    meta, want = objects.meta(out), desired["metadata"]
    for field in ("labels", "annotations"):
        meta[field] = {**want.get(field, {}), **(meta.get(field) or {})}
    if "roleRef" in desired:
        subjects = _union(out.get("subjects") or [], desired.get("subjects") or [])
        if subjects:
            out["subjects"] = subjects
    elif "aggregationRule" in desired:
        out["aggregationRule"] = desired["aggregationRule"]  # rules belong to the controller
    else:
        out["rules"] = _union(out.get("rules") or [], desired["rules"])
    return out


async def ensure(registry: Registry, rest: Rest, release: Release,
                 node_rules: tuple[Any, ...]) -> None:
    roles = registry.get(policy.RBAC, "v1", "clusterroles")
    bindings = registry.get(policy.RBAC, "v1", "clusterrolebindings")
    assert roles is not None and bindings is not None
    for obj in policy.cluster_roles(release, node_rules):
        await _ensure_one(rest, roles, obj)
    for obj in policy.cluster_role_bindings(release):
        await _ensure_one(rest, bindings, obj)


async def _ensure_one(rest: Rest, res: Resource, desired: Obj) -> None:
    name = desired["metadata"]["name"]
    try:
        await rest.create(res, "", codec.decode(desired, res.kind.model))
        return
    except errors.ApiError as err:
        if err.code != 409:
            raise

    async def mutate(stored: Obj) -> Obj:
        if (objects.meta(stored).get("annotations") or {}).get(policy.AUTOUPDATE) != "true":
            return stored
        return reconciled(stored, desired)

    try:
        await rest.update(res, "", name, mutate)
    except errors.ApiError as err:  # deleted meanwhile: the next start recreates it
        log.warning("bootstrap policy %s %s: %s", res.kind.kind, name, err)
