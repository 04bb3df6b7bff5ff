"""Server-side apply: create, update, conflicts, force, pruning, kubectl's migration from
client-side apply, and ownership recorded for ordinary updates."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubedra.apiserver.errors import ApiError
from kubedra.apiserver.patch import (
    LAST_APPLIED,
    PatchError,
    apply_server_side,
    conflict_error,
    update_managed_fields,
)
from kubedra.apiserver.patch.fieldset import from_fields_v1, path_string, to_fields_v1
from tests.vectors import load

NOW = "2026-11-29T12:00:00Z"


def job(image: str = "busybox", managed_by: str = "example.com/mueue") -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "j1", "namespace": "default"},
            "spec": {"managedBy": managed_by, "template": {"spec": {
                "restartPolicy": "Never", "containers": [{"name": "c", "image": image}]}}}}


def managers(obj: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(e["manager"], e["operation"]): e for e in obj["metadata"]["managedFields"]}


def test_create_records_apply_manager_in_fieldsv1_format() -> None:
    obj, conflicts = apply_server_side(None, job(), "kubectl", False, now=NOW)
    assert conflicts == []
    assert obj["spec"]["managedBy"] == "example.com/mueue"
    entry = managers(obj)["kubectl", "Apply"]
    assert entry == {
        "manager": "kubectl", "operation": "Apply", "apiVersion": "batch/v1", "time": NOW,
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:spec": {"f:managedBy": {}, "f:template": {"f:spec": {
            "f:containers": {'k:{"name":"c"}': {".": {}, "f:image": {}, "f:name": {}}},
            "f:restartPolicy": {}}}}}}


def test_reapply_by_same_manager_changes_and_prunes() -> None:
    obj, _ = apply_server_side(None, job(), "kubectl", False, now=NOW)
    config = job("busybox:2")
    del config["spec"]["managedBy"]
    obj, conflicts = apply_server_side(obj, config, "kubectl", False, now=NOW)
    assert conflicts == []
    assert obj["spec"]["template"]["spec"]["containers"][0]["image"] == "busybox:2"
    assert "managedBy" not in obj["spec"]  # no longer applied, owned by nobody else: removed
    assert "f:managedBy" not in managers(obj)["kubectl", "Apply"]["fieldsV1"]["f:spec"]


def test_conflict_with_update_manager() -> None:
    live = update_managed_fields(None, job(), "kubectl-client-side-apply", now=NOW)
    obj, conflicts = apply_server_side(live, job(managed_by="example.com/other"), "ci", False)
    assert obj == live
    assert len(conflicts) == 1
    err = conflict_error(conflicts)
    assert err.code == 409
    assert err.status["reason"] == "Conflict"
    assert err.status["message"] == (
        'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using '
        "batch/v1: .spec.managedBy")
    assert err.status["details"]["causes"] == [{
        "reason": "FieldManagerConflict",
        "message": 'conflict with "kubectl-client-side-apply" using batch/v1',
        "field": ".spec.managedBy"}]


def test_same_value_is_shared_not_a_conflict() -> None:
    live = update_managed_fields(None, job(), "creator", now=NOW)
    obj, conflicts = apply_server_side(live, job(), "ci", False, now=NOW)
    assert conflicts == []
    assert set(managers(obj)) == {("ci", "Apply"), ("creator", "Update")}
    assert "f:managedBy" in managers(obj)["creator", "Update"]["fieldsV1"]["f:spec"]


def test_force_takes_ownership() -> None:
    live = update_managed_fields(None, job(), "creator", now=NOW)
    obj, conflicts = apply_server_side(live, job("busybox:3", "x.io/y"), "ci", True, now=NOW)
    assert conflicts == []
    assert obj["spec"]["managedBy"] == "x.io/y"
    creator = managers(obj)["creator", "Update"]["fieldsV1"]
    assert "f:managedBy" not in creator["f:spec"]
    assert creator["f:spec"]["f:template"]["f:spec"]["f:containers"][
        'k:{"name":"c"}'] == {".": {}, "f:name": {}}


def test_two_appliers_conflict_and_multi_conflict_message() -> None:
    obj, _ = apply_server_side(None, job(), "a", False, now=NOW)
    _, conflicts = apply_server_side(obj, job("busybox:9", "x.io/z"), "b", False)
    message = conflict_error(conflicts).status["message"]
    assert message == ('Apply failed with 2 conflicts: conflicts with "a":\n'
                       "- .spec.managedBy\n"
                       '- .spec.template.spec.containers[name="c"].image')


def test_pruned_field_kept_when_another_manager_owns_it() -> None:
    obj, _ = apply_server_side(None, job(), "a", False, now=NOW)
    obj, _ = apply_server_side(obj, job(), "b", False, now=NOW)
    config = job()
    del config["spec"]["managedBy"]
    obj, _ = apply_server_side(obj, config, "a", False, now=NOW)
    assert obj["spec"]["managedBy"] == "example.com/mueue"


def test_wrong_version_is_400() -> None:
    bad = job()
    bad["apiVersion"] = "batch/v2"
    with pytest.raises(PatchError) as info:
        apply_server_side(None, bad, "m", False, api_version="batch/v1")
    assert info.value.code == 400
    assert info.value.status["message"] == (
        "Incorrect version specified in apply patch. Specified patch version: batch/v2, "
        "expected: batch/v1")


def test_object_without_managed_fields_belongs_to_before_first_apply() -> None:
    _, conflicts = apply_server_side(job(), job(managed_by="x.io/q"), "m", False)
    assert [c.manager.manager for c in conflicts] == ["before-first-apply"]


def test_update_managed_fields_moves_changed_fields() -> None:
    created = update_managed_fields(None, job(), "creator", now=NOW)
    entry = managers(created)["creator", "Update"]
    assert entry["apiVersion"] == "batch/v1"
    changed = json.loads(json.dumps(created))
    changed["spec"]["managedBy"] = "x.io/new"
    changed["metadata"]["labels"] = {"a": "b"}
    out = update_managed_fields(created, changed, "kubectl-label", now=NOW)
    label = managers(out)["kubectl-label", "Update"]["fieldsV1"]
    assert label == {"f:metadata": {"f:labels": {".": {}, "f:a": {}}},
                     "f:spec": {"f:managedBy": {}}}
    assert "f:managedBy" not in managers(out)["creator", "Update"]["fieldsV1"]["f:spec"]


def test_reset_fields_are_not_owned() -> None:
    obj = job()
    obj["status"] = {"active": 1}
    out = update_managed_fields(None, obj, "m", now=NOW, reset_fields=[("f:status",)])
    assert "f:status" not in managers(out)["m", "Update"]["fieldsV1"]


def test_fields_v1_round_trip_and_path_strings() -> None:
    paths = {("f:spec", "f:containers", 'k:{"name":"c"}'),
             ("f:spec", "f:containers", 'k:{"name":"c"}', "f:image"),
             ("f:spec", "f:potentialNodes", 'v:"n1"')}
    assert from_fields_v1(to_fields_v1(paths)) == paths
    assert path_string(('f:spec', 'f:potentialNodes', 'v:"n1"')) == '.spec.potentialNodes[="n1"]'
    assert path_string(("f:spec", 'k:{"containerPort":80,"protocol":"TCP"}')) == (
        '.spec[containerPort=80,protocol="TCP"]')


@pytest.mark.vectors("kubectl_1.30_request_transcript.json")
def test_kubectl_transcript_flow() -> None:
    """Client-side apply (create + SMP update), then ``apply --server-side`` with a changed
    image (conflicts owned by kubectl-client-side-apply are allowed because the
    last-applied annotation covers them), then the ``kubectl-last-applied`` follow-up.
    kubectl sends back the annotation it read from the first apply's answer; the recording
    server did not refresh it, so the test substitutes what this server answered."""
    steps = load("kubectl_1.30_request_transcript.json")["steps"]
    posted = [json.loads(r["body"]) for r in steps[0]["requests"] if r["method"] == "POST"]
    applies = [(r["query"]["fieldManager"], json.loads(r["body"]))
               for r in steps[2]["requests"] if r["method"] == "PATCH"]
    assert len(posted) == 3 and len(applies) == 6
    live = {obj["kind"]: update_managed_fields(None, obj, "kubectl-client-side-apply", now=NOW)
            for obj in posted}
    for manager, body in applies:
        kind = body["kind"]
        if manager == "kubectl-last-applied":
            body["metadata"]["annotations"][LAST_APPLIED] = (
                live[kind]["metadata"]["annotations"][LAST_APPLIED])
        new, conflicts = apply_server_side(live[kind], body, manager, False, now=NOW)
        assert conflicts == [], (manager, kind)
        live[kind] = new
    jobs = live["Job"]
    assert jobs["spec"]["managedBy"] == "example.com/other"
    assert jobs["spec"]["template"]["spec"]["containers"] == [{"image": "busybox", "name": "c"}]
    last = json.loads(jobs["metadata"]["annotations"][LAST_APPLIED])
    # the server keeps the annotation in step with what kubectl applied server-side
    assert last == applies[4][1]
    assert set(managers(jobs)) == {("kubectl", "Apply"), ("kubectl-last-applied", "Apply"),
                                   ("kubectl-client-side-apply", "Update")}
    slice_ = live["ResourceSlice"]
    assert [i["name"] for i in slice_["namedResources"]["instances"]] == ["gpu-0"]


def test_conflict_error_is_api_error() -> None:
    assert isinstance(conflict_error([]), ApiError)


def test_pruned_list_item_kept_while_another_manager_owns_a_field_in_it() -> None:
    obj, _ = apply_server_side(None, job(), "a", False, now=NOW)
    edited = json.loads(json.dumps(obj))
    edited["spec"]["template"]["spec"]["containers"][0]["image"] = "busybox:edited"
    obj = update_managed_fields(obj, edited, "editor", now=NOW)
    config = job()
    config["spec"]["template"]["spec"]["containers"] = [{"name": "d", "image": "x"}]
    obj, conflicts = apply_server_side(obj, config, "a", False, now=NOW)
    assert conflicts == []
    names = [c["name"] for c in obj["spec"]["template"]["spec"]["containers"]]
    assert names == ["c", "d"]  # "c" survives: "editor" still owns its image
