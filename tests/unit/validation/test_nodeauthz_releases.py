"""The ResourceSlice rules for nodes by release: 1.34 (``AuthorizeNodeWithSelectors`` GA)
beside 1.30 (whose rows are the conformance vectors). Texts as upstream's
``node_authorizer.go`` and ``noderestriction/admission.go`` word them."""

from __future__ import annotations

import pytest

from kubedra.api.release import R1_30, R1_34, Release
from kubedra.validation import nodeauthz as na

NODE = ("system:node:node0", ("system:nodes",))
NO_EDGE = "no relationship found between node 'node0' and this object"
SELECTOR = "can only list/watch/deletecollection resourceslices with nodeName field selector"


def _graph() -> na.SliceGraph:
    graph = na.SliceGraph()
    graph.observe("mine", "node0")
    graph.observe("theirs", "node1")
    graph.observe("everywhere", "")  # allNodes: names no node
    graph.observe("selected", "")  # nodeSelector: names no node
    return graph


def _decide(verb: str, name: str = "", subresource: str = "",
            fields: tuple[tuple[str, str], ...] = (), release: Release = R1_34) -> na.Verdict:
    attrs = na.RequestAttributes(verb=verb, api_group="resource.k8s.io",
                                 resource="resourceslices", subresource=subresource,
                                 name=name, field_equals=fields)
    verdict = na.authorize_node_request(NODE[0], NODE[1], attrs, _graph(), release)
    assert verdict is not None
    return verdict


@pytest.mark.parametrize("verb", ["get", "update", "patch", "delete"])
def test_own_slice_only(verb: str) -> None:
    assert _decide(verb, "mine").decision is na.Decision.ALLOW
    for other in ("theirs", "everywhere", "selected", "unknown"):
        verdict = _decide(verb, other)
        assert (verdict.decision, verdict.reason) == (na.Decision.NO_OPINION, NO_EDGE)


def test_create_is_left_to_admission() -> None:
    assert _decide("create").decision is na.Decision.ALLOW


@pytest.mark.parametrize("verb", ["list", "watch", "deletecollection"])
def test_collections_need_the_node_field_selector(verb: str) -> None:
    assert _decide(verb, fields=(("spec.nodeName", "node0"),)).decision is na.Decision.ALLOW
    assert _decide(verb, fields=(("spec.driver", "d"), ("spec.nodeName", "node0"))
                   ).decision is na.Decision.ALLOW
    for fields in ((), (("spec.nodeName", "node1"),), (("nodeName", "node0"),)):
        verdict = _decide(verb, fields=fields)
        assert (verdict.decision, verdict.reason) == (na.Decision.NO_OPINION, SELECTOR)


def test_other_verbs_and_subresources() -> None:
    verdict = _decide("escalate", "mine")
    assert verdict.reason == ("only the following verbs are allowed for a ResourceSlice: get, "
                              "watch, list, create, update, patch, delete, deletecollection")
    assert _decide("get", "mine", "status").reason == (
        "cannot authorize ResourceSlice subresources")
    assert _decide("get").reason == "No Object name found"


def test_1_30_is_unchanged() -> None:
    """1.30 lists and watches are open and deletecollection is refused, selector or not."""
    assert _decide("list", release=R1_30).decision is na.Decision.ALLOW
    verdict = _decide("deletecollection", fields=(("spec.nodeName", "node0"),), release=R1_30)
    assert verdict.reason == "can only get, create, update, patch, or delete a ResourceSlice"
    assert na.authorize_node_request(
        *NODE, na.RequestAttributes("get", "resource.k8s.io", "resourceslices", name="mine"),
        _graph(), R1_30) == na.Verdict(na.Decision.ALLOW)


CREATE = "can only create ResourceSlice with the same NodeName as the requesting node"
DELETE = "can only delete ResourceSlice with the same NodeName as the requesting node"


@pytest.mark.parametrize(("operation", "node", "message"), [
    ("CREATE", "node0", None),
    ("CREATE", "node1", CREATE),
    ("CREATE", "", CREATE),  # allNodes or a nodeSelector: not the node's to publish
    ("CREATE", None, CREATE),
    ("DELETE", "node0", None),
    ("DELETE", "node1", DELETE),
    ("DELETE", None, DELETE),
    ("UPDATE", "node1", None),  # the authorizer's edge decides (nodeName is immutable)
])
def test_admission_1_34(operation: str, node: str | None, message: str | None) -> None:
    rules = na.SLICE_RULES[R1_34]
    assert rules.admit(*NODE, operation, node) == message
    assert rules.admit("alice", ("system:authenticated",), operation, node) is None
    assert rules.admit("system:node:", ("system:nodes",), operation, node) == (
        'could not determine node from user "system:node:"')


def test_admission_1_30_checks_creates_only() -> None:
    rules = na.SLICE_RULES[R1_30]
    assert rules.admits_stored == ()
    assert rules.admit(*NODE, "DELETE", "node1") is None
    assert rules.admit(*NODE, "CREATE", "node1") == CREATE
