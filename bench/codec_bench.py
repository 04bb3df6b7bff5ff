"""Codec throughput on the document ecosystem.md measured libraries with: a ResourceSlice of
N instances x 10 attributes covering all seven value kinds (N=128 is about 52 KB of JSON).

Reports the median time of JSON bytes -> typed model, typed model -> JSON bytes, and YAML text
-> plain values (libyaml), so regressions against the 615/163 us msgspec baseline show.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import yaml

from bench._common import arg_parser, time_median_us, write_json
from kubedra.api import codec
from kubedra.api.resource.v1alpha2 import ResourceSlice


def _attributes(i: int) -> list[dict[str, Any]]:
    return [
        {"name": "memory", "quantity": "80Gi"},
        {"name": "model", "string": "a100"},
        {"name": "driver-version", "version": "535.104.5"},
        {"name": "cores", "intSlice": {"ints": [0, 1, 2, 3]}},
        {"name": "mig", "bool": i % 2 == 0},
        {"name": "index", "int": i},
        {"name": "links", "stringSlice": {"strings": ["nvlink-0", "nvlink-1"]}},
        {"name": "clock", "quantity": "1410M"},
        {"name": "vendor", "string": "example"},
        {"name": "numa", "int": i % 4},
    ]


def slice_document(instances: int) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1alpha2",
        "kind": "ResourceSlice",
        "metadata": {"name": "worker-1-gpu.example.com-x7k2p"},
        "nodeName": "worker-1",
        "driverName": "gpu.example.com",
        "namedResources": {
            "instances": [
                {"name": f"gpu-{i}", "attributes": _attributes(i)} for i in range(instances)
            ]
        },
    }


def run(instances: int, repeats: int) -> dict[str, Any]:
    doc = slice_document(instances)
    body = json.dumps(doc).encode()
    text = yaml.safe_dump(doc)
    obj = codec.decode(body, ResourceSlice)
    if json.loads(codec.encode(obj)) != doc:
        raise SystemExit("round trip changed the document")
    return {
        "instances": instances,
        "json_bytes": len(body),
        "decode_us": time_median_us(lambda: codec.decode(body, ResourceSlice), repeats),
        "encode_us": time_median_us(lambda: codec.encode(obj), repeats),
        "yaml_load_us": time_median_us(lambda: codec.load_documents(text), max(1, repeats // 5)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = arg_parser(__doc__)
    parser.add_argument("--instances", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=50)
    args = parser.parse_args(argv)
    if args.smoke:
        args.instances, args.repeats = 16, 5
    r = run(args.instances, args.repeats)
    print(
        f"codec: ResourceSlice {r['instances']} instances ({r['json_bytes']} B): "
        f"decode {r['decode_us']:.0f} us, encode {r['encode_us']:.0f} us, "
        f"yaml load {r['yaml_load_us']:.0f} us (medians)"
    )
    write_json(args.json, r)
    return 0


if __name__ == "__main__":
    sys.exit(main())
