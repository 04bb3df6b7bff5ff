"""``explain`` and ``simulate`` on ``resource.k8s.io/v1`` snapshots (the 1.34 era), with real
CEL: each reason a node or device is refused, with its exact text, and placement."""

from __future__ import annotations

from typing import Any

import pytest

from kubedra.allocation.autoscale import extra_nodes_needed
from kubedra.allocation.deviceexplain import DeviceNodeExplanation, DeviceRequestLine
from kubedra.allocation.devicesimulate import (
    DeviceSimulator,
    MixedSnapshot,
    simulator_for,
)
from kubedra.allocation.explain import TOGETHER, PodExplanation
from kubedra.allocation.features import Features
from kubedra.allocation.simulate import Snapshot, pending_pods
from kubedra.api.codec import decode_object
from kubedra.api.core import Node
from kubedra.api.resource.v1 import ResourceSlice

DRIVER = "gpu.example.com"
HEALTHY = f'device.attributes["{DRIVER}"].healthy'
A100 = f'device.attributes["{DRIVER}"].model == "a100"'


def node(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}}}


def gpu(name: str, model: str = "a100", healthy: bool = True, **extra: Any) -> dict[str, Any]:
    return {"name": name, "attributes": {"model": {"string": model},
                                         "healthy": {"bool": healthy}}, **extra}


def rslice(name: str, node_name: str | None, *devices: dict[str, Any], pool: str | None = None,
           count: int = 1, **where: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"driver": DRIVER, "devices": list(devices),
                            "pool": {"name": pool or node_name or name, "generation": 1,
                                     "resourceSliceCount": count}}
    if node_name is not None:
        spec["nodeName"] = node_name
    spec.update(where)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": name}, "spec": spec}


def dclass(name: str = "gpu", *exprs: str) -> dict[str, Any]:
    exprs = exprs or (f'device.driver == "{DRIVER}"', HEALTHY)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": e}} for e in exprs]}}


def exactly(name: str, count: int = 1, *exprs: str, cls: str = "gpu", mode: str = "ExactCount",
            **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"deviceClassName": cls, "allocationMode": mode, **extra}
    if mode == "ExactCount":
        body["count"] = count
    if exprs:
        body["selectors"] = [{"cel": {"expression": e}} for e in exprs]
    return {"name": name, "exactly": body}


def claim(name: str, *requests: dict[str, Any], constraints: list[dict[str, Any]] | None = None,
          status: dict[str, Any] | None = None) -> dict[str, Any]:
    devices: dict[str, Any] = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = constraints
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"devices": devices}, "status": status or {}}


def allocated(node_name: str, *devices: str, reserved: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"allocation": {
        "devices": {"results": [{"request": "gpu", "driver": DRIVER, "pool": node_name,
                                 "device": d} for d in devices]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}}}
    if reserved:
        out["reservedFor"] = [{"resource": "pods", "name": reserved, "uid": f"uid-{reserved}"}]
    return out


def pod(name: str, *claims: str, template: str | None = None, node_name: str | None = None,
        **spec: Any) -> dict[str, Any]:
    entries: list[dict[str, Any]] = [{"name": c, "resourceClaimName": c} for c in claims]
    if template:
        entries.append({"name": "gpu", "resourceClaimTemplateName": template})
    body: dict[str, Any] = {"containers": [{"name": "c", "image": "busybox"}],
                            "resourceClaims": entries, **spec}
    if node_name:
        body["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": body}


def snap(*raw: dict[str, Any]) -> Snapshot:
    return Snapshot.from_objects(decode_object(r) for r in raw)


def explain(s: Snapshot, name: str, features: Features | None = None
            ) -> tuple[PodExplanation, dict[str, DeviceNodeExplanation]]:
    sim = DeviceSimulator(s, features=features)
    target = next(p for p in s.pods if p.metadata.name == name)
    ex = sim.explain(target)
    nodes = {n.node: n for n in ex.nodes if isinstance(n, DeviceNodeExplanation)}
    return ex, nodes


def states(line: DeviceRequestLine) -> dict[str, str]:
    return {d.device.rsplit("/", 1)[1]: d.state for d in line.devices}


def two_nodes() -> list[dict[str, Any]]:
    return [node("n1"), node("n2"), dclass(),
            rslice("s1", "n1", gpu("gpu-0"), gpu("gpu-1", "h100")),
            rslice("s2", "n2", gpu("gpu-0"), gpu("gpu-1", "h100", healthy=False))]


def test_selectors_in_use_and_the_choice_per_device() -> None:
    s = snap(*two_nodes(), claim("held", exactly("gpu"), status=allocated("n1", "gpu-0",
                                                                          reserved="old")),
             pod("old", "held", node_name="n1"),
             claim("want", exactly("gpu", 1, A100)), pod("p", "want"))
    ex, nodes = explain(s, "p")
    assert ex.result == "fits on n2"
    n1, n2 = nodes["n1"], nodes["n2"]
    assert (n1.suitable, n1.reason) == (False, "cannot allocate all claims")
    assert n1.why == "default/want#gpu: needs 1 device (ExactCount), 0 of the node's 2 usable"
    assert states(n1.requests[0]) == {
        "gpu-0": "in use by default/held",
        "gpu-1": 'request selector #0 is false: device.attributes["gpu.example.com"].model '
                 '== "a100"'}
    assert n2.suitable and n2.why == ""
    assert states(n2.requests[0]) == {
        "gpu-0": "CHOSEN",
        "gpu-1": 'class gpu selector #1 is false: device.attributes["gpu.example.com"].healthy'}
    assert (n2.requests[0].mode, n2.requests[0].usable) == ("ExactCount 1", 1)


def test_attribute_missing_is_upstreams_cel_runtime_error() -> None:
    s = snap(node("n1"), dclass("gpu", 'device.attributes["gpu.example.com"].memory > 1'),
             rslice("s1", "n1", gpu("gpu-0")), claim("c", exactly("gpu")), pod("p", "c"))
    _, nodes = explain(s, "p")
    text = ("class gpu: selector #0 on device gpu.example.com/n1/gpu-0: CEL runtime error: "
            "no such key: memory")
    assert nodes["n1"].reason == text  # the allocator stops: its error is the reason
    assert not nodes["n1"].suitable and nodes["n1"].why == ""


def test_not_enough_devices() -> None:
    s = snap(*two_nodes(), claim("big", exactly("gpu", 3)), pod("p", "big"))
    _, nodes = explain(s, "p")
    assert nodes["n1"].why == ("default/big#gpu: needs 3 devices (ExactCount), 2 of the node's "
                               "2 usable")
    assert nodes["n2"].why == ("default/big#gpu: needs 3 devices (ExactCount), 1 of the node's "
                               "2 usable")


def test_match_attribute_unmet_names_the_values_seen() -> None:
    s = snap(*two_nodes(), rslice("s3", "n3", gpu("gpu-0"), gpu("gpu-1")), node("n3"),
             claim("pair", exactly("a"), exactly("b"),
                   constraints=[{"matchAttribute": f"{DRIVER}/model"}]),
             pod("p", "pair"))
    ex, nodes = explain(s, "p")
    assert ex.result == "fits on n3"
    assert nodes["n1"].why == ('default/pair: matchAttribute gpu.example.com/model cannot be '
                               'met, values seen: a: "a100", "h100"; b: "a100", "h100"')
    line = nodes["n1"].constraints[0]
    assert (line.attribute, line.requests, line.values) == (
        f"{DRIVER}/model", [], {"a": ['"a100"', '"h100"'], "b": ['"a100"', '"h100"']})
    assert nodes["n2"].why == ("default/pair: its requests together need more usable devices "
                               "than the node has")


def test_match_attribute_on_devices_without_it() -> None:
    bare = {"name": "gpu-2", "attributes": {"healthy": {"bool": True}}}
    s = snap(node("n1"), dclass(), rslice("s1", "n1", gpu("gpu-0"), bare),
             claim("pair", exactly("a"), exactly("b"),
                   constraints=[{"matchAttribute": f"{DRIVER}/model", "requests": ["a", "b"]}]),
             pod("p", "pair"))
    _, nodes = explain(s, "p")
    assert nodes["n1"].why == ('default/pair: matchAttribute gpu.example.com/model cannot be '
                               'met, values seen: a: "a100" (1 without it); b: "a100" '
                               '(1 without it)')


def test_pools_incomplete_and_invalid() -> None:
    s = snap(node("n1"), node("n2"), dclass(),
             rslice("s1", "n1", gpu("gpu-0"), pool="p1", count=2),
             rslice("s2a", "n2", gpu("gpu-0"), pool="p2", count=2),
             rslice("s2b", "n2", gpu("gpu-0"), pool="p2", count=2),
             claim("all", exactly("gpu", mode="All")), pod("p", "all"))
    _, nodes = explain(s, "p")
    n1, n2 = nodes["n1"], nodes["n2"]
    assert n1.reason == ("claim default/all, request gpu: asks for all devices, but resource "
                         "pool gpu.example.com/p1 is currently being updated")
    assert n1.notes == ["pool gpu.example.com/p1 is incomplete (1 of 2 slices): requests for "
                        "all devices refuse it"]
    assert n2.reason == ("claim default/all, request gpu: asks for all devices, but resource "
                         "pool gpu.example.com/p2 is currently invalid")
    assert n2.notes == ["pool gpu.example.com/p2 is invalid (duplicate device name gpu-0): "
                        "none of its devices is used"]


def test_incomplete_pool_note_counts_the_slices() -> None:
    s = snap(node("n1"), dclass(), rslice("s1", "n1", gpu("gpu-0"), pool="p1", count=3),
             claim("c", exactly("gpu")), pod("p", "c"))
    _, nodes = explain(s, "p")
    assert nodes["n1"].suitable  # ExactCount uses an incomplete pool
    assert nodes["n1"].notes == ["pool gpu.example.com/p1 is incomplete (1 of 3 slices): "
                                 "requests for all devices refuse it"]


def test_all_with_a_device_in_use() -> None:
    s = snap(node("n1"), dclass(), rslice("s1", "n1", gpu("gpu-0"), gpu("gpu-1")),
             claim("held", exactly("gpu"), status=allocated("n1", "gpu-1", reserved="old")),
             claim("all", exactly("gpu", mode="All")), pod("p", "all"))
    _, nodes = explain(s, "p")
    assert nodes["n1"].why == ("default/all#gpu: asks for all 2 devices, "
                               "gpu.example.com/n1/gpu-1 is in use")
    assert nodes["n1"].requests[0].mode == "All"


def test_device_taint_not_tolerated() -> None:
    taint = {"key": "example.com/broken", "value": "yes", "effect": "NoSchedule"}
    s = snap(node("n1"), dclass(),
             rslice("s1", "n1", gpu("gpu-0", taints=[taint]), gpu("gpu-1", taints=[taint])),
             claim("c", exactly("gpu")), pod("p", "c"),
             claim("tolerant", exactly("gpu", tolerations=[
                 {"key": "example.com/broken", "operator": "Exists"}])), pod("q", "tolerant"))
    on = Features(admin_access=True, prioritized_list=True, device_taints=True)
    _, nodes = explain(s, "p", on)
    assert states(nodes["n1"].requests[0])["gpu-0"] == \
        "taint example.com/broken=yes:NoSchedule is not tolerated"
    assert nodes["n1"].why == ("default/c#gpu: needs 1 device (ExactCount), 0 of the node's 2 "
                               "usable")
    assert explain(s, "q", on)[1]["n1"].suitable
    assert explain(s, "p")[1]["n1"].suitable  # DeviceTaints is off in 1.34 by default


def test_first_available_explains_each_subrequest() -> None:
    request = {"name": "gpu", "firstAvailable": [
        {"name": "two", "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 2},
        {"name": "h100", "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1,
         "selectors": [{"cel": {"expression": f'device.attributes["{DRIVER}"].model == '
                                              '"h100"'}}]}]}
    s = snap(*two_nodes(), claim("c", request), pod("p", "c"))
    ex, nodes = explain(s, "p")
    assert ex.result == "fits on n1"
    assert [r.request for r in nodes["n1"].requests] == ["gpu/two", "gpu/h100"]
    assert states(nodes["n1"].requests[0]) == {"gpu-0": "CHOSEN", "gpu-1": "CHOSEN"}
    assert nodes["n2"].why == (
        "default/c#gpu: no subrequest can be met (two: needs 2 devices (ExactCount), 1 of the "
        "node's 2 usable; h100: needs 1 device (ExactCount), 0 of the node's 2 usable)")
    assert states(nodes["n2"].requests[1])["gpu-0"] == (
        'request selector #0 is false: device.attributes["gpu.example.com"].model == "h100"')


def test_each_claim_fits_alone_but_not_together() -> None:
    s = snap(node("n1"), dclass(), rslice("s1", "n1", gpu("gpu-0")),
             claim("a", exactly("gpu")), claim("b", exactly("gpu")), pod("p", "a", "b"))
    _, nodes = explain(s, "p")
    assert nodes["n1"].why == TOGETHER
    assert states(nodes["n1"].requests[1]) == {"gpu-0": "usable"}


def test_node_level_reasons() -> None:
    zone = {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "zone", "operator": "In", "values": ["a"]}]}]}
    s = snap(node("n1", zone="a"), node("n2", zone="b"), node("n3", zone="a"), dclass(),
             rslice("shared", None, gpu("gpu-0"), pool="zone-a", nodeSelector=zone),
             claim("c", exactly("gpu")), pod("p", "c"),
             pod("r", "c", nodeSelector={"kubernetes.io/hostname": "n1"}),
             claim("held", exactly("gpu"), status=allocated("n3", "gpu-9")), pod("q", "held"))
    ex, nodes = explain(s, "p")
    assert ex.result == "fits on n1, n3"
    assert nodes["n2"].reason == "cannot allocate all claims"
    assert nodes["n2"].notes == ["slice shared (driver gpu.example.com): its nodeSelector does "
                                 "not match the node"]
    assert nodes["n2"].why == ("default/c#gpu: needs 1 device (ExactCount), 0 of the node's 0 "
                               "usable")
    _, pinned = explain(s, "r")
    assert pinned["n3"].reason == "node(s) didn't match Pod's node affinity/selector"
    assert pinned["n3"].why == ""
    _, held = explain(s, "q")
    assert held["n1"].reason == "resourceclaim not available on the node"
    assert held["n1"].notes == ["claim default/held is allocated with a nodeSelector that "
                                "excludes the node"]
    assert held["n3"].suitable


def test_pod_level_errors_and_missing_class() -> None:
    s = snap(node("n1"), dclass(), claim("c", exactly("gpu", cls="nope")), pod("p", "c"),
             pod("q", template="absent"))
    got = {p.pod: p.message for p in DeviceSimulator(s).run(pending_pods(s))}
    assert got == {"default/p": "request gpu: device class nope does not exist",
                   "default/q": 'resource claim template "absent": '
                                'resourceclaimtemplate.resource.k8s.io "absent" not found'}


def template(name: str, *requests: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": list(requests)}}}}


def test_placement_allocates_from_templates_and_counts_for_the_next_pods() -> None:
    s = snap(*two_nodes(), template("one", exactly("gpu")),
             *[pod(f"p{i}", template="one") for i in range(4)])
    placed = DeviceSimulator(s).run(pending_pods(s))
    got = {p.pod: (p.node, [c.instances for c in p.claims]) for p in placed}
    # packing: the node left with the fewest free devices first; n2 has one usable GPU
    assert got["default/p0"][0] is not None
    used = [d for _, claims in got.values() for devices in claims for d in devices]
    assert sorted(used) == sorted(["gpu.example.com/n1/gpu-0", "gpu.example.com/n1/gpu-1",
                                   "gpu.example.com/n2/gpu-0"])
    assert [p.node for p in placed].count(None) == 1
    last = next(p for p in placed if p.node is None)
    assert last.reasons == {"n1": "cannot allocate all claims",
                            "n2": "cannot allocate all claims"}
    outcome = next(p for p in placed if p.node is not None).claims[0]
    assert outcome.newly_allocated and outcome.claim.startswith("default/p")


def test_node_template_answer_for_v1_slices() -> None:
    s = snap(*two_nodes(), template("one", exactly("gpu")), template("two", exactly("gpu", 2)),
             *[pod(f"p{i}", template="one") for i in range(4)], pod("pair", template="two"),
             pod("huge", template="four"), template("four", exactly("gpu", 4)))
    tmpl = decode_object(node("gpu-node"))
    assert isinstance(tmpl, Node)
    slices = [decode_object(rslice("gpu-node-gpus", "gpu-node", gpu("gpu-0"), gpu("gpu-1")))]
    assert isinstance(slices[0], ResourceSlice)
    answer = extra_nodes_needed(s, tmpl, slices)
    assert answer.never_fit == ["default/huge"]
    # three GPUs exist for four single-GPU pods and a pair: one pod and the pair need two nodes
    assert answer.extra_nodes == 2 and answer.unplaced == []
    placed = {p.pod: p for p in answer.placements}
    devices = {d for p in placed.values() for c in p.claims for d in c.instances}
    assert "gpu.example.com/gpu-node-1/gpu-0" in devices  # each copy has a pool of its own
    assert "gpu.example.com/gpu-node-2/gpu-1" in devices


def test_a_mixed_snapshot_is_refused() -> None:
    s = snap(node("n1"), dclass(),
             {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClass",
              "metadata": {"name": "old"}, "driverName": "d", "structuredParameters": True})
    with pytest.raises(MixedSnapshot, match=r"mixes resource\.k8s\.io/v1alpha2"):
        simulator_for(s)
