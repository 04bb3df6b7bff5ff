"""``kubedra validate`` and a real API server answer every object alike.

Every object of a served kind found in the conformance vectors and every document in
``examples/`` (and ``examples/v1.34/``) is checked twice under the same release and feature
gates: by ``kubedra validate -f -`` and by a dry-run create (``fieldValidation=Strict``, as
kubectl sends) against a ``kubedra apiserver`` on 127.0.0.1. Both must accept, or both must
reject with the same text: the 422 causes rendered as kubectl renders them, or the 400/413
message. Each release checks the objects its server serves: 1.30 under the default gates and
with ``JobManagedBy`` on, which covers the ``spec.managedBy`` case (off: the create strategy
drops the field, so an invalid value is accepted); 1.34 under its defaults and with the alpha
DRA gates the v1 vectors name on (off: the strategy drops their fields).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from click.testing import CliRunner

from kubedra.api import codec, kinds, scheme
from kubedra.api.release import R1_30, R1_34, Release
from kubedra.api.resource.v1 import DRA_ADMIN_NAMESPACE_LABEL_KEY as ADMIN_ACCESS_LABEL
from kubedra.cli.validate import cause_text, render_invalid, validate
from kubedra.registry.pipeline import MAX_REQUEST_BYTES
from kubedra.validation.names import name_is_dns_label
from tests.e2e.conftest import apiserver_process, kubeconfig_session
from tests.vectors import REPO, VECTORS, example_files, example_files_1_34, load

SERVED = {(k.api_version, k.kind): k for k in kinds.KINDS}
V1_GATES = ("DRADeviceTaints=true,DRAPartitionableDevices=true,DRADeviceBindingConditions=true,"
            "DRAExtendedResource=true,DRAConsumableCapacity=true")
RUNS = ((R1_30, ""), (R1_30, "JobManagedBy=true"), (R1_34, ""), (R1_34, V1_GATES))


def _objects(doc: Any, where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """The outermost objects of a served kind anywhere inside a vector document."""
    if isinstance(doc, dict):
        if (doc.get("apiVersion"), doc.get("kind")) in SERVED and "metadata" in doc:
            yield where, doc
            return
        for key, value in doc.items():
            yield from _objects(value, f"{where}.{key}")
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            yield from _objects(value, f"{where}[{i}]")


def _cases() -> list[tuple[str, dict[str, Any]]]:
    cases: list[tuple[str, dict[str, Any]]] = []
    for path in sorted(VECTORS.glob("*.json")):
        cases += _objects(load(path.name), path.name)
    for path in [*example_files(), *example_files_1_34()]:
        for i, doc in enumerate(codec.load_documents(path.read_bytes())):
            cases.append((f"{path.relative_to(REPO)}[{i}]", doc))
    return cases


def _managed_by_job(value: str) -> dict[str, Any]:
    """Appendix C of the architecture review: a Job with an invalid ``spec.managedBy``."""
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "j", "namespace": "default"},
            "spec": {"managedBy": value, "template": {"spec": {
                "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}}


def _oversized() -> dict[str, Any]:
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "big", "namespace": "default",
                     "annotations": {"a": "x" * MAX_REQUEST_BYTES}}}


CASES = [*_cases(), ("appendix-c", _managed_by_job("not a valid/value!!")),
         ("over-size-limit", _oversized())]


def _namespace(obj: dict[str, Any]) -> str:
    kind = SERVED[(obj["apiVersion"], obj["kind"])]
    own = (obj.get("metadata") or {}).get("namespace")
    return own if kind.namespaced and isinstance(own, str) and own else "default"


def _url(obj: dict[str, Any]) -> str:
    kind = SERVED[(obj["apiVersion"], obj["kind"])]
    base = f"/apis/{kind.api_version}" if kind.group else "/api/v1"
    scope = f"/namespaces/{quote(_namespace(obj), safe='')}" if kind.namespaced else ""
    return f"{base}{scope}/{kind.plural}?dryRun=All&fieldValidation=Strict"


def _server_text(obj: dict[str, Any], status: int, answer: dict[str, Any]) -> str | None:
    """What ``validate`` must print for this server answer (None: the object is valid)."""
    if status in (201, 409):  # 409: admitted, then the name was already taken
        return None
    if status == 422:
        causes = [cause_text(c["field"], c["message"]) for c in answer["details"]["causes"]]
        return render_invalid(obj["kind"], answer["details"].get("name", ""), causes)
    assert status in (400, 413), answer
    return f"error: STDIN: {answer['message']}\n"


_UID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}")


def _comparable(text: str | None, generated: bool) -> str | None:
    """Each side gives a new object its own uid (and generated name): compare the rest."""
    if text is None:
        return None
    text = _UID.sub("<uid>", text)
    return re.sub(r'^The (\w+) "[^"]*"', r'The \1 "<generated>"', text) if generated else text


async def _server_answers(kubeconfig: Path, bodies: list[bytes], objs: list[dict[str, Any]],
                          ) -> list[tuple[int, Any]]:
    async with kubeconfig_session(kubeconfig) as http:
        # the namespaces allow admin access to devices (1.34): a fact of the store, which
        # kubedra validate does not have, as it has no namespaces (see the 404 below)
        labels = {ADMIN_ACCESS_LABEL: "true"}
        async with http.patch("/api/v1/namespaces/default", json={"metadata": {"labels": labels}},
                              headers={"Content-Type": "application/merge-patch+json"}) as resp:
            assert resp.status == 200, await resp.text()
        for ns in sorted({_namespace(o) for o in objs} - {"default"}):
            if not name_is_dns_label(ns, False):
                async with http.post("/api/v1/namespaces",
                                     json={"metadata": {"name": ns, "labels": labels}}) as resp:
                    assert resp.status == 201, await resp.text()
        out = []
        for obj, body in zip(objs, bodies, strict=True):
            headers = {"Content-Type": "application/json"}
            async with http.post(_url(obj), data=body, headers=headers) as resp:
                text = await resp.text()
                out.append((resp.status, json.loads(text) if text.startswith("{") else text))
        return out


def _served_by(release: Release) -> list[tuple[str, dict[str, Any]]]:
    """The cases of kinds ``release``'s server serves (its rows on by default)."""
    gvrs = scheme.served(release)
    return [(where, obj) for where, obj in CASES
            if SERVED[(obj["apiVersion"], obj["kind"])].gvr in gvrs]


@pytest.mark.parametrize(("release", "gates"), RUNS,
                         ids=["1.30", "1.30-JobManagedBy", "1.34", "1.34-alpha-DRA-gates"])
def test_validate_and_the_server_agree(release: Release, gates: str, tmp_path: Path) -> None:
    cases = _served_by(release)
    objs = [obj for _, obj in cases]
    bodies = [json.dumps(obj).encode() for obj in objs]
    flags = ("--emulated-version", release.name,
             *(("--feature-gates", gates) if gates else ()))
    with apiserver_process(tmp_path, *flags) as kubeconfig:
        answers = asyncio.run(_server_answers(kubeconfig, bodies, objs))
    runner = CliRunner()
    disagreements = []
    for (where, obj), body, (status, answer) in zip(cases, bodies, answers, strict=True):
        cli = runner.invoke(validate, ["-f", "-", *flags], input=body.decode())
        if status == 404:  # NamespaceLifecycle runs before validation; validate has no store
            assert answer["details"]["kind"] == "namespaces" and cli.exit_code == 1, where
            continue
        generated = not (obj.get("metadata") or {}).get("name")
        expected = _comparable(_server_text(obj, status, answer), generated)
        got = _comparable(None if cli.exit_code == 0 else cli.stderr, generated)
        if expected != got:
            disagreements.append(f"{where}: server {status} {expected!r} / validate {got!r}")
    assert not disagreements, f"{len(disagreements)} disagree:\n" + "\n".join(disagreements[:5])
    # every vector file's objects and every example of the release were run
    assert len(cases) > (250 if release == R1_30 else 60)


def test_appendix_c_is_accepted_with_the_gate_off_and_rejected_with_it_on(
    tmp_path: Path,
) -> None:
    """The case that once split the two: upstream drops the field when the gate is off (as
    1.30 has it by default)."""
    body = json.dumps(_managed_by_job("not a valid/value!!"))
    off = CliRunner().invoke(validate, ["-f", "-", "--emulated-version", "1.30"], input=body)
    on = CliRunner().invoke(validate, ["-f", "-", "--emulated-version", "1.30",
                                       "--feature-gates", "JobManagedBy=true"], input=body)
    assert (off.exit_code, off.stdout) == (0, "Job/j valid\n")
    assert on.exit_code == 1 and on.stderr.startswith('The Job "j" is invalid: spec.managedBy')
