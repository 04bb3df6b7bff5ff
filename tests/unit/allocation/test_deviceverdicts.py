"""Filter verdicts shared by pods that ask for the same thing (1.34): reused while a node's
slices and the devices in use in their pools stay the same, re-computed when either changes,
and never different from a fresh allocation."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import msgspec

from kubedra.allocation.deviceallocator import DeviceAllocator
from kubedra.allocation.deviceclaims import DeviceClaims
from kubedra.allocation.deviceverdicts import DeviceVerdicts
from kubedra.allocation.features import Features
from kubedra.allocation.model.devicecel import cel_device_selectors
from kubedra.allocation.model.devices import SliceIndex
from kubedra.allocation.podclaims import prepare_devices
from kubedra.api.codec import decode
from kubedra.api.core import Node, Pod
from kubedra.api.resource.v1 import DeviceClass, ResourceClaim, ResourceSlice

FEATURES = Features(prioritized_list=True)


def pod(i: int) -> Pod:
    return decode({"metadata": {"name": f"p{i}", "namespace": "default", "uid": f"u{i}"}},
                  Pod)


def claim(i: int, count: int = 1, selector: str = "true") -> ResourceClaim:
    return decode({"metadata": {"name": f"c{i}", "namespace": "default", "uid": f"cu{i}"},
                   "spec": {"devices": {"requests": [{"name": "r", "exactly": {
                       "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": count,
                       "selectors": [{"cel": {"expression": selector}}]}}]}}}, ResourceClaim)


def gpu_class(expression: str = "true") -> dict[str, DeviceClass]:
    return {"gpu": decode({"metadata": {"name": "gpu"}, "spec": {"selectors": [
        {"cel": {"expression": expression}}]}}, DeviceClass)}


def node(name: str) -> Node:
    return decode({"metadata": {"name": name}}, Node)


def slice_(node_name: str, devices: int, generation: int = 1) -> ResourceSlice:
    obj: dict[str, Any] = {"metadata": {"name": f"{node_name}-s"}, "spec": {
        "driver": "gpu.example.com", "nodeName": node_name,
        "pool": {"name": node_name, "generation": generation, "resourceSliceCount": 1},
        "devices": [{"name": f"d{k}", "attributes": {"model": {"int": k}}}
                    for k in range(devices)]}}
    return decode(obj, ResourceSlice)


class Cluster:
    """The scheduler's state for these tests: claims, slices, classes, a shared cache."""

    def __init__(self, slices: list[ResourceSlice]) -> None:
        self.claims = DeviceClaims()
        self.index = SliceIndex(slices)
        self.classes = gpu_class()
        self.selectors = cel_device_selectors()
        self.verdicts = DeviceVerdicts()
        self.runs = 0

    def results(self, i: int, c: ResourceClaim, name: str) -> Any:
        plan = prepare_devices(pod(i), [c], self.classes, self.claims, self.index,
                               self.selectors, FEATURES, None, self.verdicts)
        assert plan.allocator is not None
        allocator = plan.allocator.allocator
        real = allocator.allocate

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.runs += 1
            return real(*args, **kwargs)

        allocator.allocate = counted  # type: ignore[method-assign]
        return plan.allocator, plan.allocator.allocate(node(name))


def fresh(cluster: Cluster, c: ResourceClaim, name: str) -> Any:
    """The allocator's answer without any cache."""
    return DeviceAllocator(FEATURES, cluster.claims.allocated(), cluster.classes,
                           cluster.index, cluster.selectors).allocate(node(name), [c])


def test_pods_that_ask_the_same_reuse_a_nodes_verdict_until_its_pool_changes() -> None:
    cluster = Cluster([slice_("n0", 2), slice_("n1", 2)])
    _, first = cluster.results(0, claim(0), "n0")
    _, again = cluster.results(1, claim(1), "n0")
    assert cluster.runs == 1 and again is first  # same ask, same node state: reused
    cluster.results(2, claim(2, selector="device.driver != \"x\""), "n0")
    assert cluster.runs == 2  # another ask: its own verdict

    pod_allocator, _ = cluster.results(3, claim(3), "n0")
    pod_allocator.reserve("n0")  # in flight: d0 of n0's pool is taken
    _, after = cluster.results(4, claim(4), "n0")
    assert cluster.runs == 3
    assert after[0].devices.results[0].device == "d1"
    _, n1 = cluster.results(5, claim(5), "n1")  # the other node's pool did not change
    runs = cluster.runs
    _, n1_again = cluster.results(6, claim(6), "n1")
    assert cluster.runs == runs and n1_again is n1

    pod_allocator.release()  # released: n0 changed again
    _, released = cluster.results(7, claim(7), "n0")
    assert cluster.runs == runs + 1 and released[0].devices.results[0].device == "d0"


def test_a_new_slice_or_class_is_a_new_state() -> None:
    cluster = Cluster([slice_("n0", 1)])
    cluster.results(0, claim(0), "n0")
    cluster.index = SliceIndex([slice_("n0", 0, generation=2)])  # the driver withdrew d0
    _, none = cluster.results(1, claim(1), "n0")
    assert cluster.runs == 2 and none is None
    cluster.index = SliceIndex([slice_("n0", 1, generation=3)])
    cluster.results(2, claim(2), "n0")
    cluster.classes = gpu_class("false")
    _, refused = cluster.results(3, claim(3), "n0")
    assert cluster.runs == 4 and refused is None


def test_shared_verdicts_equal_fresh_allocations_over_random_histories() -> None:
    rng = random.Random(7)
    for _ in range(20):
        names = [f"n{k}" for k in range(3)]
        cluster = Cluster([slice_(n, rng.randint(0, 3)) for n in names])
        held: list[ResourceClaim] = []
        for i in range(25):
            c = claim(i, count=rng.randint(1, 2),
                      selector=rng.choice(["true", "device.attributes[\"gpu.example.com\"]"
                                                   ".model > 0"]))
            name = rng.choice(names)
            expected = fresh(cluster, c, name)
            pod_allocator, got = cluster.results(i, c, name)
            assert msgspec.json.encode(got) == msgspec.json.encode(expected)
            if got is not None and rng.random() < 0.7:
                (allocated,) = pod_allocator.reserve(name)
                assert pod_allocator.commit(allocated)
                held.append(allocated)
            elif held and rng.random() < 0.5:  # a claim deallocated
                gone = held.pop(rng.randrange(len(held)))
                cluster.claims.delete_claim(gone)


def random_history(seed: int, pods: int,
                   check: Callable[[Cluster, int, ResourceClaim, str, Any, Any], None]) -> None:
    """Pods that ask the same on six nodes whose driver republishes now and then, each
    pod's allocation reserved and committed, released, or a held one deallocated at
    random; ``check(cluster, i, claim, node, pod allocator, results)`` runs after each
    pod's Filter on its node."""
    rng = random.Random(seed)
    names = [f"n{k}" for k in range(6)]
    cluster = Cluster([slice_(n, rng.randint(0, 2)) for n in names])
    held: list[ResourceClaim] = []
    for i in range(pods):
        if rng.random() < 0.05:  # a driver republishes: a new index
            cluster.index = SliceIndex([slice_(n, rng.randint(0, 2), generation=i + 2)
                                        for n in names])
        c = claim(i)
        name = rng.choice(names)
        pod_allocator, got = cluster.results(i, c, name)
        check(cluster, i, c, name, pod_allocator, got)
        if got is not None and rng.random() < 0.6:
            (allocated,) = pod_allocator.reserve(name)
            if rng.random() < 0.8:
                assert pod_allocator.commit(allocated)
                held.append(allocated)
            else:
                pod_allocator.release()
        elif held and rng.random() < 0.5:
            cluster.claims.delete_claim(held.pop(rng.randrange(len(held))))


def test_the_kept_free_node_set_follows_every_change() -> None:
    def check(cluster: Cluster, i: int, c: ResourceClaim, name: str, pod_allocator: Any,
              got: Any) -> None:
        local = cluster.index.node_local()
        assert local is not None
        brute = {n for n in local if any(
            (s.spec.driver, s.spec.pool.name, d.name) not in cluster.claims.allocated()
            for _, s in local[n] for d in s.spec.devices or ())}
        assert pod_allocator.nodes_with_free_devices() == brute

    random_history(11, 200, check)


def test_the_nodes_known_to_fit_follow_every_change() -> None:
    """Filter passes the nodes of ``fits`` without a look: each must be a node where a fresh
    allocation of the same ask succeeds, whatever was allocated, released or republished
    since the pod that found it."""
    carried = 0

    def check(cluster: Cluster, i: int, c: ResourceClaim, name: str, pod_allocator: Any,
              got: Any) -> None:
        nonlocal carried
        assert name in pod_allocator.fits or got is None
        carried += len(pod_allocator.fits) - (got is not None)
        for known in pod_allocator.fits:
            assert fresh(cluster, c, known) is not None, (i, known)

    random_history(13, 300, check)
    assert carried > 100  # nodes were carried from pod to pod


def test_no_node_is_known_to_fit_when_a_slice_is_not_one_nodes() -> None:
    """A slice for every node (``allNodes``): whether it is seen depends on the node, so
    every Filter looks."""
    shared = decode({"metadata": {"name": "all-s"}, "spec": {
        "driver": "gpu.example.com", "allNodes": True,
        "pool": {"name": "all", "generation": 1, "resourceSliceCount": 1},
        "devices": [{"name": "d0"}]}}, ResourceSlice)
    cluster = Cluster([shared])
    first, got = cluster.results(0, claim(0), "n0")
    assert got is not None and first.fits == {"n0": first.fits["n0"]}
    second, _ = cluster.results(1, claim(1), "n1")
    assert "n0" not in second.fits  # a dict of its own cycle, not carried over
