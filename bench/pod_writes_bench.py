"""The API server's cost of one DRA pod, without the components around it.

One pod's seven writes, in the order and shape the control plane sends them (create the pod,
create its claim from the template, patch the pod's status with the claim's name, add the
claim's finalizer, write the claim's allocation and reservation, bind the pod, record the
Scheduled event), replayed against a ``kubedra apiserver`` subprocess over HTTPS with the
components' six watches open (pods and claims, three of each). ``--concurrency 1`` is the
steady state (one write in flight, each its own commit and watch write); a larger one is a
burst (writes share commits and watch writes). ``--teardown`` adds what the steady state
(``half_500nodes``) does with each pod once it is bound: deallocate the claim (status, then
the finalizer), delete the pod, and let the garbage collector remove the claim it owned.
``--emulated-version 1.34`` replays the same writes of 1.34 (``resource.k8s.io/v1`` claims
from a device class's template, device results) against a server emulating it.

Figures per pod: the server's CPU time (all threads) per round of ``--pods`` pods, median
over ``--rounds``, and wall time. CPU time on a shared machine moves with the host's load;
``--callgrind`` runs the server under valgrind's callgrind and counts the instructions of the
measured rounds instead: the same count for the same code and inputs whatever the machine
does, so two versions compare to a percent in one run each (about a minute; valgrind must be
installed).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

from bench._common import Callgrind, arg_parser, cpu_seconds, write_json
from bench.apiserver_bench import session, start_server
from bench.scheduler_perf import (
    DRIVER,
    Era,
    Workload,
    allocated_device_claim,
    claim_spec,
    create_namespace,
    create_resource_class,
    device_claim_spec,
    device_class,
)
from kubedra.api.release import R1_30, Release, parse_release
from kubedra.api.resourceclaim import POD_CLAIM_NAME_ANNOTATION
from kubedra.client import kubeconfig as kubeconfig_file
from kubedra.client.rest import Client

PODS = "/api/v1/namespaces/test/pods"
NODES = 20


@dataclasses.dataclass(frozen=True)
class _Claims:
    """One release's claim writes: its DRA API (version, finalizer), claim spec, and the status
    that allocates device or instance ``i`` of ``node`` (and the one that deallocates)."""

    era: Era
    requests: int = 1
    """Requests per claim (1.34; more than one agree on the model by ``matchAttribute``, as
    ``match_empty_500nodes``' claims do)."""

    @property
    def v130(self) -> bool:
        return self.era.release == R1_30

    @property
    def api_version(self) -> str:
        return f"resource.k8s.io/{self.era.claims.version}"

    @property
    def path(self) -> str:
        return f"/apis/{self.api_version}"

    def spec(self) -> dict[str, Any]:
        if self.v130:
            return claim_spec()
        return device_claim_spec(Workload(0, 0, requests=self.requests, match=self.requests > 1))

    def allocated(self, node: str, i: int) -> dict[str, Any]:
        if self.v130:
            return {"driverName": DRIVER, "allocation": {
                "resourceHandles": [{"driverName": DRIVER, "structuredData": {
                    "nodeName": node, "results": [{"namedResources": {"name": f"instance-{i}"}}]}}],
                "availableOnNodes": {"nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": [node]}]}]}}}
        status = allocated_device_claim("", node, f"instance-{i}")[1]
        results = status["allocation"]["devices"]["results"]
        results += [{**results[0], "request": f"req-{r}", "device": f"instance-{i}-{r}"}
                    for r in range(1, self.requests)]
        return status

    def deallocated(self) -> dict[str, Any]:
        return {"driverName": DRIVER} if self.v130 else {}


class _Api:
    def __init__(self, http: aiohttp.ClientSession) -> None:
        self.http = http

    async def send(self, method: str, path: str, body: Any,
                   content_type: str = "application/json") -> Any:
        async with self.http.request(method, path, data=json.dumps(body).encode(),
                                     headers={"Content-Type": content_type}) as r:
            text = await r.read()
            if r.status not in (200, 201):
                raise RuntimeError(f"{method} {path}: {r.status} {text[:300]!r}")
            return json.loads(text)


async def _setup(config: kubeconfig_file.ClientConfig, api: _Api, claims: _Claims) -> None:
    """The namespace, class and parameters (or template) of scheduler_perf, and the nodes
    pods bind to."""
    async with Client(config) as client:
        await create_namespace(client, "test")
        if claims.v130:
            await create_resource_class(client)
        else:
            await client.create_raw(claims.era.kind("deviceclasses"), device_class())
        await claims.era.template(client, "test")
    for n in range(NODES):
        await api.send("POST", "/api/v1/nodes", {"metadata": {"name": f"node-{n}"}})


async def _one_pod(api: _Api, claims: _Claims, i: int, teardown: bool) -> None:
    """The seven writes of pod ``i``, each built from the answer to the one before, and with
    ``teardown`` the three that remove it. The claim is deallocated before the pod goes (the
    controller does it after), so the collector's delete finds no finalizer and no write
    races it: the same requests in an order that costs the same every run."""
    pod = await api.send("POST", PODS, claims.era.pod("test", i))
    name, uid = pod["metadata"]["name"], pod["metadata"]["uid"]
    node = f"node-{i % NODES}"
    path = f"{claims.path}/namespaces/test/resourceclaims"
    claim = await api.send("POST", path, {
        "apiVersion": claims.api_version, "kind": "ResourceClaim",
        "metadata": {"name": f"{name}-resource-x",
                     "annotations": {POD_CLAIM_NAME_ANNOTATION: "resource"},
                     "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": name,
                                          "uid": uid, "controller": True,
                                          "blockOwnerDeletion": True}]},
        "spec": claims.spec()})
    claim_name = claim["metadata"]["name"]
    await api.send("PATCH", f"{PODS}/{name}/status",
                   {"status": {"resourceClaimStatuses": [
                       {"name": "resource", "resourceClaimName": claim_name}]}},
                   "application/strategic-merge-patch+json")
    claim["metadata"]["finalizers"] = [claims.era.claims.finalizer]
    claim = await api.send("PUT", f"{path}/{claim_name}", claim)
    claim["status"] = {**claims.allocated(node, i),
                       "reservedFor": [{"resource": "pods", "name": name, "uid": uid}]}
    claim = await api.send("PUT", f"{path}/{claim_name}/status", claim)
    await api.send("POST", f"{PODS}/{name}/binding", {
        "apiVersion": "v1", "kind": "Binding", "metadata": {"name": name, "uid": uid},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node}})
    await api.send("POST", "/api/v1/namespaces/test/events", {
        "metadata": {"name": f"{name}.scheduled"},
        "involvedObject": {"apiVersion": "v1", "kind": "Pod", "namespace": "test",
                           "name": name, "uid": uid},
        "reason": "Scheduled", "type": "Normal",
        "message": f"Successfully assigned test/{name} to {node}",
        "source": {"component": "default-scheduler"}, "count": 1,
        "firstTimestamp": "2026-12-01T00:00:00Z", "lastTimestamp": "2026-12-01T00:00:00Z"})
    if teardown:
        claim["status"] = claims.deallocated()
        claim = await api.send("PUT", f"{path}/{claim_name}/status", claim)
        del claim["metadata"]["finalizers"]
        await api.send("PUT", f"{path}/{claim_name}", claim)
        await api.send("DELETE", f"{PODS}/{name}", {
            "apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0})


async def _watch(config: kubeconfig_file.ClientConfig, path: str) -> None:
    async with session(config) as http, http.get(
            path, params={"watch": "true"}, timeout=aiohttp.ClientTimeout(total=None)) as r:
        async for _ in r.content:
            pass


async def _replay(kubeconfig: Path, pid: int, claims: _Claims, rounds: int, pods: int,
                  concurrency: int, callgrind: bool, teardown: bool) -> list[tuple[float, float]]:
    """(server CPU ms, wall ms) per pod of each round, after one round to warm up."""
    config = kubeconfig_file.load(kubeconfig)
    async with session(config) as http:
        api = _Api(http)
        await _setup(config, api, claims)
        watches = [asyncio.create_task(_watch(config, path)) for path in
                   ["/api/v1/pods"] * 3 + [f"{claims.path}/resourceclaims"] * 3]
        await asyncio.sleep(1.0)
        gate = asyncio.Semaphore(concurrency)

        async def pod(i: int) -> None:
            async with gate:
                await _one_pod(api, claims, i, teardown)

        await asyncio.gather(*(pod(-1 - i) for i in range(pods)))
        if callgrind:
            Callgrind.zero(pid)
        out = []
        for r in range(rounds):
            cpu, start = cpu_seconds(pid), time.monotonic()
            await asyncio.gather(*(pod(r * pods + i) for i in range(pods)))
            out.append(((cpu_seconds(pid) - cpu) * 1000 / pods,
                        (time.monotonic() - start) * 1000 / pods))
        if callgrind:
            Callgrind.dump(pid)
        for w in watches:
            w.cancel()
        await asyncio.gather(*watches, return_exceptions=True)
    return out


def run(rounds: int, pods: int, concurrency: int, callgrind: bool,
        teardown: bool = False, release: Release = R1_30,
        callgrind_out: str | None = None, requests: int = 1) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="kubedra-pod-writes-") as tmp:
        data = Path(tmp)
        counter = Callgrind(data) if callgrind else None
        proc, kubeconfig = start_server(data, tls=True,
                                        prefix=counter.prefix if counter else (),
                                        flags=("--emulated-version", release.name),
                                        timeout=300 if callgrind else 30)
        try:
            per_round = asyncio.run(
                _replay(kubeconfig, proc.pid, _Claims(Era(release), requests), rounds, pods,
                        concurrency, callgrind, teardown))
        finally:
            proc.terminate()
            proc.wait()
        result: dict[str, Any] = {
            "release": release.name, "concurrency": concurrency, "teardown": teardown,
            "requests": requests, "pods_per_round": pods,
            "rounds": rounds,
            "server_cpu_ms_per_pod": statistics.median(c for c, _ in per_round),
            "wall_ms_per_pod": statistics.median(w for _, w in per_round),
            "server_cpu_ms_per_round": [round(c, 3) for c, _ in per_round]}
        if counter:
            result["instructions_per_pod"] = counter.counts()[0] // (rounds * pods)
            if callgrind_out:
                counter.keep(Path(callgrind_out), [f"pods-{release.name}"])
        return result


def main(argv: list[str] | None = None) -> int:
    parser = arg_parser(__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--pods", type=int, default=100, help="pods per round")
    parser.add_argument("--concurrency", type=int, default=1, help="pods in flight")
    parser.add_argument("--callgrind", action="store_true",
                        help="count the server's instructions per pod under callgrind")
    parser.add_argument("--callgrind-out", metavar="DIR",
                        help="with --callgrind, keep the measured profile there as "
                             "pods-<release>.callgrind (for callgrind_annotate)")
    parser.add_argument("--teardown", action="store_true",
                        help="also deallocate, delete and collect each pod (steady state)")
    parser.add_argument("--emulated-version", type=parse_release, default=R1_30,
                        help="the release whose writes are replayed (1.30: v1alpha2 claims; "
                             "1.34: v1 claims with device results)")
    parser.add_argument("--requests", type=int, default=1,
                        help="1.34: requests per claim, more than one under a matchAttribute "
                             "constraint (match_empty_500nodes has 5)")
    args = parser.parse_args(argv)
    if args.requests != 1 and args.emulated_version == R1_30:
        parser.error("--requests needs --emulated-version 1.34")
    if args.smoke:
        args.rounds, args.pods = 1, 5
    r = run(args.rounds, args.pods, args.concurrency, args.callgrind, args.teardown,
            args.emulated_version, args.callgrind_out, args.requests)
    mode = " teardown" if r["teardown"] else ""
    if r["requests"] != 1:
        mode += f" requests={r['requests']}"
    line = (f"pod_writes_bench@{r['release']} c={r['concurrency']}{mode}: server CPU "
            f"{r['server_cpu_ms_per_pod']:.2f} ms/pod (median of {r['rounds']} rounds of "
            f"{r['pods_per_round']}), wall "
            f"{r['wall_ms_per_pod']:.2f} ms/pod")
    if "instructions_per_pod" in r:
        line += f", {r['instructions_per_pod']:,} instructions/pod"
    print(line)
    write_json(args.json, r)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
