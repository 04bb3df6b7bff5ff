"""The offline simulator's pod-level checks and the autoscaler answer."""

from __future__ import annotations

from typing import Any

from kubedra.allocation.autoscale import extra_nodes_needed
from kubedra.allocation.simulate import Simulator, Snapshot, pending_pods
from kubedra.api.codec import decode_object
from tests.unit.allocation.helpers import selectors


def node(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}}}


def rslice(name: str, node_name: str, n: int) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceSlice",
            "metadata": {"name": name}, "nodeName": node_name, "driverName": "d",
            "namedResources": {"instances": [{"name": f"i{k}"} for k in range(n)]}}


def rclass(name: str = "c", **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClass",
            "metadata": {"name": name}, "driverName": "d", "structuredParameters": True, **extra}


def claim(name: str, status: dict[str, Any] | None = None, cls: str = "c") -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"resourceClassName": cls}, "status": status or {}}


def pod(name: str, *claims: str, node_name: str | None = None,
        uid: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"resourceClaims": [
        {"name": c, "source": {"resourceClaimName": c}} for c in claims]}
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": uid or f"uid-{name}"},
            "spec": spec}


def allocated(node_name: str, inst: str, *, shareable: bool = False,
              reserved: list[str] | None = None) -> dict[str, Any]:
    return {"driverName": "d", "allocation": {
        "shareable": shareable,
        "availableOnNodes": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": [node_name]}]}]},
        "resourceHandles": [{"driverName": "d", "structuredData": {
            "nodeName": node_name, "results": [{"namedResources": {"name": inst}}]}}]},
        "reservedFor": [{"resource": "pods", "name": r, "uid": f"uid-{r}"}
                        for r in reserved or []]}


def snap(*raw: dict[str, Any]) -> Snapshot:
    return Snapshot.from_objects(decode_object(r) for r in raw)


def test_placement_respects_existing_allocations_and_node_filters() -> None:
    s = snap(node("n1", zone="a"), node("n2", zone="b"), rslice("s1", "n1", 1),
             rslice("s2", "n2", 2),
             rclass("c", suitableNodes={"nodeSelectorTerms": [{"matchExpressions": [
                 {"key": "zone", "operator": "In", "values": ["a"]}]}]}),
             rclass("any"),
             claim("held", allocated("n1", "i0", reserved=["old"])),
             claim("want", cls="c"), claim("other", cls="any"),
             claim("moved", allocated("n2", "i1")),
             pod("old", "held", node_name="n1"), pod("p1", "want"), pod("p2", "other"),
             pod("p3", "moved"), pod("p4", "held"))
    sim = Simulator(s, selectors())
    got = {p.pod: p for p in sim.run(pending_pods(s))}
    assert got["default/p1"].node is None
    assert got["default/p1"].reasons == {
        "n1": "resourceclaim cannot be allocated for the node (unsuitable)",
        "n2": "excluded by resource class node filter"}
    assert got["default/p2"].node == "n2"  # packs: fewest free instances left
    assert got["default/p2"].claims[0].instances == ["d/i0"]
    assert got["default/p3"].node == "n2" and not got["default/p3"].claims[0].newly_allocated
    assert got["default/p4"].node is None and got["default/p4"].message == "resourceclaim in use"


def test_claim_errors_are_reported() -> None:
    s = snap(node("n1"), rslice("s1", "n1", 1),
             claim("gone-class", cls="missing"),
             claim("dealloc", {"deallocationRequested": True}),
             pod("a", "gone-class"), pod("b", "dealloc"), pod("c", "nope"))
    got = {p.pod: p.message for p in Simulator(s, selectors()).run(pending_pods(s))}
    assert got == {"default/a": "resource class missing does not exist",
                   "default/b": "resourceclaim must be reallocated",
                   "default/c": 'resourceclaim.resource.k8s.io "nope" not found'}


def test_autoscaler_answer() -> None:
    s = snap(node("n1"), rslice("s1", "n1", 1), rclass("any"),
             *[claim(f"c{i}", cls="any") for i in range(4)],
             *[pod(f"p{i}", f"c{i}") for i in range(4)])
    template = decode_object(node("tmpl"))
    tslice = decode_object(rslice("tmpl-slice", "tmpl", 2))
    answer = extra_nodes_needed(s, template, [tslice], selectors=selectors())  # type: ignore[arg-type,list-item]
    assert answer.extra_nodes == 2  # 1 on n1, 3 more need two 2-instance nodes
    assert sorted({p.node for p in answer.placements}) == ["n1", "tmpl-1", "tmpl-2"]


def test_pods_bound_to_existing_allocations_are_not_never_fit() -> None:
    s = snap(node("n1"), rslice("s1", "n1", 1), rclass("any"),
             claim("kept", allocated("n1", "i0")), pod("p", "kept"))
    template = decode_object(node("tmpl"))
    tslice = decode_object(rslice("tmpl-slice", "tmpl", 2))
    answer = extra_nodes_needed(s, template, [tslice], selectors=selectors())  # type: ignore[arg-type,list-item]
    assert (answer.extra_nodes, answer.never_fit) == (0, [])
    assert answer.placements[0].node == "n1"
