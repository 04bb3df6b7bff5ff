"""A cluster emulating v1.34 serves the 1.34 core Pod shape for claims and Job ``managedBy``
as 1.34 has it; one emulating v1.30 keeps today's shape (``kubedra apiserver
--emulated-version 1.34`` as a process, and API servers in process on 127.0.0.1 with each
release's gates; SQLite in tmp_path, answers read off the wire with aiohttp).

1.34: ``spec.resourceClaims[]`` name a claim or template at the top level (no ``source``),
containers may pick one ``request`` of a claim, ``status.resourceClaimStatuses`` records the
generated claims; a 1.30-shaped pod loses ``source`` (an unknown field: Strict refuses it,
Warn warns) and is refused with 1.34's 422.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from kubedra.api import resourceclaim
from kubedra.api.core import Pod
from kubedra.api.features import FeatureGates
from kubedra.api.release import R1_30, R1_34, Release
from kubedra.apiserver.app import Options
from tests.conformance.scheduler_support import api_client
from tests.e2e.conftest import apiserver_process, kubeconfig_session

NS = "shapes"
Obj = dict[str, Any]


async def call(method: str, url: str, body: Any = None,
               content_type: str = "application/json") -> tuple[int, Obj]:
    headers = {"Content-Type": content_type}
    async with aiohttp.ClientSession() as http, http.request(method, url, json=body,
                                                             headers=headers) as resp:
        return resp.status, await resp.json()


@asynccontextmanager
async def cluster(tmp_path: Path, release: Release) -> AsyncIterator[tuple[Any, str]]:
    """(typed client, server URL) of an API server emulating ``release``."""
    async with api_client(tmp_path, Options(gates=FeatureGates.for_release(release),
                                            gc=False)) as client:
        base = client.config.server
        code, answer = await call("POST", f"{base}/api/v1/namespaces", {
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        assert code == 201, answer
        yield client, base


def pod(claims: list[Obj], refs: list[Obj], name: str = "p") -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "busybox",
                                     "resources": {"claims": refs}}],
                     "resourceClaims": claims}}


CLAIMS_1_34 = [{"name": "gpu", "resourceClaimTemplateName": "gpu-template"},
               {"name": "shared", "resourceClaimName": "shared-claim"}]
REFS_1_34 = [{"name": "gpu", "request": "big"}, {"name": "shared"}]


@pytest.mark.timeout(60)
async def test_1_34_pod_claims_round_trip(tmp_path: Path) -> None:
    async with cluster(tmp_path, R1_34) as (client, base):
        pods = f"{base}/api/v1/namespaces/{NS}/pods"
        code, created = await call("POST", pods, pod(CLAIMS_1_34, REFS_1_34))
        assert code == 201, created
        code, got = await call("GET", f"{pods}/p")
        assert code == 200
        for answer in (created, got):
            assert answer["spec"]["resourceClaims"] == CLAIMS_1_34
            assert answer["spec"]["containers"][0]["resources"]["claims"] == REFS_1_34

        # the ResourceClaim controller's write: the generated claim's name in the status
        code, patched = await call(
            "PATCH", f"{pods}/p/status",
            {"status": {"resourceClaimStatuses": [{"name": "gpu",
                                                   "resourceClaimName": "p-gpu-x7k2p"}]}},
            "application/merge-patch+json")
        assert code == 200, patched
        assert patched["status"]["resourceClaimStatuses"] == [
            {"name": "gpu", "resourceClaimName": "p-gpu-x7k2p"}]

        # the scheduler's, kubelet's and controller's one naming rule reads the 1.34 shape
        typed = await client.get(Pod, "p", NS)
        entries = typed.spec.resource_claims or []
        assert [resourceclaim.claim_name(typed, pc) for pc in entries] == [
            ("p-gpu-x7k2p", True), ("shared-claim", False)]

        # spec.resourceClaims stays immutable
        code, status = await call("PATCH", f"{pods}/p",
                                  {"spec": {"resourceClaims": [
                                      {"name": "gpu", "resourceClaimName": "other"}]}},
                                  "application/merge-patch+json")
        assert code == 422, status
        assert "spec" in [c["field"] for c in status["details"]["causes"]]


@pytest.mark.timeout(60)
async def test_1_30_shaped_pod_is_refused_by_1_34(tmp_path: Path) -> None:
    async with cluster(tmp_path, R1_34) as (_, base):
        code, status = await call("POST", f"{base}/api/v1/namespaces/{NS}/pods", pod(
            [{"name": "gpu", "source": {"resourceClaimName": "c"}}], [{"name": "gpu"}]))
        assert code == 422, status
        assert status["reason"] == "Invalid"
        assert status["details"]["causes"] == [{
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: {"Name":"gpu","ResourceClaimName":null,'
                       '"ResourceClaimTemplateName":null}: must specify one of: '
                       "`resourceClaimName`, `resourceClaimTemplateName`",
            "field": "spec.resourceClaims[0]"}]
        code, _ = await call("GET", f"{base}/api/v1/namespaces/{NS}/pods/p")
        assert code == 404  # nothing stored


@pytest.mark.timeout(60)
async def test_the_other_releases_fields_are_unknown(tmp_path: Path) -> None:
    """kubectl's Strict refuses them (400), the default Warn says so in a Warning header."""
    bodies = {R1_34: pod([{"name": "gpu", "source": {"resourceClaimName": "c"},
                           "resourceClaimName": "c"}], [{"name": "gpu"}]),
              R1_30: pod([{"name": "gpu", "source": {"resourceClaimName": "c"},
                           "resourceClaimName": "c"}], [{"name": "gpu", "request": "r"}])}
    unknown = {R1_34: ['unknown field "spec.resourceClaims[0].source"'],
               R1_30: ['unknown field "spec.containers[0].resources.claims[0].request"',
                       'unknown field "spec.resourceClaims[0].resourceClaimName"']}
    for release in (R1_34, R1_30):
        (tmp_path / release.name).mkdir()
        async with cluster(tmp_path / release.name, release) as (_, base):
            pods = f"{base}/api/v1/namespaces/{NS}/pods"
            code, status = await call("POST", f"{pods}?fieldValidation=Strict",
                                      bodies[release])
            assert code == 400, status
            assert status["message"] == ('Pod in version "v1" cannot be handled as a Pod: '
                                         "strict decoding error: " + ", ".join(unknown[release]))
            async with aiohttp.ClientSession() as http, http.post(
                    pods, json=bodies[release]) as resp:
                assert resp.status == 201, await resp.text()
                assert resp.headers.getall("Warning") == [  # quotes escaped, as upstream's
                    '299 - "{}"'.format(text.replace('"', '\\"')) for text in unknown[release]]


@pytest.mark.timeout(60)
async def test_1_30_keeps_its_shape(tmp_path: Path) -> None:
    async with cluster(tmp_path, R1_30) as (_, base):
        pods = f"{base}/api/v1/namespaces/{NS}/pods"
        both = [{**c, "source": {k: v for k, v in c.items() if k != "name"}}
                for c in CLAIMS_1_34]
        code, created = await call("POST", pods, pod(both, REFS_1_34))
        assert code == 201, created
        assert created["spec"]["resourceClaims"] == [
            {"name": "gpu", "source": {"resourceClaimTemplateName": "gpu-template"}},
            {"name": "shared", "source": {"resourceClaimName": "shared-claim"}}]
        assert created["spec"]["containers"][0]["resources"]["claims"] == [
            {"name": "gpu"}, {"name": "shared"}]
        code, status = await call("POST", pods, pod(CLAIMS_1_34, [], name="q"))
        assert code == 422
        assert [c["field"] for c in status["details"]["causes"]] == [
            "spec.resourceClaims[0].source", "spec.resourceClaims[1].source"]


@pytest.mark.timeout(120)
async def test_kubedra_apiserver_emulating_1_34(tmp_path: Path) -> None:
    with apiserver_process(tmp_path, "--emulated-version", "1.34") as kubeconfig:
        async with kubeconfig_session(kubeconfig) as session:
            async def send(method: str, path: str, body: Obj | None = None) -> tuple[int, Obj]:
                async with session.request(method, path, json=body) as resp:
                    return resp.status, await resp.json()

            code, _ = await send("POST", "/api/v1/namespaces", {
                "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
            assert code == 201
            pods = f"/api/v1/namespaces/{NS}/pods"
            code, created = await send("POST", pods, pod(CLAIMS_1_34, REFS_1_34))
            assert code == 201, created
            code, got = await send("GET", f"{pods}/p")
            assert got["spec"]["resourceClaims"] == CLAIMS_1_34
            assert got["spec"]["containers"][0]["resources"]["claims"] == REFS_1_34
            code, status = await send("POST", pods, pod(
                [{"name": "gpu", "source": {"resourceClaimTemplateName": "t"}}], [], name="q"))
            assert code == 422, status
            assert [c["field"] for c in status["details"]["causes"]] == ["spec.resourceClaims[0]"]


def job(managed_by: str) -> Obj:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
            "spec": {"managedBy": managed_by, "template": {"spec": {
                "containers": [{"name": "c", "image": "busybox"}],
                "restartPolicy": "Never"}}}}


@pytest.mark.timeout(60)
async def test_job_managed_by_per_release(tmp_path: Path) -> None:
    for release, kept in ((R1_34, True), (R1_30, False)):
        (tmp_path / release.name).mkdir()
        async with cluster(tmp_path / release.name, release) as (_, base):
            jobs = f"{base}/apis/batch/v1/namespaces/{NS}/jobs"
            code, created = await call("POST", jobs, job("kueue.x-k8s.io/multikueue"))
            assert code == 201, created
            assert ("managedBy" in created["spec"]) is kept
            code, status = await call("POST", jobs, {**job("example.com/" + "a" * 60),
                                                     "metadata": {"name": "k"}})
            if kept:  # validated with apimachinery v0.34's text
                assert code == 422, status
                assert [(c["field"], c["message"]) for c in status["details"]["causes"]] == [
                    ("spec.managedBy", "Too long: may not be more than 63 bytes")]
            else:  # the alpha gate is off in 1.30: dropped before validation
                assert code == 201, status
                assert "managedBy" not in status["spec"]
