"""The RBAC authorizer over an index of Roles, ClusterRoles and their bindings fed by the
watch hub (upstream ``plugin/pkg/auth/authorizer/rbac``).

The index maps each subject to its bindings; what a user may do is compiled once into
:class:`~.rules.Permissions` per namespace and cached until any RBAC object changes, so a
request costs a few dict lookups."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kubedra.api.base import Obj
from kubedra.apiserver.auth import User
from kubedra.apiserver.authz.attributes import ALLOW, NO_OPINION, Attributes, Verdict
from kubedra.apiserver.authz.follow import Follower
from kubedra.apiserver.authz.rules import Permissions, Rule, rules_of
from kubedra.apiserver.hub import WatchHub
from kubedra.storage.contract import Store

PREFIX = "/registry/rbac.authorization.k8s.io/"
ROLES = PREFIX + "roles/"
CLUSTER_ROLES = PREFIX + "clusterroles/"
ROLE_BINDINGS = PREFIX + "rolebindings/"
CLUSTER_ROLE_BINDINGS = PREFIX + "clusterrolebindings/"
_SA_PREFIX = "system:serviceaccount:"
_CACHE_LIMIT = 10_000


@dataclass(frozen=True, slots=True)
class Binding:
    namespace: str  # "" for a ClusterRoleBinding
    role_kind: str
    role_name: str


def subject_keys(binding: Obj, namespace: str) -> list[tuple[str, str]]:
    """``("User"|"Group", name)`` per subject; a ServiceAccount is its user name."""
    out = []
    for s in binding.get("subjects") or ():
        if not isinstance(s, dict):
            continue
        kind, name = s.get("kind"), str(s.get("name") or "")
        if kind == "ServiceAccount":
            out.append(("User", f"{_SA_PREFIX}{s.get('namespace') or namespace}:{name}"))
        elif kind in ("User", "Group"):
            out.append((str(kind), name))
    return out


class _View:
    """One user's compiled permissions, per namespace ("" = cluster-wide only)."""

    __slots__ = ("bindings", "by_namespace", "index")

    def __init__(self, index: RbacIndex, bindings: list[Binding]) -> None:
        self.index = index
        self.bindings = bindings
        self.by_namespace: dict[str, Permissions] = {}

    def permissions(self, namespace: str) -> Permissions:
        perms = self.by_namespace.get(namespace)
        if perms is None:
            perms = Permissions(self.index.rules(self.bindings, namespace))
            if len(self.by_namespace) < _CACHE_LIMIT:
                self.by_namespace[namespace] = perms
        return perms


class RbacIndex:
    """Roles by key, bindings by subject."""

    def __init__(self, hub: WatchHub, store: Store) -> None:
        self.roles: dict[tuple[str, str], list[Rule]] = {}
        self.cluster_roles: dict[str, list[Rule]] = {}
        self.cluster_role_objects: dict[str, Obj] = {}
        self._bindings: dict[str, tuple[Binding, list[tuple[str, str]]]] = {}
        self._by_subject: dict[tuple[str, str], dict[str, Binding]] = {}
        self._views: dict[tuple[str, tuple[str, ...]], _View] = {}
        #: called after every change (the aggregation controller wakes on it)
        self.listeners: list[Callable[[], None]] = []
        self.follower = Follower(hub, store, (ROLES, CLUSTER_ROLES, ROLE_BINDINGS,
                                              CLUSTER_ROLE_BINDINGS),
                                 self._observe, self._reset, self._changed, name="rbac")

    def _reset(self) -> None:
        self.roles.clear()
        self.cluster_roles.clear()
        self.cluster_role_objects.clear()
        self._bindings.clear()
        self._by_subject.clear()

    def _changed(self) -> None:
        self._views.clear()
        for listener in self.listeners:
            listener()

    def _observe(self, prefix: str, key: str, obj: Obj | None) -> None:
        rest = key[len(prefix):]
        if prefix == ROLES:
            ns, _, name = rest.partition("/")
            if obj is None:
                self.roles.pop((ns, name), None)
            else:
                self.roles[(ns, name)] = rules_of(obj)
        elif prefix == CLUSTER_ROLES:
            if obj is None:
                self.cluster_roles.pop(rest, None)
                self.cluster_role_objects.pop(rest, None)
            else:
                self.cluster_roles[rest] = rules_of(obj)
                self.cluster_role_objects[rest] = obj
        else:
            self._forget_binding(key)
            if obj is not None:
                ns = rest.partition("/")[0] if prefix == ROLE_BINDINGS else ""
                ref = obj.get("roleRef") or {}
                binding = Binding(ns, str(ref.get("kind") or ""), str(ref.get("name") or ""))
                subjects = subject_keys(obj, ns)
                self._bindings[key] = (binding, subjects)
                for subject in subjects:
                    self._by_subject.setdefault(subject, {})[key] = binding

    def _forget_binding(self, key: str) -> None:
        old = self._bindings.pop(key, None)
        if old is None:
            return
        for subject in old[1]:
            held = self._by_subject.get(subject)
            if held is not None:
                held.pop(key, None)
                if not held:
                    del self._by_subject[subject]

    # --- questions ---------------------------------------------------------------------------

    def role_rules(self, kind: str, namespace: str, name: str) -> list[Rule] | None:
        """The rules a roleRef points at (None: no such role)."""
        if kind == "ClusterRole":
            return self.cluster_roles.get(name)
        return self.roles.get((namespace, name))

    def rules(self, bindings: list[Binding], namespace: str) -> list[Rule]:
        """What ``bindings`` grant in ``namespace`` (cluster bindings apply everywhere)."""
        out: list[Rule] = []
        for b in bindings:
            if b.namespace and b.namespace != namespace:
                continue
            out += self.role_rules(b.role_kind, b.namespace, b.role_name) or ()
        return out

    def view(self, user: User) -> _View:
        key = (user.name, user.groups)
        view = self._views.get(key)
        if view is None:
            seen: dict[str, Binding] = {}
            for subject in (("User", user.name), *(("Group", g) for g in user.groups)):
                seen.update(self._by_subject.get(subject, {}))
            view = _View(self, list(seen.values()))
            if len(self._views) >= _CACHE_LIMIT:
                self._views.clear()
            self._views[key] = view
        return view

    def user_rules(self, user: User, namespace: str) -> list[Rule]:
        return self.rules(self.view(user).bindings, namespace)

    def permissions(self, user: User, namespace: str) -> Permissions:
        return self.view(user).permissions(namespace)


class RbacAuthorizer:
    def __init__(self, index: RbacIndex) -> None:
        self.index = index

    def authorize(self, a: Attributes) -> Verdict:
        perms = self.index.permissions(a.user, a.namespace if a.resource_request else "")
        if a.resource_request:
            ok = perms.allows(a.verb, a.api_group, a.combined_resource, a.name)
        else:
            ok = perms.allows_url(a.verb, a.path)
        return ALLOW if ok else NO_OPINION

    def rules_for(self, user: User, namespace: str) -> list[Rule]:
        return self.index.user_rules(user, namespace)
