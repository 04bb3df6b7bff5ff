"""RBAC rule matching as lookups, escalation coverage, the union chain and mode parsing."""

from __future__ import annotations

import pytest

from kubedra.apiserver.auth import User
from kubedra.apiserver.authz.attributes import ALLOW, NO_OPINION, Attributes, Decision, Verdict
from kubedra.apiserver.authz.chain import AlwaysDeny, Chain, ModeError, parse_modes
from kubedra.apiserver.authz.rules import Permissions, Rule, compact_missing


def test_matching() -> None:
    p = Permissions([
        Rule(("get",), ("",), ("pods", "pods/status")),
        Rule(("*",), ("batch",), ("*",)),
        Rule(("update",), ("",), ("*/status",)),
        Rule(("get",), ("",), ("nodes",), ("n1",)),
        Rule(("get",), non_resource_urls=("/healthz", "/apis/*")),
    ])
    assert p.allows("get", "", "pods", "x") and p.allows("get", "", "pods/status", "")
    assert not p.allows("list", "", "pods", "")
    assert p.allows("delete", "batch", "jobs/status", "j")
    assert p.allows("update", "", "nodes/status", "n") and not p.allows("update", "", "nodes", "")
    assert p.allows("get", "", "nodes", "n1")
    assert not p.allows("get", "", "nodes", "n2") and not p.allows("get", "", "nodes", "")
    assert p.allows_url("get", "/healthz") and p.allows_url("get", "/apis/batch/v1")
    assert not p.allows_url("get", "/api") and not p.allows_url("post", "/healthz")


def test_covers_and_missing_text() -> None:
    owner = Permissions([Rule(("get", "list"), ("",), ("pods",))])
    assert owner.covers(Rule(("get",), ("",), ("pods",), ("p",)))
    assert not owner.covers(Rule(("*",), ("",), ("pods",)))  # a * is covered only by a *
    wanted = Rule(("get", "delete", "watch"), ("",), ("pods", "events"))
    missing = [a for a in wanted.atoms() if not owner.covers(a)]
    assert [r.compact() for r in compact_missing(missing)] == [
        '{APIGroups:[""], Resources:["events"], Verbs:["get" "delete" "watch"]}',
        '{APIGroups:[""], Resources:["pods"], Verbs:["delete" "watch"]}',
    ]


class _Fixed:
    def __init__(self, verdict: Verdict) -> None:
        self.verdict = verdict

    def authorize(self, a: Attributes) -> Verdict:
        return self.verdict

    def rules_for(self, user: User, namespace: str) -> list[Rule]:
        return []


def test_union_semantics() -> None:
    alice = Attributes(User("alice", ()), "get", True, "", "pods")
    why = Verdict(Decision.NO_OPINION, "not mine")
    assert Chain([_Fixed(why), _Fixed(ALLOW)]).decide(alice) == ALLOW
    assert Chain([AlwaysDeny(), _Fixed(ALLOW)]).decide(alice).decision is Decision.DENY
    assert Chain([_Fixed(why), _Fixed(NO_OPINION)]).decide(alice) == why
    masters = Attributes(User("root", ("system:masters",)), "get", True, "", "pods")
    assert Chain([AlwaysDeny()]).decide(masters) == ALLOW


def test_modes() -> None:
    assert parse_modes("Node,RBAC") == ("Node", "RBAC")
    with pytest.raises(ModeError, match="not a valid mode"):
        parse_modes("Node,ABAC")
    with pytest.raises(ModeError, match="more than once"):
        parse_modes("RBAC,RBAC")
