"""The paths clients call besides the resources — ``/version``, discovery, OpenAPI v2/v3, the
CRD list — against a real ``kubedra apiserver``, checked with the official client, kubectl
1.30 (``explain``, validation of manifests for kinds the server does not serve) and an
OpenAPI validator."""

from __future__ import annotations

import json
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client
from openapi_spec_validator import OpenAPIV2SpecValidator, OpenAPIV30SpecValidator

from kubedra.client import kubeconfig
from tests.e2e.conftest import Kubectl, Server

PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
RAW_EXTENSION = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}


def _get(server: Server, path: str, accept: str = "application/json") -> tuple[int, str, bytes]:
    """A GET as the kubeconfig's user (its client certificate; the server verified)."""
    config = kubeconfig.load(server.kubeconfig)
    req = urllib.request.Request(config.server + path, headers={"Accept": accept})
    tls = config.ssl_context()
    try:
        with urllib.request.urlopen(req, timeout=30, context=tls if isinstance(
                tls, ssl.SSLContext) else None) as resp:
            return resp.status, resp.headers.get("Content-Type", ""), resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.headers.get("Content-Type", ""), err.read()


def _json(server: Server, path: str) -> Any:
    status, _, body = _get(server, path)
    assert status == 200, (path, body[:300])
    return json.loads(body)


def test_version_api_of_the_official_client(api_client: Any) -> None:
    """``VersionApi().get_code()`` asks ``/version/`` (with the slash)."""
    info = client.VersionApi(api_client).get_code()
    assert (info.major, info.minor, info.git_version) == ("1", "30", "v1.30.0")


@pytest.mark.parametrize("path", [
    "/version", "/api", "/apis", "/api/v1", "/apis/resource.k8s.io",
    "/apis/resource.k8s.io/v1alpha2", "/apis/batch/v1",
])
def test_paths_answer_with_and_without_trailing_slash(apiserver: Server, path: str) -> None:
    plain, slashed = _json(apiserver, path), _json(apiserver, path + "/")
    assert plain == slashed


def test_probes(apiserver: Server) -> None:
    for path in ("/healthz", "/livez", "/readyz"):
        assert _get(apiserver, path)[::2] == (200, b"ok")


def _v3_documents(server: Server) -> dict[str, Any]:
    index = _json(server, "/openapi/v3")
    return {gv: _json(server, entry["serverRelativeURL"]) for gv, entry in
            index["paths"].items()}


def test_openapi_v3_documents_are_valid(apiserver: Server) -> None:
    docs = _v3_documents(apiserver)
    assert set(docs) >= {"api/v1", "apis/batch/v1", "apis/resource.k8s.io/v1alpha2"}
    for gv, doc in docs.items():
        errors = [str(e).splitlines()[0] for e in OpenAPIV30SpecValidator(doc).iter_errors()]
        assert errors == [], (gv, errors[:5])
    claims = docs["apis/resource.k8s.io/v1alpha2"]["paths"][
        "/apis/resource.k8s.io/v1alpha2/namespaces/{namespace}/resourceclaims"]
    assert [p["name"] for p in claims["parameters"]] == ["namespace"]
    assert set(claims["post"]["responses"]) == {"201", "401"}
    assert claims["get"]["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/io.k8s.api.resource.v1alpha2.ResourceClaimList"}


def test_openapi_v2_document_is_valid_swagger(apiserver: Server) -> None:
    doc = _json(apiserver, "/openapi/v2")
    errors = [str(e).splitlines()[0] for e in OpenAPIV2SpecValidator(doc).iter_errors()]
    assert errors == [], errors[:5]
    item = doc["paths"]["/apis/resource.k8s.io/v1alpha2/resourceslices/{name}"]
    assert item["parameters"][0] == {"name": "name", "in": "path", "required": True,
                                     "description": "name of the ResourceSlice",
                                     "type": "string", "uniqueItems": True}
    assert "requestBody" not in item["put"] and item["put"]["parameters"][0]["in"] == "body"
    assert "nullable" not in json.dumps(doc)


def test_openapi_v2_as_protobuf(apiserver: Server, tmp_path: Path) -> None:
    """kubectl asks for gnostic's protobuf; protoc reads it back (field 1: swagger)."""
    status, ctype, body = _get(apiserver, "/openapi/v2", PROTOBUF)
    assert status == 200
    assert ctype == "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
    decoded = subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", "--decode_raw"], input=body,
        capture_output=True, timeout=60, check=True).stdout.decode()
    assert decoded.startswith('1: "2.0"\n')
    assert '"x-kubernetes-group-version-kind"' in decoded


def test_raw_extension_fields_preserve_unknown_fields(apiserver: Server) -> None:
    schemas = _v3_documents(apiserver)["apis/resource.k8s.io/v1alpha2"]["components"]["schemas"]
    requests = schemas["io.k8s.api.resource.v1alpha2.DriverRequests"]["properties"]
    assert requests["vendorParameters"] == {
        "description": requests["vendorParameters"]["description"], **RAW_EXTENSION}


def test_every_resource_field_is_described(apiserver: Server) -> None:
    schemas = _v3_documents(apiserver)["apis/resource.k8s.io/v1alpha2"]["components"]["schemas"]
    missing = [f"{name}.{field}" for name, schema in schemas.items()
               if not name.endswith("List")
               for field, prop in schema.get("properties", {}).items()
               if not prop.get("description")]
    assert missing == []
    assert all(s.get("description") for n, s in schemas.items() if not n.endswith("List"))


def test_crd_list_is_empty(apiserver: Server) -> None:
    got = _json(apiserver, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
    assert (got["kind"], got["apiVersion"], got["items"]) == (
        "CustomResourceDefinitionList", "apiextensions.k8s.io/v1", [])
    assert int(got["metadata"]["resourceVersion"]) > 0


@pytest.mark.parametrize("target", [
    ["resourceclaim", "--recursive"],
    ["resourceclaimparameters.driverRequests.requests"],
    ["resourceclassparameters", "--recursive"],
    ["resourceclaim.spec"],
])
def test_kubectl_explain(kubectl: Kubectl, target: list[str]) -> None:
    out = kubectl.run("explain", *target).stdout
    assert "DESCRIPTION:" in out


def test_kubectl_explain_every_kind(kubectl: Kubectl) -> None:
    for kind in ("pods", "nodes", "namespaces", "events", "jobs", "leases", "resourceclasses",
                 "resourceclaims", "resourceclaimtemplates", "podschedulingcontexts",
                 "resourceslices", "resourceclaimparameters", "resourceclassparameters"):
        kubectl.run("explain", kind, "--recursive")


def test_kubectl_explain_describes_fields(kubectl: Kubectl) -> None:
    out = kubectl.run("explain", "resourceclaim.spec").stdout
    assert "ResourceClaimSpec defines how a resource is to be allocated." in out
    assert "ResourceClassName references the driver" in " ".join(out.split())
    out = kubectl.run("explain", "resourceclaimparameters.driverRequests.requests").stdout
    assert "vendorParameters\t<Object>" in out


@pytest.mark.parametrize("api_version", ["resource.k8s.io/v1beta1", "resource.k8s.io/v1"])
def test_kubectl_apply_of_todays_dra_api_names_the_missing_kind(
    kubectl: Kubectl, tmp_path: Path, api_version: str,
) -> None:
    manifest = tmp_path / "deviceclass.yaml"
    manifest.write_text(yaml.safe_dump({
        "apiVersion": api_version, "kind": "DeviceClass", "metadata": {"name": "gpu"},
        "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
    }))
    out = kubectl.run("apply", "-f", str(manifest), check=False)
    assert out.returncode != 0
    assert f'no matches for kind "DeviceClass" in version "{api_version}"' in out.stderr
    assert "error validating data" not in out.stderr


def test_kubectl_explain_from_the_v2_protobuf(kubectl: Kubectl) -> None:
    """kubectl's OpenAPI v2 explain reads our gnostic protobuf document end to end."""
    out = kubectl.run("explain", "resourceclaim.spec", "--output", "plaintext-openapiv2").stdout
    assert "ResourceClaimSpec defines how a resource is to be allocated." in out
    assert "resourceClassName\t<string>" in out
    kubectl.run("explain", "pods", "--recursive", "--output", "plaintext-openapiv2")
