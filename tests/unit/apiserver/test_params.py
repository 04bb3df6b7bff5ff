"""Query parameters, continue tokens, Status bodies, tables and discovery helpers."""

from __future__ import annotations

import pytest

from kubedra.apiserver import discovery, errors, params, rest, tables
from kubedra.apiserver.registry import Registry


@pytest.mark.parametrize("value", ["1", "t", "T", "TRUE", "true", "True"])
def test_parse_bool_true_like_go(value: str) -> None:
    assert params.parse_bool("watch", value) is True


@pytest.mark.parametrize("value", ["0", "f", "F", "FALSE", "false", "False", "", None])
def test_parse_bool_false_like_go(value: str | None) -> None:
    assert params.parse_bool("watch", value) is False


def test_parse_bool_rejects_other_text() -> None:
    with pytest.raises(errors.ApiError) as info:
        params.parse_bool("watch", "yes")
    assert info.value.code == 400


def test_list_options_validation_collects_every_cause() -> None:
    with pytest.raises(errors.ApiError) as info:
        params.parse_list_options({"resourceVersionMatch": "Exact", "watch": "true"})
    status = info.value.status
    assert status["code"] == 422
    assert status["reason"] == "Invalid"
    fields = [c["field"] for c in status["details"]["causes"]]
    assert fields == ["resourceVersionMatch", "resourceVersionMatch"]
    assert status["message"].startswith('ListOptions.meta.k8s.io "" is invalid: [')


def test_list_options_unsupported_match() -> None:
    with pytest.raises(errors.ApiError) as info:
        params.parse_list_options({"resourceVersionMatch": "Newest", "resourceVersion": "1"})
    cause = info.value.status["details"]["causes"][0]
    assert cause["reason"] == "FieldValueNotSupported"
    assert cause["message"] == (
        'Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""'
    )


def test_list_options_parse() -> None:
    o = params.parse_list_options({"watch": "True", "timeoutSeconds": "3", "limit": "5",
                                   "allowWatchBookmarks": "1"})
    assert o.watch and o.allow_bookmarks and o.timeout_seconds == 3 and o.limit == 5
    with pytest.raises(errors.ApiError):
        params.parse_list_options({"limit": "x"})


def test_continue_token_round_trip_and_garbage() -> None:
    token = rest.encode_continue(42, "/registry/core/pods/ns/p7", "/registry/core/pods/")
    assert rest.decode_continue(token, "/registry/core/pods/") == (42, "/registry/core/pods/ns/p7")
    for bad in ("!!!", "eyJ2IjoxfQ", token[:-3]):
        with pytest.raises(errors.ApiError) as info:
            rest.decode_continue(bad, "/registry/core/pods/")
        assert info.value.code == 400


def test_not_found_and_conflict_status_shapes() -> None:
    nf = errors.not_found("resourceslices", "resource.k8s.io", "s1").status
    assert nf["message"] == 'resourceslices.resource.k8s.io "s1" not found'
    assert nf["details"] == {"name": "s1", "group": "resource.k8s.io", "kind": "resourceslices"}
    c = errors.conflict("jobs", "batch", "j", errors.MODIFIED).status
    assert c["message"] == (
        'Operation cannot be fulfilled on jobs.batch "j": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )
    assert c["code"] == 409 and c["reason"] == "Conflict"


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(-5, "<invalid>"), (-1, "0s"), (5, "5s"), (119, "119s"), (120, "2m"), (125, "2m5s"),
     (600, "10m"), (3 * 3600, "3h"), (3 * 3600 + 60, "3h1m"), (10 * 3600, "10h"),
     (3 * 86400, "3d"), (3 * 86400 + 3600, "3d1h"), (30 * 86400, "30d"),
     (800 * 86400, "2y70d"), (3000 * 86400, "8y")],
)
def test_human_duration(seconds: int, text: str) -> None:
    assert tables.human_duration(seconds) == text


def test_table_columns_match_rows() -> None:
    registry = Registry()
    for res in registry:
        tbl = tables.table(res, [{"metadata": {"name": "x", "creationTimestamp":
                                               "2024-01-01T00:00:00Z"}}])
        assert len(tbl["rows"][0]["cells"]) == len(tbl["columnDefinitions"]), res.kind.kind
        assert tbl["rows"][0]["object"]["kind"] == "PartialObjectMetadata"


def test_cells_kubedra_keeps_no_data_for_print_none() -> None:
    """Pod readiness gates and node roles other than labels (docs/deviations.md)."""
    registry = {res.kind.kind: res for res in Registry()}
    made = "2024-01-01T00:00:00Z"

    def cells(kind: str, obj: dict[str, object]) -> dict[str, object]:
        tbl = tables.table(registry[kind], [obj])
        return dict(zip([c["name"] for c in tbl["columnDefinitions"]],
                        tbl["rows"][0]["cells"], strict=True))

    pod = {"metadata": {"name": "p", "creationTimestamp": made},
           "spec": {"readinessGates": [{"conditionType": "example.com/ready"}]}}
    assert cells("Pod", pod)["Readiness Gates"] == "<none>"
    node = {"metadata": {"name": "n", "creationTimestamp": made,
                         "labels": {"node-role.kubernetes.io/gpu": ""}}}
    assert cells("Node", node)["Roles"] == "gpu"
    node["metadata"]["labels"] = {"kubernetes.io/role": "gpu"}  # type: ignore[index]
    assert cells("Node", node)["Roles"] == "<none>"


def test_aggregated_discovery_accept_parsing() -> None:
    kubectl = ("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
               "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
               "application/json")
    assert discovery.aggregated_version(kubectl) == "v2"
    assert discovery.aggregated_version("application/json") is None
    assert discovery.aggregated_version("") is None


def test_resource_lists_cover_every_kind_and_subresource() -> None:
    registry = Registry()
    core = discovery.resource_list(registry, "", "v1")
    assert core is not None
    names = {r["name"] for r in core["resources"]}
    assert {"pods", "pods/status", "pods/binding", "namespaces/finalize", "nodes"} <= names
    res = discovery.resource_list(registry, "resource.k8s.io", "v1alpha2")
    assert res is not None
    assert {r["name"] for r in res["resources"]} >= {"resourceslices", "resourceclaims/status"}
    assert discovery.resource_list(registry, "nope", "v1") is None
