"""v1-validation-resourceslice/-deviceclass/-resourceclaim.json: the 1.34 validator tables,
error for error. Each case runs

* through the validators of kubedra.validation.devices (every case);
* through ``kubedra validate -f -`` with the case's gates (creates: the server's create path
  without the store; not the cases whose ``$rawJSON`` bytes matter, which a manifest cannot
  carry verbatim);
* status writes whose answer the vector says depends on the server (``featureGates``):
  through the server's status-write path (``pipeline.before_status_update``, the v1
  ResourceClaim strategy under 1.34's gates with the case's on);
* through the HTTP API of ``kubedra apiserver --emulated-version 1.34`` where the vector
  says the server's answer depends on it (``featureGates``, ``defaultingChangesOutcome``).

The server's answer is the vector's errors less those v1 defaulting removes (the cases'
notes) and the missing namespace a request's URL supplies."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kubedra.api import codec, kinds
from kubedra.api.features import FeatureGates
from kubedra.api.release import R1_34
from kubedra.api.resource import v1
from kubedra.cli.validate import validate
from kubedra.registry import pipeline, resources
from kubedra.validation import devices as v
from kubedra.validation.field import FieldError
from tests.conformance.v1_validation_support import (
    Server,
    assert_causes,
    assert_errors,
    causes,
    cli_causes,
    cli_gates,
    decode,
    raw_paths,
    server_errors,
    through_server,
)
from tests.e2e.conftest import apiserver_process
from tests.vectors import load, vector_cases

Validator = Callable[..., list[FieldError]]

SLICES = "v1-validation-resourceslice.json"
CLASSES = "v1-validation-deviceclass.json"
CLAIMS = "v1-validation-resourceclaim.json"
#: The server's gates: every gate a vector names on (DRAResourceClaimDeviceStatus is on in
#: 1.34); no case's answer depends on another gate being off.
SERVER_GATES = ("DRADeviceTaints=true,DRAPartitionableDevices=true,"
                "DRADeviceBindingConditions=true,DRAExtendedResource=true")

def _gated(case: dict[str, Any]) -> dict[str, bool]:
    """The one gate the validators read (the strategy drops the fields of the others)."""
    return {"consumable_capacity": bool(case.get("featureGates", {}).get(
        "DRAConsumableCapacity", False))}


def run(case: dict[str, Any], model: type[Any], create: Validator, update: Validator,
        update_status: Validator | None = None, *, gated: bool = True) -> list[FieldError]:
    """The case through the validator its ``operation`` names."""
    obj = decode(case["object"], model)
    kwargs = _gated(case) if gated else {}
    if case["operation"] == "create":
        return create(obj, **kwargs)
    old = decode(case["oldObject"], model)
    if case["operation"] == "updateStatus":
        assert update_status is not None
        return update_status(obj, old)
    return update(obj, old, **kwargs)


def check_status_write(case: dict[str, Any]) -> None:
    """A status write whose answer depends on the gates, through the server's path."""
    if case["operation"] != "updateStatus" or not case.get("featureGates"):
        return
    gates = FeatureGates.for_release(R1_34).with_gates(case["featureGates"])
    kind = kinds.by_api_version(case["object"]["apiVersion"], case["object"]["kind"])
    assert kind is not None
    strategy = resources.strategies(gates)[kind.resource.storage_gvr]
    new, old = (codec.decode(case[k], kind.model) for k in ("object", "oldObject"))
    try:
        pipeline.before_status_update(strategy, kind, new, old)
        errors: list[FieldError] = []
    except pipeline.Invalid as err:
        errors = err.errors
    assert_causes([f"{e.field}: {e.body()}" for e in errors], through_server(case))


def check_cli(case: dict[str, Any]) -> None:
    """A create case through ``kubedra validate``, with the case's gates."""
    obj = case["object"]
    if case["operation"] != "create" or raw_paths(obj):
        return
    result = CliRunner().invoke(validate, ["-f", "-", *cli_gates(case)], input=json.dumps(obj),
                                catch_exceptions=False)
    kind, name = obj["kind"], obj["metadata"].get("name", "")
    want = through_server(case)
    if not want:
        assert (result.exit_code, result.stdout) == (0, f"{kind}/{name} valid\n"), result.stderr
        return
    assert result.exit_code == 1, result.stdout
    assert_causes(cli_causes(result.stderr, kind, name), want)


@pytest.fixture(scope="module")
def server_134(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``kubedra apiserver --emulated-version 1.34`` with :data:`SERVER_GATES`, and the
    namespace the claims name."""
    data: Path = tmp_path_factory.mktemp("v1-validation")
    with apiserver_process(data, "--emulated-version", "1.34",
                           "--feature-gates", SERVER_GATES) as kubeconfig:
        server = Server(kubeconfig)
        server.wait_ready()
        code, answer = server.call("POST", "/api/v1/namespaces", json.dumps(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}}).encode())
        assert code == 201, answer
        yield server


def check_http(case: dict[str, Any], index: int, request: pytest.FixtureRequest) -> None:
    """A case whose answer over HTTP the vector describes, on the 1.34 server."""
    if not (case.get("featureGates") or "defaultingChangesOutcome" in case):
        return
    server: Server = request.getfixturevalue("server_134")
    code, answer = server_errors(server, case, f"case-{index}")
    want = through_server(case)
    if not want:
        assert code in (200, 201), answer
        return
    assert code == 422, answer
    assert answer["reason"] == "Invalid", answer
    assert_causes(causes(answer), want)


def _check(case: dict[str, Any], errors: list[FieldError], request: pytest.FixtureRequest
           ) -> None:
    assert_errors(errors, case["errors"])
    check_cli(case)
    check_status_write(case)
    check_http(case, request.node.callspec.indices["case"], request)


@vector_cases(SLICES, load(SLICES)["cases"])
def test_resource_slice(case: dict[str, Any], request: pytest.FixtureRequest) -> None:
    errors = run(case, v1.ResourceSlice, v.validate_resource_slice,
                 v.validate_resource_slice_update, gated=False)
    _check(case, errors, request)


@vector_cases(CLASSES, load(CLASSES)["cases"])
def test_device_class(case: dict[str, Any], request: pytest.FixtureRequest) -> None:
    errors = run(case, v1.DeviceClass, v.validate_device_class, v.validate_device_class_update)
    _check(case, errors, request)


@vector_cases(CLAIMS, load(CLAIMS)["cases"])
def test_resource_claim(case: dict[str, Any], request: pytest.FixtureRequest) -> None:
    errors = run(case, v1.ResourceClaim, v.validate_resource_claim,
                 v.validate_resource_claim_update, v.validate_resource_claim_status_update)
    _check(case, errors, request)


def test_a_1_34_server_renders_every_field_error_as_v0_34(server_134: Server) -> None:
    """The generic ObjectMeta checks of an update (outside the kind's validator) answer with
    apimachinery v0.34's texts too: no cause of a too large annotation says 1.30's
    ``must have at most``."""
    path = "/apis/resource.k8s.io/v1/deviceclasses"
    code, stored = server_134.call("POST", path, json.dumps(
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
         "metadata": {"name": "annotated"}}).encode())
    assert code == 201, stored
    stored["metadata"]["annotations"] = {"a": "x" * (256 * 1024)}
    code, answer = server_134.call("PUT", f"{path}/annotated", json.dumps(stored).encode())
    assert code == 422, answer
    texts = causes(answer)
    assert texts and set(texts) == {
        "metadata.annotations: Too long: may not be more than 262144 bytes"}, texts
