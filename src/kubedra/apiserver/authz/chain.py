"""``--authorization-mode``: authorizers asked in order with upstream's union semantics
(``union.New``): the first Allow or Deny decides, NoOpinion falls through, and when nobody
has an opinion the request is refused with their reasons. ``system:masters`` is allowed
before any authorizer is asked (``authorizerfactory.NewPrivilegedGroups``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from kubedra.apiserver.auth import User
from kubedra.apiserver.authz.attributes import ALLOW, Attributes, Decision, Verdict
from kubedra.apiserver.authz.rules import Rule

MASTERS = "system:masters"
MODES = ("AlwaysAllow", "AlwaysDeny", "Node", "RBAC")
DEFAULT_MODES = ("Node", "RBAC")


class Authorizer(Protocol):
    def authorize(self, a: Attributes) -> Verdict: ...

    def rules_for(self, user: User, namespace: str) -> list[Rule]: ...


class AlwaysAllow:
    def authorize(self, a: Attributes) -> Verdict:
        return ALLOW

    def rules_for(self, user: User, namespace: str) -> list[Rule]:
        return [Rule(("*",), ("*",), ("*",)), Rule(("*",), non_resource_urls=("*",))]


class AlwaysDeny:
    def authorize(self, a: Attributes) -> Verdict:
        return Verdict(Decision.DENY)

    def rules_for(self, user: User, namespace: str) -> list[Rule]:
        return []


class ModeError(ValueError):
    """An ``--authorization-mode`` value upstream would refuse."""


def parse_modes(text: str) -> tuple[str, ...]:
    """``Node,RBAC`` → ``("Node", "RBAC")``; unknown or repeated modes are an error."""
    modes = tuple(m.strip() for m in text.split(",") if m.strip())
    if not modes:
        raise ModeError("at least one authorization-mode must be passed")
    for m in modes:
        if m not in MODES:
            raise ModeError(f"authorization-mode {m!r} is not a valid mode")
    if len(set(modes)) != len(modes):
        raise ModeError(f"authorization-mode {text!r} has mode specified more than once")
    return modes


class Chain:
    def __init__(self, authorizers: Sequence[Authorizer]) -> None:
        self.authorizers = tuple(authorizers)

    def decide(self, a: Attributes) -> Verdict:
        if MASTERS in a.user.groups:
            return ALLOW
        reasons = []
        for z in self.authorizers:
            verdict = z.authorize(a)
            if verdict.decision is not Decision.NO_OPINION:
                return verdict
            if verdict.reason:
                reasons.append(verdict.reason)
        return Verdict(Decision.NO_OPINION, "\n".join(reasons))

    def rules_for(self, user: User, namespace: str) -> list[Rule]:
        """What ``SelfSubjectRulesReview`` lists: every authorizer's rules, in order."""
        out: list[Rule] = []
        for z in self.authorizers:
            out += z.rules_for(user, namespace)
        return out
