"""Devices-model (resource.k8s.io/v1) allocation throughput, in process.

The shape of ``match_empty_500nodes`` (one node's share): a node-local ResourceSlice of
``test-driver.cdi.k8s.io`` with 8 devices whose ``numa`` attribute splits them into two
groups, class ``test-class`` with a CEL selector, and one claim of 5 requests (one device
each) tied by ``matchAttribute``. Timed: one :meth:`DeviceAllocator.allocate` (pre-checks,
candidate masks from cached verdicts, the search, the AllocationResult), as the scheduler's
Filter runs it per node; a fresh allocator per pod, as upstream builds one per pod.

``--nodes 500`` gives the allocator every node's slice, as the scheduler does (one allocator
per pod, then ``allocate`` on this node). Shapes (``--shape``): ``fits`` (groups of 3 and 5:
first fit starts in the group that is too small), ``greedy`` (groups of 6 and 2: first fit
succeeds), ``none`` (groups of 4 and 4: no allocation). Prints allocations/s by wall clock
and by process CPU time.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from bench._common import arg_parser, write_json
from kubedra.allocation.deviceallocator import DeviceAllocator
from kubedra.allocation.features import Features
from kubedra.allocation.model.devicecel import cel_device_selectors
from kubedra.api.codec import decode
from kubedra.api.core import Node
from kubedra.api.resource.v1 import DeviceClass, ResourceClaim, ResourceSlice

DRIVER = "test-driver.cdi.k8s.io"
GROUPS = {"fits": [0] * 3 + [1] * 5, "greedy": [0] * 6 + [1] * 2, "none": [0, 1] * 4}


def node_slice(shape: str, node: str) -> ResourceSlice:
    devices = [{"name": f"device-{i}", "attributes": {"numa": {"int": numa},
                                                      "model": {"string": "a100"}}}
               for i, numa in enumerate(GROUPS[shape])]
    return decode({"metadata": {"name": f"{node}-slice"}, "spec": {
        "driver": DRIVER, "nodeName": node, "devices": devices,
        "pool": {"name": node, "generation": 1, "resourceSliceCount": 1}}}, ResourceSlice)


def objects(shape: str) -> tuple[Node, ResourceSlice, DeviceClass, ResourceClaim]:
    node = decode({"metadata": {"name": "node-1"}}, Node)
    slice_ = node_slice(shape, "node-1")
    cls = decode({"metadata": {"name": "test-class"}, "spec": {"selectors": [
        {"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}, DeviceClass)
    requests: list[dict[str, Any]] = [
        {"name": f"req-{i}", "exactly": {"deviceClassName": "test-class",
                                         "allocationMode": "ExactCount", "count": 1}}
        for i in range(5)]
    claim = decode({"metadata": {"name": "claim", "namespace": "default"}, "spec": {"devices": {
        "requests": requests,
        "constraints": [{"matchAttribute": f"{DRIVER}/numa"}]}}}, ResourceClaim)
    return node, slice_, cls, claim


def run(shape: str, count: int, nodes: int) -> dict[str, Any]:
    node, slice_, cls, claim = objects(shape)
    slices = [slice_] + [node_slice(shape, f"node-{n}") for n in range(2, nodes + 1)]
    selectors = cel_device_selectors()
    features = Features(admin_access=True, prioritized_list=True)
    found = None
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(count):
        allocator = DeviceAllocator(features, set(), {"test-class": cls}, slices, selectors)
        found = allocator.allocate(node, [claim])
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {"shape": shape, "allocations": count, "allocated": found is not None,
            "per_second": round(count / wall), "cpu_per_second": round(count / cpu),
            "cpu_us_per_allocation": round(cpu / count * 1e6, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = arg_parser(__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--shape", default="fits,greedy,none")
    parser.add_argument("--count", type=int, default=20_000)
    parser.add_argument("--nodes", type=int, default=1,
                        help="nodes with a slice each (the allocator is given all slices)")
    args = parser.parse_args(argv)
    count = 200 if args.smoke else args.count
    results = [run(shape, count, args.nodes) for shape in args.shape.split(",")]
    for r in results:
        print(f"{r['shape']:>6}: allocated={r['allocated']!s:5} {r['per_second']:>7} /s wall  "
              f"{r['cpu_per_second']:>7} /s cpu  ({r['cpu_us_per_allocation']} µs cpu each)",
              file=sys.stderr)
    write_json(args.json, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
