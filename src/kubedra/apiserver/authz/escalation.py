"""RBAC escalation prevention (upstream ``pkg/registry/rbac/*/policybased``): a user may
write a Role or ClusterRole only with rules they hold themselves (or with the ``escalate``
verb on it), and a binding only to a role whose rules they hold (or with ``bind`` on it)."""

from __future__ import annotations

from kubedra.api import codec
from kubedra.api.meta import TypedObject
from kubedra.api.rbac import ClusterRole, ClusterRoleBinding, Role, RoleBinding
from kubedra.apiserver import errors
from kubedra.apiserver.auth import User
from kubedra.apiserver.authz.attributes import Attributes, Decision
from kubedra.apiserver.authz.chain import MASTERS, Chain
from kubedra.apiserver.authz.rbac import RbacIndex
from kubedra.apiserver.authz.rules import Permissions, Rule, compact_missing, rules_of
from kubedra.apiserver.registry import Resource

RBAC = "rbac.authorization.k8s.io"
_FULL_AUTHORITY = (Rule(("*",), ("*",), ("*",)), Rule(("*",), non_resource_urls=("*",)))


def _go_strings(values: tuple[str, ...]) -> str:
    return "[" + " ".join(f'"{v}"' for v in values) + "]"


class Escalation:
    def __init__(self, chain: Chain, index: RbacIndex) -> None:
        self.chain = chain
        self.index = index

    def admit(self, user: User, res: Resource, namespace: str, obj: TypedObject) -> None:
        if MASTERS in user.groups:
            return
        name = obj.metadata.name or ""
        if isinstance(obj, Role | ClusterRole):
            if self._allowed(user, "escalate", res.kind.plural, namespace, name):
                return
            if isinstance(obj, ClusterRole) and obj.aggregation_rule is not None and (
                self._missing(user, "", _FULL_AUTHORITY)
            ):
                raise errors.forbidden_object(res.kind.plural, RBAC, name,
                                              "must have cluster-admin privileges to use "
                                              "the aggregationRule")
            rules = rules_of(codec.to_builtins(obj))
        elif isinstance(obj, RoleBinding | ClusterRoleBinding):
            ref = obj.role_ref
            plural = "clusterroles" if ref.kind == "ClusterRole" else "roles"
            if self._allowed(user, "bind", plural, namespace, ref.name):
                return
            found = self.index.role_rules(ref.kind, namespace, ref.name)
            if found is None:
                raise errors.not_found(plural, RBAC, ref.name)
            rules = found
        else:
            return
        missing = self._missing(user, namespace, rules)
        if missing:
            listed = "\n".join(r.compact() for r in compact_missing(missing))
            raise errors.forbidden_object(
                res.kind.plural, RBAC, name,
                f'user "{user.name}" (groups={_go_strings(user.groups)}) is attempting to '
                f"grant RBAC permissions not currently held:\n{listed}")

    def _allowed(self, user: User, verb: str, plural: str, namespace: str, name: str) -> bool:
        a = Attributes(user, verb, True, RBAC, plural, "", namespace, name)
        return self.chain.decide(a).decision is Decision.ALLOW

    def _missing(self, user: User, namespace: str, rules: tuple[Rule, ...] | list[Rule]
                 ) -> list[Rule]:
        """``ConfirmNoEscalation``: the atoms of ``rules`` the user's RBAC rules lack."""
        owner = Permissions(self.index.user_rules(user, namespace))
        return [atom for rule in rules for atom in rule.atoms() if not owner.covers(atom)]
