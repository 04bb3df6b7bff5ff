"""kubelet-test-driver.json: ``kubedra example-driver`` behaves as upstream's e2e test driver
(instance names, ListAndWatch, CDI output, parameter -> env mapping, error texts, paths,
idempotency, served methods). Driven in-process through the fake kubelet."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from kubedra.driver import dra_socket_path, registration_socket_path
from kubedra.driver.example import ExampleDriver, build, generated_instances, instance_names
from kubedra.driver.testing import FakeKubelet
from kubedra.proto.generated import dra_v1alpha3_pb2 as dra_pb2
from tests.unit.driver.helpers import claim_yaml, short_dir
from tests.vectors import load, vector_cases

VECTORS = load("kubelet-test-driver.json")
NAME = "test-driver.cdi.k8s.io"
FILE = "kubelet-test-driver.json"
pytestmark = pytest.mark.timeout(60)
__all__ = ["short_dir"]


class Running:
    def __init__(self, kubelet: FakeKubelet, example: ExampleDriver, cdi_dir: Path) -> None:
        self.kubelet, self.example, self.cdi_dir = kubelet, example, cdi_dir


@pytest.fixture
async def running(short_dir: Path) -> AsyncIterator[Running]:
    driver, example = build(NAME, short_dir, short_dir / "cdi", "worker", generated_instances(3))
    async with driver, FakeKubelet(driver.registration_socket) as kubelet:
        yield Running(kubelet, example, short_dir / "cdi")


def _subst(template: Any, uid: str) -> Any:
    text = json.dumps(template).replace("<driverName>", NAME).replace("<claimUID>", uid)
    text = text.replace("<cdiDir>", "CDI")
    return json.loads(text)


@vector_cases(
    FILE,
    [
        {"name": f"instances-{n}", "count": n, "want": v}
        for n, v in VECTORS["instances"]["examples"].items()
    ],
)
async def test_instances(case: dict[str, Any], short_dir: Path) -> None:
    count = int(case["count"])
    if count < 0:
        driver, _ = build(NAME, short_dir, short_dir / "cdi", "worker", None)
        async with driver, FakeKubelet(driver.registration_socket) as kubelet:
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await kubelet.resources()
            assert err.value.code() == grpc.StatusCode.UNIMPLEMENTED
            assert f"UNIMPLEMENTED '{err.value.details()}'" in case["want"]
        return
    assert instance_names(count) == case["want"]
    driver, _ = build(NAME, short_dir, short_dir / "cdi", "worker", generated_instances(count))
    async with driver, FakeKubelet(driver.registration_socket) as kubelet:
        published = await kubelet.resources()
        assert [i.name for i in published] == sorted(case["want"])
        # exactly one message, then the stream stays open until the plugin stops
        with pytest.raises(asyncio.TimeoutError):
            await kubelet.resources(timeout=0.2)
        await driver.stop()
        with pytest.raises(EOFError):
            await kubelet.resources()


@vector_cases(FILE, [{"name": "cdi-classic", **VECTORS["cdi"]}])
async def test_cdi_output_for_a_classic_claim(case: dict[str, Any], running: Running) -> None:
    want = _subst(case, "uid-1")
    handle = '{"EnvVars":{"key":"value"},"NodeName":""}'
    claim = dra_pb2.Claim(namespace="default", uid="uid-1", name="c", resource_handle=handle)
    response = await running.kubelet.node.NodePrepareResources(
        dra_pb2.NodePrepareResourcesRequest(claims=[claim])
    )
    assert list(response.claims["uid-1"].cdi_devices) == [want["qualifiedDevice"]]
    path = running.cdi_dir / Path(want["specFile"]).name
    assert str(path) == want["specFile"].replace("CDI", str(running.cdi_dir))
    spec = json.loads(path.read_text())
    assert spec["kind"] == want["kind"] == want["specJSON"]["kind"]
    assert spec["cdiVersion"] == want["specJSON"]["cdiVersion"]
    assert spec["devices"] == [
        {"name": want["deviceName"], "containerEdits": {"env": ["key=value"]}}
    ]
    # env omitted when empty
    empty = dra_pb2.Claim(uid="uid-2", resource_handle='{"EnvVars":{}}')
    await running.kubelet.node.NodePrepareResources(
        dra_pb2.NodePrepareResourcesRequest(claims=[empty])
    )
    spec = json.loads((running.cdi_dir / f"{NAME}-uid-2.json").read_text())
    assert spec["devices"] == [{"name": "claim-uid-2", "containerEdits": {}}]


@vector_cases(
    FILE,
    [
        {
            "name": "structured-env",
            "rule": VECTORS["parameters"]["structured"],
            "want": VECTORS["parameters"]["e2eExpectedEnv"],
        }
    ],
)
async def test_structured_parameters_become_env(case: dict[str, Any], running: Running) -> None:
    yaml_text = claim_yaml(
        "u",
        ["instance-00"],
        driver=NAME,
        class_params='{"x": "y"}',
        claim_params='{"a": "b"}',
        request_params='{"request_foo": "bar"}',
    )
    result = await running.kubelet.prepare(yaml_text)
    assert result["u"].error == ""
    spec = json.loads((running.cdi_dir / f"{NAME}-u.json").read_text())
    [device] = spec["devices"]
    env = device["containerEdits"]["env"]
    for line in ("user_a=b", "user_request_foo=bar", "admin_x=y"):
        assert line in case["want"] and line in env


def _error_inputs() -> dict[str, tuple[str, str]]:
    """Error template -> (claim YAML or proto marker, the expected text)."""
    return {
        "unmarshal resource handle: %w": ("classic:{", "unmarshal resource handle: "),
        "unexpected nil StructuredResourceHandle": ("empty-handle", ""),
        "missing named resources allocation result": (
            claim_yaml("e", [], driver=NAME).replace("results: []", "results: [{}]"),
            "missing named resources allocation result",
        ),
        "empty named resources instance name": (
            claim_yaml("e", ['""'], driver=NAME),
            "empty named resources instance name",
        ),
        "unknown allocated instance %q": (
            claim_yaml("e", ["instance-77"], driver=NAME),
            'unknown allocated instance "instance-77"',
        ),
        "resource instance %q used more than once": (
            claim_yaml("e", ["instance-00", "instance-00"], driver=NAME),
            'resource instance "instance-00" used more than once',
        ),
        "invalid length of NodePrepareResourceRequest.StructuredResourceHandle: %d": (
            "two-handles",
            "invalid length of NodePrepareResourceRequest.StructuredResourceHandle: 2",
        ),
        "claim was allocated for %q, cannot be prepared on %q": (
            claim_yaml("e", ["instance-00"], driver=NAME, node="other"),
            'claim was allocated for "other", cannot be prepared on "worker"',
        ),
        "decoding %s parameters: %v": (
            claim_yaml("e", ["instance-00"], driver=NAME, class_params="[1]"),
            "decoding admin parameters: ",
        ),
    }


@vector_cases(FILE, [{"name": e} for e in VECTORS["parameters"]["errors"]])
async def test_error_texts(case: dict[str, Any], running: Running) -> None:
    given, want = _error_inputs()[case["name"]]
    node = running.kubelet.node
    if given.startswith("classic:"):
        claims = [dra_pb2.Claim(uid="e", resource_handle=given.removeprefix("classic:"))]
    elif given == "empty-handle":
        # a proto repeated field cannot hold nil: an empty entry is an empty handle (no results)
        claims = [dra_pb2.Claim(uid="e")]
        claims[0].structured_resource_handle.add()
    elif given == "two-handles":
        [claim] = running.kubelet.claims_request([claim_yaml("e", ["instance-00"], driver=NAME)])
        claim.structured_resource_handle.append(claim.structured_resource_handle[0])
        claims = [claim]
    else:
        claims = running.kubelet.claims_request([given])
    response = await node.NodePrepareResources(dra_pb2.NodePrepareResourcesRequest(claims=claims))
    error = response.claims["e"].error
    assert error.startswith(want) if want else error == ""


@vector_cases(
    FILE,
    [
        {
            "name": "standalone",
            "root": "/var/lib/kubelet",
            "driver": "test-driver",
            "reg": VECTORS["paths"]["standaloneDefaults"]["--plugin-registration-path"]
            + "/test-driver-reg.sock",
            "dra": VECTORS["paths"]["standaloneDefaults"]["--dra-address"],
        },
        {
            "name": "e2eNode",
            "root": "/var/lib/kubelet",
            "driver": "<pluginName>",
            "reg": VECTORS["paths"]["e2eNode"]["registrar"],
            "dra": VECTORS["paths"]["e2eNode"]["endpoint"],
        },
    ],
)
def test_default_socket_paths(case: dict[str, Any]) -> None:
    root = Path(case["root"])
    assert str(registration_socket_path(root, case["driver"])) == case["reg"]
    assert str(dra_socket_path(root, case["driver"])) == case["dra"]


@vector_cases(FILE, [{"name": "idempotency", "rule": VECTORS["idempotency"]}])
async def test_idempotency(case: dict[str, Any], running: Running) -> None:
    claim = claim_yaml("i", ["instance-01"], driver=NAME)
    first = await running.kubelet.prepare(claim)
    path = running.cdi_dir / f"{NAME}-i.json"
    before = path.stat().st_mtime_ns
    assert await running.kubelet.prepare(claim) == first
    assert path.stat().st_mtime_ns == before  # not rewritten
    assert await running.kubelet.unprepare(claim_yaml("unknown", [], driver=NAME)) == {
        "unknown": ""
    }
    changed = claim_yaml("i", ["instance-02"], driver=NAME)
    error = (await running.kubelet.unprepare(changed))["i"]
    assert error.startswith("difference between expected (-) and actual resource handle (+):")
    assert await running.kubelet.unprepare(claim) == {"i": ""}


@vector_cases(FILE, [{"name": m} for m in VECTORS["grpcMethodsRecorded"]])
async def test_methods_are_served(case: dict[str, Any], short_dir: Path) -> None:
    driver, _ = build(NAME, short_dir, short_dir / "cdi", "worker", [])
    socket = driver.registration_socket if "Registration" in case["name"] else driver.dra_socket
    async with driver, grpc.aio.insecure_channel(f"unix:{socket}") as channel:
        if case["name"].endswith("ListAndWatchResources"):
            stream = channel.unary_stream(case["name"])(b"")
            assert await stream.read() == bytes.fromhex("0a020a00")  # zero instances
            stream.cancel()
            return
        body = bytes.fromhex("0801") if "Notify" in case["name"] else b""
        await channel.unary_unary(case["name"])(body, timeout=5)
