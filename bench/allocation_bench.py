"""Structured allocation throughput (in process, no API server).

Shapes of scheduler_perf ``SchedulingWithResourceClaimTemplateStructured`` (spec §11): one
ResourceSlice per node with N instances ``instance-0..N-1`` of ``test-driver.cdi.k8s.io``, class
``test-class``, claim parameters with one request ``selector: "true"``, one claim per pod, as
many pods as instances (the cluster fills up completely). The ``attributes`` variant gives every
instance attributes and uses a class filter and real selectors (string, quantity, semver).

Per pod we time the decision the scheduler needs: resolve parameters, build the plan, find a
node (index pre-selection, then Filter), Reserve (in flight), then the "PreBind done" update
(informer copy in, in-flight entry out). Node choice uses the index's pre-selection
(``PodAllocator.candidate_nodes``) and takes the first node whose Filter passes;
``--all-nodes`` also measures running Filter on every node. Prints pods/s, p50/p99 latency and
the mean latency per 500-pod bucket (it must not grow as the cluster fills), by wall clock and
by process CPU time (the latter is what to compare on a shared machine). The cluster objects
are moved out of the GC's reach (``gc.freeze``) after setup, as a long-running scheduler
would after its initial sync.
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from dataclasses import asdict, dataclass
from typing import Any

from bench._common import arg_parser, percentile, write_json
from kubedra.allocation.celadapter import cel_selectors
from kubedra.allocation.engine import PodAllocator
from kubedra.allocation.index import AllocationIndex
from kubedra.allocation.model.namedresources import plan_claim
from kubedra.allocation.model.parameters import ParameterStore
from kubedra.api.codec import decode
from kubedra.api.resource.v1alpha2 import (
    ResourceClaim,
    ResourceClaimParameters,
    ResourceClass,
    ResourceClassParameters,
    ResourceSlice,
)

DRIVER = "test-driver.cdi.k8s.io"
SELECTOR_A = ('attributes.string["model"] == "a100" && '
              'attributes.quantity["memory"].compareTo(quantity("40Gi")) >= 0')
SELECTOR_B = ('attributes.string["model"] == "h100" && '
              'attributes.version["driverVersion"].isGreaterThan(semver("1.0.0"))')


@dataclass
class Result:
    workload: str
    nodes: int
    instances_per_node: int
    pods: int
    placed: int
    seconds: float
    pods_per_second: float
    cpu_pods_per_second: float  # by process CPU time (the machine may be shared)
    p50_ms: float
    p99_ms: float
    cpu_p50_ms: float
    cpu_p99_ms: float
    bucket_ms: list[float]  # mean latency per 500-pod bucket
    cpu_bucket_ms: list[float]


def _instance(i: int, attributes: bool) -> dict[str, Any]:
    inst: dict[str, Any] = {"name": f"instance-{i}"}
    if attributes:
        inst["attributes"] = [
            {"name": "healthy", "bool": True},
            {"name": "model", "string": "a100" if i % 2 == 0 else "h100"},
            {"name": "memory", "quantity": "40Gi" if i % 4 < 2 else "80Gi"},
            {"name": "index", "int": i},
            {"name": "driverVersion", "version": "1.2.3"},
        ]
    return inst


def setup(nodes: int, per_node: int, attributes: bool) -> tuple[AllocationIndex, ParameterStore,
                                                                ResourceClass]:
    index = AllocationIndex()
    for n in range(nodes):
        node = f"scheduler-perf-dra-{n}"
        index.upsert_slice(decode({
            "metadata": {"name": node}, "nodeName": node, "driverName": DRIVER,
            "namedResources": {"instances": [_instance(i, attributes) for i in range(per_node)]},
        }, ResourceSlice))
    params = ParameterStore()
    cls: dict[str, Any] = {"metadata": {"name": "test-class"}, "driverName": DRIVER,
                           "structuredParameters": True}
    if attributes:
        cls["parametersRef"] = {"apiGroup": "resource.k8s.io", "kind": "ResourceClassParameters",
                                "name": "test-class-parameters", "namespace": "default"}
        params.upsert_class_parameters(decode({
            "metadata": {"name": "test-class-parameters", "namespace": "default"},
            "filters": [{"driverName": DRIVER,
                         "namedResources": {"selector": 'attributes.bool["healthy"]'}}],
        }, ResourceClassParameters))
    selectors = [SELECTOR_A, SELECTOR_B] if attributes else ["true"]
    for k, sel in enumerate(selectors):
        params.upsert_claim_parameters(decode({
            "metadata": {"name": f"test-claim-parameters-{k}", "namespace": "default"},
            "driverRequests": [{"driverName": DRIVER,
                                "requests": [{"namedResources": {"selector": sel}}]}],
        }, ResourceClaimParameters))
    return index, params, decode(cls, ResourceClass)


def run(name: str, nodes: int, per_node: int, pods: int, attributes: bool,
        all_nodes: bool) -> Result:
    index, params, cls = setup(nodes, per_node, attributes)
    selectors = cel_selectors()
    variants = 2 if attributes else 1
    claims = [decode({
        "metadata": {"name": f"pod-{i}-claim", "namespace": "default", "uid": f"uid-{i}",
                     "resourceVersion": "1"},
        "spec": {"resourceClassName": "test-class", "parametersRef": {
            "apiGroup": "resource.k8s.io", "kind": "ResourceClaimParameters",
            "name": f"test-claim-parameters-{i % variants}"}},
    }, ResourceClaim) for i in range(pods)]
    latencies: list[float] = []
    cpu: list[float] = []
    placed = 0
    gc.collect()
    gc.freeze()  # the cluster objects are long-lived: keep them out of GC scans
    start, cpu_start = time.perf_counter(), time.process_time()
    for i, claim in enumerate(claims):
        t0, c0 = time.perf_counter(), time.process_time()
        plan = plan_claim(0, claim, cls, params.class_parameters(cls),
                          params.claim_parameters(claim, cls), selectors)
        allocator = PodAllocator(index, [plan])
        chosen = _choose(allocator, index, nodes, all_nodes)
        if chosen is not None:
            (alloc,) = allocator.reserve(chosen)
            alloc.claim.metadata.resource_version = "2"
            index.upsert_claim(alloc.claim)  # PreBind wrote it; informer delivers it
            index.clear_in_flight(f"uid-{i}")
            placed += 1
        latencies.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    seconds = time.perf_counter() - start
    cpu_seconds = time.process_time() - cpu_start
    gc.unfreeze()
    return Result(name, nodes, per_node, pods, placed, seconds, pods / seconds,
                  pods / cpu_seconds, *_pct(latencies), *_pct(cpu), _buckets(latencies),
                  _buckets(cpu))


def _pct(samples: list[float]) -> tuple[float, float]:
    ms = sorted(x * 1000 for x in samples)
    return percentile(ms, 0.5), percentile(ms, 0.99)


def _buckets(samples: list[float]) -> list[float]:
    return [statistics.fmean(samples[b:b + 500]) * 1000 for b in range(0, len(samples), 500)]


def _choose(allocator: PodAllocator, index: AllocationIndex, nodes: int,
            all_nodes: bool) -> str | None:
    if all_nodes:  # Filter every node, pick the fullest feasible one (no index pre-selection)
        ok = [n for n in (f"scheduler-perf-dra-{k}" for k in range(nodes))
              if allocator.filter(n).ok]
        return min(ok, key=lambda n: (index.free_count(n), n)) if ok else None
    candidates = allocator.candidate_nodes()
    for n in candidates if candidates is not None else index.nodes():
        if allocator.filter(n).ok:
            return n
    return None


def main(argv: list[str] | None = None) -> int:
    ap = arg_parser(__doc__.splitlines()[0], smoke_help="tiny sizes (< 5 s)")
    ap.add_argument("--all-nodes", action="store_true",
                    help="also run Filter on every node per pod (no index pre-selection)")
    args = ap.parse_args(argv)
    if args.smoke:
        shapes = [("smoke_true", 10, 10, 100, False), ("smoke_attributes", 10, 10, 100, True)]
    else:
        shapes = [
            ("2000pods_100nodes", 100, 20, 2000, False),
            ("5000pods_500nodes", 500, 10, 5000, False),
            ("5000pods_500nodes_attributes", 500, 10, 5000, True),
        ]
    results = [run(*shape, all_nodes=False) for shape in shapes]
    if args.all_nodes:
        results += [run(f"{s[0]}_filter_all_nodes", *s[1:], all_nodes=True) for s in shapes]
    for r in results:
        curve = " ".join(f"{b:.3f}" for b in r.bucket_ms)
        cpu_curve = " ".join(f"{b:.3f}" for b in r.cpu_bucket_ms)
        print(f"{r.workload}: {r.placed}/{r.pods} placed; wall {r.pods_per_second:.0f} pods/s "
              f"p50 {r.p50_ms:.3f} ms p99 {r.p99_ms:.3f} ms; cpu {r.cpu_pods_per_second:.0f} "
              f"pods/s p50 {r.cpu_p50_ms:.3f} ms p99 {r.cpu_p99_ms:.3f} ms\n"
              f"  mean ms per 500-pod bucket, wall: {curve}\n"
              f"  mean ms per 500-pod bucket, cpu:  {cpu_curve}", file=sys.stderr)
    main_result = results[1] if len(results) > 1 and not args.smoke else results[0]
    print(f"allocation bench: {main_result.workload} {main_result.pods_per_second:.0f} pods/s "
          f"wall, {main_result.cpu_pods_per_second:.0f} pods/s cpu "
          f"(p50 {main_result.p50_ms:.3f} ms, p99 {main_result.p99_ms:.3f} ms)")
    write_json(args.json, [asdict(r) for r in results])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
