"""CEL selector cost: compile (cold = uncached, cached = LRU hit) and evaluation per call over
N instances with varying attributes (7 attributes each, one per kind), activations prepared
once per instance as the allocation engine does.

Expressions: (a) quantity compare + string equality, (b) a semver comparison, (c) ``true``;
and (d) a resource.k8s.io/v1 ``device`` selector (driver and attribute equality) over N v1
devices prepared once each (``prepare_device``), as the devices allocator does.
Targets (lead's brief): median <= 40 us per evaluation of (a), cached compile <= 2 us.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from bench._common import arg_parser, median_us, write_json
from kubedra.api.quantity import Quantity
from kubedra.api.resource.v1 import DeviceAttribute, DeviceCapacity
from kubedra.api.resource.v1alpha2 import (
    NamedResourcesAttribute,
    NamedResourcesIntSlice,
    NamedResourcesStringSlice,
)
from kubedra.cel import (
    DeviceEnv,
    EnvType,
    Prepared,
    PreparedDevice,
    clear_cache,
    compile_expression,
    prepare,
    prepare_device,
)

EXPRESSIONS = {
    "a": 'attributes.quantity["memory"].compareTo(quantity("10Gi")) >= 0 '
    '&& attributes.string["model"] == "a100"',
    "b": 'attributes.version["driver"].isGreaterThan(semver("1.2.0"))',
    "c": "true",
}
DEVICE_EXPRESSION = ('device.driver == "gpu.example.com" && '
                     'device.attributes["gpu.example.com"].model == "a100"')
_MODELS = ("a100", "h100", "t4", "l4")


def _attributes(i: int) -> list[NamedResourcesAttribute]:
    return [
        NamedResourcesAttribute(name="memory", quantity=Quantity.parse(f"{512 + i % 80 * 1024}Mi")),
        NamedResourcesAttribute(name="model", string=_MODELS[i % 4]),
        NamedResourcesAttribute(name="driver", version=f"1.{i % 5}.{i % 7}"),
        NamedResourcesAttribute(name="index", int_=i % 8),
        NamedResourcesAttribute(name="mig", bool_=i % 2 == 0),
        NamedResourcesAttribute(name="cores", int_slice=NamedResourcesIntSlice(ints=[0, 1, 2, 3])),
        NamedResourcesAttribute(
            name="links", string_slice=NamedResourcesStringSlice(strings=["nvlink-0", "nvlink-1"])
        ),
    ]


def _device(i: int) -> PreparedDevice:
    return prepare_device(
        "gpu.example.com",
        {
            "model": DeviceAttribute(string=_MODELS[i % 4]),
            "driverVersion": DeviceAttribute(version=f"1.{i % 5}.{i % 7}"),
            "index": DeviceAttribute(int_=i % 8),
            "example.com/mig": DeviceAttribute(bool_=i % 2 == 0),
        },
        {"memory": DeviceCapacity(value=Quantity.parse(f"{512 + i % 80 * 1024}Mi"))},
    )


def _compile_times(expr: str, repeats: int) -> tuple[float, float]:
    cold, cached = [], []
    for _ in range(repeats):
        clear_cache()
        t = time.perf_counter()
        compile_expression(expr, EnvType.STORED_EXPRESSIONS)
        cold.append(time.perf_counter() - t)
        t = time.perf_counter()
        for _ in range(100):
            compile_expression(expr, EnvType.STORED_EXPRESSIONS)
        cached.append((time.perf_counter() - t) / 100)
    return median_us(cold), median_us(cached)


_CHUNK = 500


def _eval_times(
    expr: str,
    instances: list[Prepared] | list[PreparedDevice],
    rounds: int,
    env: EnvType | DeviceEnv = EnvType.STORED_EXPRESSIONS,
) -> tuple[float, float, int]:
    """Medians over chunks of 500 consecutive evaluations of the wall-clock and the process
    CPU time per evaluation (CPU time is robust against other load on a shared machine),
    and the number of matching instances."""
    program = compile_expression(expr, env)
    evaluate = program.evaluate
    wall, cpu = [], []
    matches = 0
    for _ in range(rounds):
        matches = 0
        for start in range(0, len(instances), _CHUNK):
            chunk = instances[start : start + _CHUNK]
            t, c = time.perf_counter(), time.process_time()
            for p in chunk:
                matches += evaluate(p)
            cpu.append((time.process_time() - c) / len(chunk))
            wall.append((time.perf_counter() - t) / len(chunk))
    return median_us(wall), median_us(cpu), matches


def run(n: int, rounds: int, compile_repeats: int) -> dict[str, Any]:
    t = time.perf_counter()
    instances = [prepare(_attributes(i)) for i in range(n)]
    prepare_us = (time.perf_counter() - t) / n * 1e6
    for p in instances[:1]:  # build the activation cache outside the timed loop
        compile_expression("true", EnvType.STORED_EXPRESSIONS).evaluate(p)
    results: dict[str, Any] = {"instances": n, "rounds": rounds, "prepare_us": prepare_us}
    for name, expr in EXPRESSIONS.items():
        cold, cached = _compile_times(expr, compile_repeats)
        eval_us, eval_cpu_us, matches = _eval_times(expr, instances, rounds)
        results[name] = {
            "expression": expr,
            "compile_cold_us": cold,
            "compile_cached_us": cached,
            "eval_us": eval_us,
            "eval_cpu_us": eval_cpu_us,
            "matches": matches,
        }
    t = time.perf_counter()
    devices = [_device(i) for i in range(n)]
    prepare_device_us = (time.perf_counter() - t) / n * 1e6
    eval_us, eval_cpu_us, matches = _eval_times(DEVICE_EXPRESSION, devices, rounds, DeviceEnv())
    results["d"] = {"expression": DEVICE_EXPRESSION, "prepare_device_us": prepare_device_us,
                    "eval_us": eval_us, "eval_cpu_us": eval_cpu_us, "matches": matches}
    return results


def main(argv: list[str] | None = None) -> int:
    ap = arg_parser(__doc__.splitlines()[0], smoke_help="1,000 instances, 1 round")
    ap.add_argument("--instances", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    n, rounds, reps = (1_000, 1, 3) if args.smoke else (args.instances, args.rounds, 7)
    r = run(n, rounds, reps)
    a, b, c, d = r["a"], r["b"], r["c"], r["d"]
    print(
        f"cel: n={n} eval median us wall a={a['eval_us']:.1f} b={b['eval_us']:.1f} "
        f"c={c['eval_us']:.1f} (cpu a={a['eval_cpu_us']:.1f} b={b['eval_cpu_us']:.1f} "
        f"c={c['eval_cpu_us']:.1f}); compile us cold a={a['compile_cold_us']:.0f} "
        f"cached a={a['compile_cached_us']:.2f}; prepare {r['prepare_us']:.1f} us/instance; "
        f"v1 device d={d['eval_us']:.2f} us ({1e6 / d['eval_us']:,.0f}/s, cpu "
        f"{d['eval_cpu_us']:.2f}), prepare_device {d['prepare_device_us']:.1f} us/device"
    )
    write_json(args.json, r)
    return 0


if __name__ == "__main__":
    sys.exit(main())
