"""The official client ``kubernetes==30.1.0`` against a real ``kubedra apiserver``:
CRUD, status, selectors, pagination, watch resume, patches and 422 causes for every
resource.k8s.io/v1alpha2 kind, and Jobs with ``managedBy``."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

GROUP = "resource.k8s.io/v1alpha2"
DRIVER = "gpu.example.com"


def _uid() -> str:
    return str(uuid.uuid4())


@dataclass(frozen=True)
class KindOps:
    """How to call the generated client for one kind."""

    kind: str
    snake: str
    namespaced: bool
    body: Callable[[str], dict[str, Any]]

    def call(self, api: Any, verb: str, namespace: str, *args: Any, **kw: Any) -> Any:
        """``verb(name, [body])``; the generated client takes the namespace after the name,
        but first for create (``create_namespaced_x(namespace, body)``)."""
        if not self.namespaced:
            return getattr(api, f"{verb}_{self.snake}")(*args, **kw)
        fn = getattr(api, f"{verb}_namespaced_{self.snake}")
        if verb == "create":
            return fn(namespace, *args, **kw)
        return fn(args[0], namespace, *args[1:], **kw)

    def list(self, api: Any, namespace: str, **kw: Any) -> Any:
        if self.namespaced:
            return getattr(api, f"list_namespaced_{self.snake}")(namespace, **kw)
        return getattr(api, f"list_{self.snake}")(**kw)


def _claim_spec() -> dict[str, Any]:
    return {"resourceClassName": DRIVER, "parametersRef": {
        "apiGroup": "resource.k8s.io", "kind": "ResourceClaimParameters", "name": "p"}}


def _slice(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "nodeName": "node-" + name, "driverName": DRIVER,
            "namedResources": {"instances": [{"name": "gpu-0", "attributes": [
                {"name": "memory", "quantity": "80Gi"}, {"name": "model", "string": "a100"},
                {"name": "driver-version", "version": "1.2.3"}, {"name": "mig", "bool": True},
                {"name": "index", "int": 0}, {"name": "cores", "intSlice": {"ints": [0, 1]}},
                {"name": "features", "stringSlice": {"strings": ["fp64"]}}]}]}}


KINDS = [
    KindOps("ResourceClass", "resource_class", False, lambda n: {
        "metadata": {"name": n}, "driverName": DRIVER, "structuredParameters": True}),
    KindOps("ResourceSlice", "resource_slice", False, _slice),
    KindOps("ResourceClaim", "resource_claim", True, lambda n: {
        "metadata": {"name": n}, "spec": _claim_spec()}),
    KindOps("ResourceClaimTemplate", "resource_claim_template", True, lambda n: {
        "metadata": {"name": n}, "spec": {"metadata": {"labels": {"a": "b"}},
                                           "spec": _claim_spec()}}),
    KindOps("PodSchedulingContext", "pod_scheduling_context", True, lambda n: {
        "metadata": {"name": n}, "spec": {"selectedNode": "n1", "potentialNodes": ["n1"]}}),
    KindOps("ResourceClaimParameters", "resource_claim_parameters", True, lambda n: {
        "metadata": {"name": n}, "driverRequests": [{"driverName": DRIVER, "requests": [
            {"namedResources": {"selector": 'attributes.string["model"] == "a100"'}}]}]}),
    KindOps("ResourceClassParameters", "resource_class_parameters", True, lambda n: {
        "metadata": {"name": n}, "vendorParameters": [
            {"driverName": DRIVER, "parameters": {"kind": "X", "sharing": "none"}}],
        "filters": [{"driverName": DRIVER, "namedResources": {"selector": "true"}}]}),
]
IDS = [k.kind for k in KINDS]


@pytest.fixture
def rapi(api_client: Any) -> Any:
    return client.ResourceV1alpha2Api(api_client)


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


@pytest.mark.parametrize("ops", KINDS, ids=IDS)
def test_crud(rapi: Any, namespace: str, ops: KindOps) -> None:
    name = _name(ops.kind.lower())
    created = ops.call(rapi, "create", namespace, ops.body(name))
    assert created.kind == ops.kind and created.api_version == GROUP
    assert created.metadata.name == name and created.metadata.uid
    assert created.metadata.creation_timestamp is not None

    got = ops.call(rapi, "read", namespace, name)
    assert got.metadata.resource_version == created.metadata.resource_version

    got.metadata.labels = {"step": "replaced"}
    replaced = ops.call(rapi, "replace", namespace, name, got)  # +00:00 timestamps go back
    assert replaced.metadata.labels == {"step": "replaced"}
    assert int(replaced.metadata.resource_version) > int(created.metadata.resource_version)

    with pytest.raises(ApiException) as stale:
        ops.call(rapi, "replace", namespace, name, got)
    assert stale.value.status == 409
    assert json.loads(stale.value.body)["reason"] == "Conflict"

    patched = ops.call(rapi, "patch", namespace, name, {"metadata": {"labels": {"p": "1"}}})
    assert patched.metadata.labels == {"step": "replaced", "p": "1"}
    patched = ops.call(rapi, "patch", namespace, name,
                       [{"op": "replace", "path": "/metadata/labels/p", "value": "2"}])
    assert patched.metadata.labels["p"] == "2"

    listed = ops.list(rapi, namespace, label_selector="p=2")
    assert [o.metadata.name for o in listed.items] == [name]
    assert ops.list(rapi, namespace, label_selector="p=3").items == []

    with pytest.raises(ApiException) as dup:
        ops.call(rapi, "create", namespace, ops.body(name))
    assert dup.value.status == 409
    assert json.loads(dup.value.body)["reason"] == "AlreadyExists"

    deleted = ops.call(rapi, "delete", namespace, name)
    assert deleted.kind == ops.kind and deleted.metadata.name == name  # the object, not Status
    with pytest.raises(ApiException) as gone:
        ops.call(rapi, "read", namespace, name)
    assert gone.value.status == 404
    body = json.loads(gone.value.body)
    assert body["reason"] == "NotFound"
    assert body["details"]["name"] == name


@pytest.mark.parametrize("ops", KINDS, ids=IDS)
def test_pagination_and_delete_collection(rapi: Any, namespace: str, ops: KindOps) -> None:
    label = "page-" + uuid.uuid4().hex[:6]
    names = set()
    for i in range(5):
        body = ops.body(_name(f"pg{i}"))
        body["metadata"]["labels"] = {"set": label}
        names.add(ops.call(rapi, "create", namespace, body).metadata.name)
    seen: list[str] = []
    token = None
    pages = 0
    while True:
        page = ops.list(rapi, namespace, label_selector=f"set={label}", limit=2,
                        _continue=token)
        pages += 1
        seen += [o.metadata.name for o in page.items]
        token = page.metadata._continue
        if not token:
            break
        assert len(page.items) == 2
    assert pages == 3
    assert sorted(seen) == sorted(names)
    if ops.namespaced:
        getattr(rapi, f"delete_collection_namespaced_{ops.snake}")(
            namespace, label_selector=f"set={label}")
    else:
        getattr(rapi, f"delete_collection_{ops.snake}")(label_selector=f"set={label}")
    assert ops.list(rapi, namespace, label_selector=f"set={label}").items == []


@pytest.mark.parametrize("ops", KINDS, ids=IDS)
def test_watch_and_resume(rapi: Any, namespace: str, ops: KindOps) -> None:
    label = "w-" + uuid.uuid4().hex[:6]
    start_rv = ops.list(rapi, namespace, label_selector=f"set={label}").metadata.resource_version
    name = _name("w")
    body = ops.body(name)
    body["metadata"]["labels"] = {"set": label}
    ops.call(rapi, "create", namespace, body)
    ops.call(rapi, "patch", namespace, name, {"metadata": {"labels": {"x": "1"}}})
    ops.call(rapi, "delete", namespace, name)

    def events(rv: str) -> list[tuple[str, Any]]:
        list_fn = (getattr(rapi, f"list_namespaced_{ops.snake}") if ops.namespaced
                   else getattr(rapi, f"list_{ops.snake}"))
        args = (namespace,) if ops.namespaced else ()
        out = []
        w = watch.Watch()
        for ev in w.stream(list_fn, *args, label_selector=f"set={label}",
                           resource_version=rv, timeout_seconds=2):
            out.append((ev["type"], ev["object"]))
            if len(out) == 3 or ev["type"] == "DELETED":
                w.stop()
        return out

    seen = events(start_rv)
    assert [t for t, _ in seen] == ["ADDED", "MODIFIED", "DELETED"]
    assert all(o.metadata.name == name and o.kind == ops.kind for _, o in seen)
    assert seen[1][1].metadata.labels == {"set": label, "x": "1"}
    resumed = events(seen[1][1].metadata.resource_version)
    assert [t for t, _ in resumed] == ["DELETED"]


def test_resource_slice_round_trip_and_field_selectors(rapi: Any) -> None:
    name = _name("slice")
    body = _slice(name)
    created = rapi.create_resource_slice(body)
    attrs = {a.name: a for a in created.named_resources.instances[0].attributes}
    assert attrs["memory"].quantity == "80Gi"
    assert attrs["cores"].int_slice.ints == [0, 1]
    assert attrs["features"].string_slice.strings == ["fp64"]
    assert attrs["mig"].bool is True and attrs["index"].int == 0
    by_node = rapi.list_resource_slice(field_selector=f"nodeName=node-{name}")
    assert [s.metadata.name for s in by_node.items] == [name]
    both = rapi.list_resource_slice(field_selector=f"nodeName=node-{name},driverName={DRIVER}")
    assert [s.metadata.name for s in both.items] == [name]
    assert rapi.list_resource_slice(field_selector=f"nodeName=node-{name},driverName=x").items == []
    empty = rapi.create_resource_slice({"metadata": {"name": _name("empty")},
                                        "driverName": DRIVER, "namedResources": {}})
    assert empty.named_resources.instances == []  # emitted as [], not null
    rapi.delete_resource_slice(name)
    rapi.delete_resource_slice(empty.metadata.name)


def test_resource_claim_status(rapi: Any, namespace: str) -> None:
    name = _name("claim")
    claim = rapi.create_namespaced_resource_claim(
        namespace, {"metadata": {"name": name}, "spec": _claim_spec()})
    assert claim.spec.allocation_mode == "WaitForFirstConsumer"  # defaulted
    assert claim.status is None or claim.status.allocation is None
    claim.status = {"driverName": DRIVER, "allocation": {
        "resourceHandles": [{"driverName": DRIVER, "structuredData": {
            "nodeName": "n1", "results": [{"namedResources": {"name": "gpu-0"}}]}}],
        "availableOnNodes": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]},
        "shareable": True},
        "reservedFor": [{"resource": "pods", "name": "p1", "uid": "u1"}]}
    updated = rapi.replace_namespaced_resource_claim_status(name, namespace, claim)
    handle = updated.status.allocation.resource_handles[0]
    assert handle.structured_data.results[0].named_resources.name == "gpu-0"
    # strategic merge on the status subresource: reservedFor merges by uid
    patched = rapi.patch_namespaced_resource_claim_status(name, namespace, {"status": {
        "reservedFor": [{"resource": "pods", "name": "p2", "uid": "u2"}]}})
    assert sorted(r.uid for r in patched.status.reserved_for) == ["u1", "u2"]
    read = rapi.read_namespaced_resource_claim_status(name, namespace)
    assert len(read.status.reserved_for) == 2
    # the main resource ignores status changes
    read.status.reserved_for = []
    read.metadata.labels = {"x": "y"}
    main = rapi.replace_namespaced_resource_claim(name, namespace, read)
    assert len(main.status.reserved_for) == 2 and main.metadata.labels == {"x": "y"}


def test_pod_scheduling_context_status(rapi: Any, namespace: str) -> None:
    name = _name("psc")
    rapi.create_namespaced_pod_scheduling_context(
        namespace, {"metadata": {"name": name}, "spec": {"potentialNodes": ["a", "b"]}})
    rapi.patch_namespaced_pod_scheduling_context_status(name, namespace, {"status": {
        "resourceClaims": [{"name": "gpu", "unsuitableNodes": ["a"]}]}})
    out = rapi.patch_namespaced_pod_scheduling_context_status(name, namespace, {"status": {
        "resourceClaims": [{"name": "net", "unsuitableNodes": ["b"]}]}})
    assert sorted(c.name for c in out.status.resource_claims) == ["gpu", "net"]


def _causes(err: ApiException) -> list[dict[str, Any]]:
    body = json.loads(err.body)
    assert body["kind"] == "Status" and body["reason"] == "Invalid" and body["code"] == 422
    return list(body["details"]["causes"])


def test_invalid_objects_get_upstream_causes(rapi: Any, namespace: str) -> None:
    bad = _slice(_name("bad"))
    bad["namedResources"]["instances"][0]["name"] = "GPU_0"
    with pytest.raises(ApiException) as err:
        rapi.create_resource_slice(bad)
    assert err.value.status == 422
    causes = _causes(err.value)
    assert causes[0]["field"] == "namedResources.instances[0].name"
    assert causes[0]["reason"] == "FieldValueInvalid"
    assert "RFC 1123 subdomain" in causes[0]["message"]

    with pytest.raises(ApiException) as err:
        rapi.create_namespaced_resource_claim(
            namespace, {"metadata": {"name": _name("c")}, "spec": {"resourceClassName": ""}})
    causes = _causes(err.value)
    assert [(c["reason"], c["field"]) for c in causes] == [
        ("FieldValueInvalid", "spec.resourceClassName")]
    assert causes[0]["message"].startswith('Invalid value: "": a lowercase RFC 1123 subdomain')


def test_claim_spec_is_immutable(rapi: Any, namespace: str) -> None:
    name = _name("imm")
    rapi.create_namespaced_resource_claim(namespace,
                                          {"metadata": {"name": name}, "spec": _claim_spec()})
    with pytest.raises(ApiException) as err:
        rapi.patch_namespaced_resource_claim(name, namespace,
                                             {"spec": {"resourceClassName": "other"}})
    assert err.value.status == 422
    assert any(c["field"] == "spec" and "immutable" in c["message"] for c in _causes(err.value))


# ---------------------------------------------------------------- Jobs with managedBy

def _job(name: str, managed_by: str | None = "example.com/mueue") -> dict[str, Any]:
    spec: dict[str, Any] = {"template": {"spec": {"restartPolicy": "Never", "containers": [
        {"name": "c", "image": "busybox"}]}}}
    if managed_by is not None:
        spec["managedBy"] = managed_by
    return {"metadata": {"name": name}, "spec": spec}


@pytest.fixture
def batch(api_client: Any) -> Any:
    return client.BatchV1Api(api_client)


def test_job_managed_by_crud(batch: Any, namespace: str) -> None:
    name = _name("job")
    job = batch.create_namespaced_job(namespace, _job(name))
    assert job.spec.managed_by == "example.com/mueue"
    assert job.spec.completions == 1 and job.spec.backoff_limit == 6  # defaulted
    assert job.spec.selector.match_labels["batch.kubernetes.io/controller-uid"] == \
        job.metadata.uid
    listed = batch.list_namespaced_job(namespace, field_selector=f"metadata.name={name}")
    assert [j.spec.managed_by for j in listed.items] == ["example.com/mueue"]

    with pytest.raises(ApiException) as err:
        batch.patch_namespaced_job(name, namespace, {"spec": {"managedBy": "example.com/x"}})
    assert err.value.status == 422
    assert any(c["field"] == "spec.managedBy" and c["message"].endswith("field is immutable")
               for c in _causes(err.value))

    patched = batch.patch_namespaced_job(name, namespace, {"metadata": {"labels": {"a": "b"}}})
    assert patched.metadata.labels["a"] == "b"
    status = batch.read_namespaced_job_status(name, namespace)
    assert status.spec.managed_by == "example.com/mueue"

    deleted = batch.delete_namespaced_job(name, namespace, propagation_policy="Background")
    assert isinstance(deleted, client.V1Status) and deleted.status == "Success"


def test_job_managed_by_validation(batch: Any, namespace: str) -> None:
    with pytest.raises(ApiException) as err:
        batch.create_namespaced_job(namespace, _job(_name("bad"), "not a domain path"))
    assert err.value.status == 422
    assert any(c["field"] == "spec.managedBy" for c in _causes(err.value))


def test_job_default_controller_value_is_accepted(batch: Any, namespace: str) -> None:
    job = batch.create_namespaced_job(namespace,
                                      _job(_name("k8s"), "kubernetes.io/job-controller"))
    assert job.spec.managed_by == "kubernetes.io/job-controller"


def test_job_patch_types(batch: Any, namespace: str, apiserver: Any) -> None:
    from kubernetes import config as kconfig

    name = _name("patch")
    batch.create_namespaced_job(namespace, _job(name))
    smp = batch.patch_namespaced_job(name, namespace, {"spec": {"parallelism": 0}})
    assert smp.spec.parallelism == 0
    jp = batch.patch_namespaced_job(name, namespace, [
        {"op": "add", "path": "/metadata/annotations", "value": {"note": "json-patch"}},
        {"op": "test", "path": "/spec/managedBy", "value": "example.com/mueue"}])
    assert jp.metadata.annotations == {"note": "json-patch"}
    with pytest.raises(ApiException) as err:
        batch.patch_namespaced_job(name, namespace, [
            {"op": "test", "path": "/spec/managedBy", "value": "other"}])
    assert err.value.status == 422
    merge_client = kconfig.new_client_from_config(config_file=str(apiserver.kubeconfig))
    try:
        merge_client.set_default_header("Content-Type", "application/merge-patch+json")
        merged = client.BatchV1Api(merge_client).patch_namespaced_job(
            name, namespace, {"metadata": {"annotations": {"note": None, "m": "1"}}})
    finally:
        merge_client.close()
    assert merged.metadata.annotations == {"m": "1"}


def test_server_side_apply_through_the_client(apiserver: Any, namespace: str) -> None:
    """The generated client has no apply verb; setting the Content-Type header turns its
    patch call into a server-side apply (201 on create, managedFields recorded)."""
    from kubernetes import config as kconfig

    api = kconfig.new_client_from_config(config_file=str(apiserver.kubeconfig))
    try:
        api.set_default_header("Content-Type", "application/apply-patch+yaml")
        rapi = client.ResourceV1alpha2Api(api)
        name = _name("ssa")
        body = {"apiVersion": GROUP, "kind": "ResourceClaimParameters",
                "metadata": {"name": name, "namespace": namespace},
                "driverRequests": [{"driverName": DRIVER, "requests": [
                    {"namedResources": {"selector": "true"}}]}]}
        created = rapi.patch_namespaced_resource_claim_parameters(
            name, namespace, body, field_manager="e2e")
        entries = created.metadata.managed_fields
        assert [(e.manager, e.operation) for e in entries] == [("e2e", "Apply")]
        assert "f:driverRequests" in entries[0].fields_v1
        other = dict(body, driverRequests=[{"driverName": DRIVER, "requests": [
            {"namedResources": {"selector": "false"}}]}])
        with pytest.raises(ApiException) as err:
            rapi.patch_namespaced_resource_claim_parameters(name, namespace, other,
                                                            field_manager="other")
        assert err.value.status == 409
        assert json.loads(err.value.body)["message"] == (
            'Apply failed with 1 conflict: conflict with "e2e": .driverRequests')
        forced = rapi.patch_namespaced_resource_claim_parameters(
            name, namespace, other, field_manager="other", force=True)
        assert forced.driver_requests[0].requests[0].named_resources.selector == "false"
    finally:
        api.close()
