"""A DRA driver process for fault tests: the example driver (CDI specs, instance checks), with
each ``NodePrepareResources``/``NodeUnprepareResources`` call it receives and answers appended
to a file as one JSON line, and its prepare delayed by ``--prepare-delay`` seconds (a very long
delay is a driver that hangs).

Run as ``python recording_driver.py --driver-name D --root-dir R --cdi-dir C --node-name N
--instances K --calls FILE [--prepare-delay S]``; SIGTERM stops it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import grpc

from kubedra.driver import Driver
from kubedra.driver.claims import Claim
from kubedra.driver.example import ExampleDriver, generated_instances, names_of

RECORDED = ("NodePrepareResources", "NodeUnprepareResources")


class Recorder(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    def __init__(self, path: Path) -> None:
        self.path = path

    def _write(self, method: str, phase: str, claims: list[str]) -> None:
        with self.path.open("a") as f:
            f.write(json.dumps({"method": method, "phase": phase, "claims": claims,
                                "time": time.time()}) + "\n")

    async def intercept_service(self, continuation: Callable[[Any], Awaitable[Any]],
                                details: Any) -> Any:
        handler = await continuation(details)
        method = details.method.rsplit("/", 1)[-1]
        if handler is None or method not in RECORDED:
            return handler
        inner = handler.unary_unary

        async def recorded(request: Any, context: Any) -> Any:
            uids = [c.uid for c in request.claims]
            self._write(method, "received", uids)
            answer = await inner(request, context)
            self._write(method, "answered", uids)
            return answer

        return grpc.unary_unary_rpc_method_handler(
            recorded, request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer)


def read_calls(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def received(path: Path, method: str, claim_uid: str) -> list[dict[str, Any]]:
    return [c for c in read_calls(path) if c["method"] == method and c["phase"] == "received"
            and claim_uid in c["claims"]]


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser()
    for flag in ("--driver-name", "--root-dir", "--cdi-dir", "--node-name", "--calls"):
        p.add_argument(flag, required=True)
    p.add_argument("--instances", type=int, default=4)
    p.add_argument("--prepare-delay", type=float, default=0.0)
    args = p.parse_args(argv)
    instances = generated_instances(args.instances)
    example = ExampleDriver(args.driver_name, Path(args.cdi_dir), args.node_name)
    example.set_instances(names_of(instances))

    async def prepare(claim: Claim) -> list[str]:
        await asyncio.sleep(args.prepare_delay)
        return await example.prepare(claim)

    driver = Driver(args.driver_name, prepare=prepare, unprepare=example.unprepare,
                    root_dir=Path(args.root_dir), instances=instances,
                    interceptors=[Recorder(Path(args.calls))])
    asyncio.run(driver.run())


if __name__ == "__main__":
    main()
