"""Validation throughput of the API's hottest write: a kubelet's ResourceSlice update.

Each iteration decodes a ResourceSlice JSON body (N instances with 7 typed attributes each, one
per value kind) into the typed model and runs ``validate_resource_slice_update`` against the
stored copy, as the API server does for every PUT. Prints the median time per update and
instances validated per second.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from bench._common import arg_parser, time_median_us, write_json
from kubedra.api.codec import decode
from kubedra.api.resource.v1alpha2 import ResourceSlice
from kubedra.validation.resource import validate_resource_slice_update


def slice_body(instances: int) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceSlice",
        "metadata": {"name": "worker-1-gpu.example.com-x7k2p", "resourceVersion": "7"},
        "nodeName": "worker-1", "driverName": "gpu.example.com",
        "namedResources": {"instances": [
            {"name": f"gpu-{i}", "attributes": [
                {"name": "memory", "quantity": "80Gi"},
                {"name": "model", "string": "a100"},
                {"name": "driver-version", "version": "1.2.3-rc.1+build.5"},
                {"name": "cores", "intSlice": {"ints": [0, 1, 2, 3]}},
                {"name": "mig", "bool": False},
                {"name": "numa", "int": i % 2},
                {"name": "links", "stringSlice": {"strings": ["nvlink-0", "nvlink-1"]}},
            ]} for i in range(instances)
        ]},
    }


def run(instances: int, repeats: int) -> dict[str, Any]:
    body = json.dumps(slice_body(instances)).encode()
    old = decode(body, ResourceSlice)

    def update() -> None:
        errors = validate_resource_slice_update(decode(body, ResourceSlice), old)
        if errors:
            raise SystemExit(f"unexpected errors: {errors[:3]}")

    median = time_median_us(update, repeats) / 1e6
    return {"instances": instances, "repeats": repeats, "median_ms": median * 1000,
            "instances_per_second": instances / median}


def main(argv: list[str] | None = None) -> int:
    parser = arg_parser(__doc__)
    parser.add_argument("--instances", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args(argv)
    if args.smoke:
        args.instances, args.repeats = 50, 3
    result = run(args.instances, args.repeats)
    print(f"validation: ResourceSlice update with {result['instances']} instances: "
          f"median {result['median_ms']:.2f} ms, "
          f"{result['instances_per_second']:.0f} instances/s")
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
