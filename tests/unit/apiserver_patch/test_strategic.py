"""Strategic merge patch: kubectl's observed bodies (transcript vectors) and the directives."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubedra.apiserver.patch import (
    PatchError,
    apply_merge_patch,
    apply_strategic_merge_patch,
    schema_of,
)
from kubedra.apiserver.patch.schema import JOB, NODE, POD, POD_SCHEDULING_CONTEXT, RESOURCE_CLAIM
from kubedra.apiserver.patch.values import copy_json
from tests.vectors import load

TRANSCRIPT = "kubectl_1.30_request_transcript.json"


def _smp_requests() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(POSTed object, later SMP PATCH body) pairs for the same URL in the transcript."""
    created: dict[str, dict[str, Any]] = {}
    pairs = []
    for step in load(TRANSCRIPT)["steps"]:
        for req in step["requests"]:
            ctype = req.get("contentType") or ""
            if req["method"] == "POST":
                body = json.loads(req["body"])
                created[req["path"] + "/" + body["metadata"]["name"]] = body
            elif req["method"] == "PATCH" and ctype == "application/strategic-merge-patch+json":
                pairs.append((created[req["path"]], json.loads(req["body"])))
    return pairs


@pytest.mark.vectors(TRANSCRIPT)
def test_transcript_patches_turn_first_apply_into_second() -> None:
    """kubectl's 3-way patch applied to what it created must give the new manifest, i.e.
    the object whose last-applied annotation the patch carries."""
    pairs = _smp_requests()
    assert len(pairs) == 2  # the ResourceSlice and the Job changed; the parameters did not
    for live, patch in pairs:
        schema = schema_of(live["apiVersion"], live["kind"])
        out = apply_strategic_merge_patch(live, patch, schema)
        annotation = out["metadata"]["annotations"].pop(
            "kubectl.kubernetes.io/last-applied-configuration")
        wanted = json.loads(annotation)
        del out["metadata"]["annotations"]
        del wanted["metadata"]["annotations"]
        assert out == wanted


@pytest.mark.vectors(TRANSCRIPT)
def test_transcript_job_patch_keeps_containers_others_added() -> None:
    (_, _), (job, patch) = _smp_requests()
    job["spec"]["template"]["spec"]["containers"].append({"name": "sidecar", "image": "s"})
    out = apply_strategic_merge_patch(job, patch, JOB)
    assert out["spec"]["template"]["spec"]["containers"] == [
        {"image": "busybox:2", "name": "c"}, {"name": "sidecar", "image": "s"}]
    # merge patch would have dropped the sidecar: that is why kubectl needs SMP
    merged = apply_merge_patch(job, {k: v for k, v in patch.items() if k != "spec"})
    assert len(merged["spec"]["template"]["spec"]["containers"]) == 2


POD_LIVE: dict[str, Any] = {
    "metadata": {"name": "p", "finalizers": ["a", "b"], "labels": {"x": "1"},
                 "ownerReferences": [{"uid": "u1", "name": "o1", "kind": "Job"}]},
    "spec": {
        "containers": [
            {"name": "a", "image": "i1", "env": [{"name": "E1", "value": "1"}],
             "ports": [{"containerPort": 80}]},
            {"name": "b", "image": "i2"},
        ],
        "tolerations": [{"key": "t1"}],
        "resourceClaims": [{"name": "gpu", "source": {"resourceClaimName": "c1"}}],
    },
    "status": {"conditions": [{"type": "Ready", "status": "False"}]},
}


def smp(patch: dict[str, Any], live: dict[str, Any] | None = None) -> dict[str, Any]:
    """The patch applied to a copy of ``live`` (the function changes the doc it is given)."""
    return apply_strategic_merge_patch(copy_json(live or POD_LIVE), patch, POD)


def test_merge_by_name_keeps_other_elements() -> None:
    out = smp({"spec": {"containers": [{"name": "b", "image": "new"}, {"name": "c"}]}})
    assert [(c["name"], c.get("image")) for c in out["spec"]["containers"]] == [
        ("a", "i1"), ("b", "new"), ("c", None)]


def test_nested_merge_lists() -> None:
    out = smp({"spec": {"containers": [{"name": "a", "env": [{"name": "E2", "value": "2"}],
                                        "ports": [{"containerPort": 80, "name": "http"}]}]}})
    a = out["spec"]["containers"][0]
    # without $setElementOrder, items new to the live list come first (upstream
    # mergeSortedSlice: server-only items only go first where the live order says so)
    assert a["env"] == [{"name": "E2", "value": "2"}, {"name": "E1", "value": "1"}]
    assert a["ports"] == [{"containerPort": 80, "name": "http"}]


def test_atomic_list_is_replaced() -> None:
    out = smp({"spec": {"tolerations": [{"key": "t2"}]}})
    assert out["spec"]["tolerations"] == [{"key": "t2"}]


def test_null_deletes_key() -> None:
    out = smp({"metadata": {"labels": {"x": None, "y": "2"}}, "spec": {"tolerations": None}})
    assert out["metadata"]["labels"] == {"y": "2"}
    assert "tolerations" not in out["spec"]


def test_delete_directive_in_list() -> None:
    out = smp({"spec": {"containers": [{"name": "a", "$patch": "delete"}]}})
    assert [c["name"] for c in out["spec"]["containers"]] == ["b"]


def test_replace_directive_in_list() -> None:
    out = smp({"spec": {"containers": [{"name": "z", "image": "z"}, {"$patch": "replace"}]}})
    assert out["spec"]["containers"] == [{"name": "z", "image": "z"}]


def test_replace_directive_in_map() -> None:
    out = smp({"metadata": {"labels": {"$patch": "replace", "only": "me"}}})
    assert out["metadata"]["labels"] == {"only": "me"}


def test_delete_directive_in_map() -> None:
    out = smp({"status": {"$patch": "delete"}})
    assert out["status"] == {}


def test_set_element_order() -> None:
    out = smp({"spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}],
                        "containers": [{"name": "a", "image": "x"}]}})
    assert [c["name"] for c in out["spec"]["containers"]] == ["b", "a"]
    assert out["spec"]["containers"][1]["image"] == "x"


def test_set_element_order_mismatch_is_400() -> None:
    with pytest.raises(PatchError) as info:
        smp({"spec": {"$setElementOrder/containers": [{"name": "a"}],
                      "containers": [{"name": "b", "image": "x"}]}})
    assert info.value.code == 400
    assert "doesn't match $setElementOrder/ list" in info.value.status["message"]


def test_primitive_merge_list_and_delete_from_primitive_list() -> None:
    out = smp({"metadata": {"finalizers": ["c", "a"]}})
    assert out["metadata"]["finalizers"] == ["c", "a", "b"]
    out = smp({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}})
    assert out["metadata"]["finalizers"] == ["b"]
    out = smp({"metadata": {"$setElementOrder/finalizers": ["b"],
                            "$deleteFromPrimitiveList/finalizers": ["a"]}})
    assert out["metadata"]["finalizers"] == ["b"]


def test_retain_keys() -> None:
    live = {"spec": {"volumes": [{"name": "v", "emptyDir": {}}]}}
    out = smp({"spec": {"volumes": [{"name": "v", "$retainKeys": ["name", "hostPath"],
                                     "hostPath": {"path": "/x"}}]}}, live)
    assert out["spec"]["volumes"] == [{"name": "v", "hostPath": {"path": "/x"}}]
    with pytest.raises(PatchError) as info:
        smp({"spec": {"volumes": [{"name": "v", "$retainKeys": ["name"],
                                   "hostPath": {"path": "/x"}}]}}, live)
    assert info.value.code == 400


def test_owner_references_by_uid_and_conditions_by_type() -> None:
    out = smp({"metadata": {"ownerReferences": [{"uid": "u1", "name": "renamed"},
                                                {"uid": "u2", "name": "o2"}]},
               "status": {"conditions": [{"type": "Ready", "status": "True"}]}})
    assert [o["uid"] for o in out["metadata"]["ownerReferences"]] == ["u1", "u2"]
    assert out["metadata"]["ownerReferences"][0]["kind"] == "Job"
    assert out["status"]["conditions"] == [{"type": "Ready", "status": "True"}]


def test_pod_resource_claims_by_name() -> None:
    out = smp({"spec": {"resourceClaims": [{"name": "net", "source": {
        "resourceClaimTemplateName": "t"}}]}})
    assert [c["name"] for c in out["spec"]["resourceClaims"]] == ["net", "gpu"]


def test_resource_claim_reserved_for_merges_by_uid() -> None:
    live = {"spec": {"resourceClassName": "gpu"}, "status": {
        "driverName": "d", "reservedFor": [{"resource": "pods", "name": "p1", "uid": "1"}],
        "allocation": {"resourceHandles": [{"driverName": "d", "data": "x"}]}}}
    patch = {"status": {"reservedFor": [{"resource": "pods", "name": "p2", "uid": "2"}],
                        "allocation": {"resourceHandles": [{"driverName": "d"}]}}}
    out = apply_strategic_merge_patch(live, patch, RESOURCE_CLAIM)
    assert [r["uid"] for r in out["status"]["reservedFor"]] == ["2", "1"]
    assert out["status"]["allocation"]["resourceHandles"] == [{"driverName": "d"}]
    out = apply_strategic_merge_patch(
        out, {"status": {"reservedFor": [{"uid": "1", "$patch": "delete"}]}}, RESOURCE_CLAIM)
    assert [r["uid"] for r in out["status"]["reservedFor"]] == ["2"]


def test_pod_scheduling_context_status_claims_by_name() -> None:
    live = {"spec": {"potentialNodes": ["a", "b"]}, "status": {"resourceClaims": [
        {"name": "gpu", "unsuitableNodes": ["a"]}]}}
    out = apply_strategic_merge_patch(live, {
        "spec": {"potentialNodes": ["c"]},
        "status": {"resourceClaims": [{"name": "gpu", "unsuitableNodes": ["b"]},
                                      {"name": "net", "unsuitableNodes": []}]}},
        POD_SCHEDULING_CONTEXT)
    assert out["spec"]["potentialNodes"] == ["c"]  # atomic: no patch strategy upstream
    assert out["status"]["resourceClaims"] == [{"name": "gpu", "unsuitableNodes": ["b"]},
                                               {"name": "net", "unsuitableNodes": []}]


def test_node_taints_replaced_addresses_merged() -> None:
    live = {"spec": {"taints": [{"key": "a", "effect": "NoSchedule"}]},
            "status": {"addresses": [{"type": "InternalIP", "address": "10.0.0.1"}]}}
    out = apply_strategic_merge_patch(live, {
        "spec": {"taints": [{"key": "b", "effect": "NoSchedule"}]},
        "status": {"addresses": [{"type": "Hostname", "address": "n1"}]}}, NODE)
    assert out["spec"]["taints"] == [{"key": "b", "effect": "NoSchedule"}]
    assert [a["type"] for a in out["status"]["addresses"]] == ["Hostname", "InternalIP"]


def test_resource_slice_instances_replaced_whole() -> None:
    live = {"namedResources": {"instances": [{"name": "gpu-0"}, {"name": "gpu-1"}]}}
    out = apply_strategic_merge_patch(live, {"namedResources": {"instances": [
        {"name": "gpu-0", "attributes": [{"name": "m", "string": "a100"}]}]}},
        schema_of("resource.k8s.io/v1alpha2", "ResourceSlice"))
    assert out["namedResources"]["instances"] == [
        {"name": "gpu-0", "attributes": [{"name": "m", "string": "a100"}]}]


def test_new_value_has_directives_resolved() -> None:
    out = smp({"spec": {"initContainers": [{"name": "i", "$patch": "delete"}, {"name": "j"}]}})
    assert out["spec"]["initContainers"] == [{"name": "j"}]


@pytest.mark.parametrize(("patch", "code", "message"), [
    ({"spec": {"containers": [{"image": "x"}]}}, 422,
     'map: {"image":"x"} does not contain declared merge key: name'),
    ({"spec": {"containers": [{"name": "a", "$patch": "merge"}]}}, 400,
     "merging lists cannot yet be specified in the patch"),
    ({"spec": {"containers": [{"name": "a", "$patch": "bogus"}]}}, 400, "Unknown patch type"),
    ({"metadata": {"$patch": "bogus"}}, 400, "Unknown patch type: bogus"),
    ({"metadata": {"finalizers": [["x"]]}}, 422, "lists of lists are not supported"),
    ({"metadata": {"$deleteFromPrimitiveList/finalizers": "a"}}, 400,
     "invalid patch format of primitive list"),
    ({"spec": {"$setElementOrder/containers": {"name": "a"}}}, 400,
     "invalid patch format of setElementOrder list"),
])
def test_errors(patch: dict[str, Any], code: int, message: str) -> None:
    with pytest.raises(PatchError) as info:
        smp(patch)
    assert info.value.code == code
    assert message in info.value.status["message"]


def test_body_must_be_object() -> None:
    with pytest.raises(PatchError) as info:
        apply_strategic_merge_patch({}, [{"op": "add"}], POD)
    assert info.value.code == 400
