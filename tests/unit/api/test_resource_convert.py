"""Conversion between the served devices-model versions and the hub (spec §6), and field paths
mapped back to the version the client sent."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubedra.api import codec
from kubedra.api.resource import convert, v1, v1beta1
from tests.unit.api.resource_v1_samples import V1, V1BETA1, by_kind, documents

_BETA_MODELS: dict[str, type[Any]] = {
    "ResourceClaim": v1beta1.ResourceClaim,
    "ResourceClaimTemplate": v1beta1.ResourceClaimTemplate,
    "ResourceSlice": v1beta1.ResourceSlice,
    "DeviceClass": v1.DeviceClass,
}
_HUB_MODELS: dict[str, type[Any]] = {
    "ResourceClaim": v1.ResourceClaim,
    "ResourceClaimTemplate": v1.ResourceClaimTemplate,
    "ResourceSlice": v1.ResourceSlice,
    "DeviceClass": v1.DeviceClass,
}


def _wire(obj: Any) -> Any:
    return json.loads(codec.encode(obj))


def _beta(raw: dict[str, Any]) -> Any:
    return codec.decode(raw, _BETA_MODELS[raw["kind"]])


def _hub(raw: dict[str, Any]) -> Any:
    return codec.decode(raw, _HUB_MODELS[raw["kind"]])


def _beta_slice(spec: dict[str, Any]) -> v1beta1.ResourceSlice:
    return codec.decode({"apiVersion": v1beta1.API_VERSION, "kind": "ResourceSlice",
                         "spec": spec}, v1beta1.ResourceSlice)


def _hub_slice(spec: dict[str, Any]) -> v1.ResourceSlice:
    return codec.decode({"apiVersion": v1.API_VERSION, "kind": "ResourceSlice",
                         "spec": spec}, v1.ResourceSlice)


def _beta_claim(*requests: dict[str, Any]) -> v1beta1.ResourceClaim:
    return codec.decode({"apiVersion": v1beta1.API_VERSION, "kind": "ResourceClaim",
                         "spec": {"devices": {"requests": list(requests)}}},
                        v1beta1.ResourceClaim)


def _hub_claim(*requests: dict[str, Any]) -> v1.ResourceClaim:
    return codec.decode({"apiVersion": v1.API_VERSION, "kind": "ResourceClaim",
                         "spec": {"devices": {"requests": list(requests)}}}, v1.ResourceClaim)


# --- representative objects ------------------------------------------------------------------


def test_v1beta1_claim_to_hub() -> None:
    hub = convert.v1beta1_to_hub(_beta(by_kind(V1BETA1, "ResourceClaim")))
    assert isinstance(hub, v1.ResourceClaim)
    wire = _wire(hub)
    assert wire["apiVersion"] == "resource.k8s.io/v1"
    requests = wire["spec"]["devices"]["requests"]
    assert requests[0] == {"name": "gpu", "exactly": {
        "deviceClassName": "example-device-class",
        "selectors": [{"cel": {"expression":
                               'device.attributes["driver.example.com"].model == "a100"'}}],
        "allocationMode": "ExactCount", "count": 2, "adminAccess": True,
        "tolerations": [{"key": "example.com/unhealthy", "operator": "Exists",
                         "effect": "NoExecute"}],
        "capacity": {"requests": {"memory": "10Gi"}}}}
    # deviceClassName "" and nothing else exact: only firstAvailable
    assert requests[1] == {"name": "nic", "firstAvailable": [
        {"name": "fast", "deviceClassName": "fast-nic", "allocationMode": "ExactCount",
         "count": 1},
        {"name": "any", "deviceClassName": "nic", "allocationMode": "All"}]}
    raw = by_kind(V1BETA1, "ResourceClaim")
    assert wire["status"] == raw["status"]
    assert wire["spec"]["devices"]["constraints"] == raw["spec"]["devices"]["constraints"]
    assert wire["metadata"] == raw["metadata"]


def test_v1beta1_slice_to_hub() -> None:
    hub = convert.v1beta1_to_hub(_beta(by_kind(V1BETA1, "ResourceSlice")))
    assert isinstance(hub, v1.ResourceSlice)
    assert _wire(hub)["spec"]["devices"] == [
        {"name": "gpu-0",
         "attributes": {"type": {"string": "gpu"}, "driverVersion": {"version": "1.2.3"}},
         "capacity": {"memory": {"value": "80Gi"}},
         "taints": [{"key": "example.com/unhealthy", "effect": "NoSchedule",
                     "timeAdded": "2025-08-27T09:00:00Z"}]},
        {"name": "gpu-1"}]
    assert hub.spec.node_name == "worker-1"


def test_v1_slice_from_hub_nests_every_device_under_basic() -> None:
    hub = _hub(by_kind(V1, "ResourceSlice"))
    beta = convert.v1beta1_from_hub(hub)
    assert isinstance(beta, v1beta1.ResourceSlice)
    wire = _wire(beta)
    assert wire["apiVersion"] == "resource.k8s.io/v1beta1"
    device = by_kind(V1, "ResourceSlice")["spec"]["devices"][0]
    assert wire["spec"]["devices"] == [
        {"name": "gpu-0", "basic": {k: v for k, v in device.items() if k != "name"}}]
    fabric = _wire(convert.v1beta1_from_hub(_hub(
        next(d for d in documents(V1) if d["metadata"]["name"] == "fabric"))))
    assert fabric["spec"]["devices"][0] == {"name": "link-0", "basic": {"nodeName": "worker-1"}}
    assert fabric["spec"]["devices"][2] == {"name": "link-2", "basic": {"allNodes": True}}


@pytest.mark.parametrize("raw", documents(V1), ids=lambda r: f"{r['kind']}/{r['metadata']['name']}")
def test_v1_to_v1beta1_to_v1_keeps_representative_objects(raw: dict[str, Any]) -> None:
    hub = _hub(raw)
    back = convert.v1beta1_to_hub(convert.v1beta1_from_hub(hub))
    assert back == hub
    assert type(back) is type(hub)


@pytest.mark.parametrize("raw", documents(V1BETA1),
                         ids=lambda r: f"{r['kind']}/{r['metadata']['name']}")
def test_v1beta1_to_v1_to_v1beta1_keeps_representative_objects(raw: dict[str, Any]) -> None:
    beta = _beta(raw)
    back = convert.v1beta1_from_hub(convert.v1beta1_to_hub(beta))
    assert back == beta
    assert type(back) is type(beta)


# --- edges ---------------------------------------------------------------------------------


def test_device_without_basic_comes_back_with_an_empty_one() -> None:
    beta = _beta_slice({"allNodes": True, "devices": [{"name": "a"}, {"name": "b", "basic": {}}]})
    hub = convert.v1beta1_to_hub(beta)
    assert hub.spec.devices == [v1.Device(name="a"), v1.Device(name="b")]
    back = convert.v1beta1_from_hub(hub)
    assert _wire(back)["spec"]["devices"] == [{"name": "a", "basic": {}},
                                              {"name": "b", "basic": {}}]


@pytest.mark.parametrize("beta_spec,hub_node,hub_all", [
    ({"nodeName": ""}, None, None),
    ({"nodeName": "n1"}, "n1", None),
    ({"allNodes": False}, None, None),
    ({"allNodes": True}, None, True),
    ({}, None, None),
])
def test_v1beta1_node_fields_become_pointers(beta_spec: dict[str, Any], hub_node: str | None,
                                            hub_all: bool | None) -> None:
    hub = convert.v1beta1_to_hub(_beta_slice(beta_spec))
    assert (hub.spec.node_name, hub.spec.all_nodes) == (hub_node, hub_all)
    back = convert.v1beta1_from_hub(hub)
    assert (back.spec.node_name, back.spec.all_nodes) == (
        beta_spec.get("nodeName", ""), beta_spec.get("allNodes", False))


@pytest.mark.parametrize("hub_spec,beta_node,beta_all", [
    ({"nodeName": ""}, "", False),       # invalid in v1; v1beta1 cannot say it
    ({"nodeName": "n1"}, "n1", False),
    ({"allNodes": False}, "", False),    # invalid in v1; likewise
    ({"allNodes": True}, "", True),
    ({}, "", False),
])
def test_v1_node_pointers_flatten(hub_spec: dict[str, Any], beta_node: str,
                                  beta_all: bool) -> None:
    hub = _hub_slice(hub_spec)
    beta = convert.v1beta1_from_hub(hub)
    assert (beta.spec.node_name, beta.spec.all_nodes) == (beta_node, beta_all)
    again = convert.v1beta1_to_hub(beta)
    assert again.spec.node_name == (hub.spec.node_name or None)
    assert again.spec.all_nodes == (True if hub.spec.all_nodes else None)


def test_both_exactly_and_first_available_survive_both_ways() -> None:
    # v1beta1: exact fields beside firstAvailable; each alone is enough to build exactly
    sub = {"name": "s", "deviceClassName": "c"}
    for exact in ({"count": 2}, {"allocationMode": "All"}, {"selectors": []},
                  {"adminAccess": False}, {"tolerations": []}, {"capacity": {}},
                  {"deviceClassName": "c"}):
        beta = _beta_claim({"name": "r", "firstAvailable": [sub], **exact})
        hub = convert.v1beta1_to_hub(beta)
        req = hub.spec.devices.requests[0]
        assert req.exactly is not None and req.first_available is not None, exact
        assert convert.v1beta1_from_hub(hub) == beta
    hub = _hub_claim({"name": "r", "exactly": {"deviceClassName": "c", "count": 3},
                      "firstAvailable": [sub]})
    beta = convert.v1beta1_from_hub(hub)
    assert _wire(beta)["spec"]["devices"]["requests"] == [
        {"name": "r", "deviceClassName": "c", "count": 3, "firstAvailable": [sub]}]
    assert convert.v1beta1_to_hub(beta) == hub


def test_empty_exactly_does_not_survive_v1beta1() -> None:
    # upstream's rule: an exactly with nothing set is indistinguishable from none in v1beta1
    hub = _hub_claim({"name": "r", "exactly": {}})
    back = convert.v1beta1_to_hub(convert.v1beta1_from_hub(hub))
    assert back.spec.devices.requests == [v1.DeviceRequest(name="r")]


def test_claim_template_and_lists() -> None:
    beta = _beta(by_kind(V1BETA1, "ResourceClaimTemplate"))
    hub = convert.v1beta1_to_hub(beta)
    assert isinstance(hub, v1.ResourceClaimTemplate)
    exactly = hub.spec.spec.devices.requests[0].exactly
    assert exactly == v1.ExactDeviceRequest(device_class_name="example-device-class",
                                            allocation_mode="ExactCount", count=1)
    hub_list = v1.ResourceClaimTemplateList(api_version=v1.API_VERSION,
                                            kind="ResourceClaimTemplateList", items=[hub])
    beta_list = convert.v1beta1_from_hub(hub_list)
    assert isinstance(beta_list, v1beta1.ResourceClaimTemplateList)
    assert beta_list.api_version == v1beta1.API_VERSION and beta_list.items == [beta]
    assert convert.v1beta1_to_hub(beta_list) == hub_list


def test_device_class_is_one_class_in_every_version() -> None:
    cls = _hub(by_kind(V1, "DeviceClass"))
    beta = convert.v1beta1_from_hub(cls)
    assert type(beta) is v1.DeviceClass and beta.api_version == v1beta1.API_VERSION
    assert beta.spec == cls.spec
    assert convert.v1beta1_to_hub(beta) == cls


def test_unset_api_version_stays_unset() -> None:
    beta = v1beta1.ResourceSlice()
    assert convert.v1beta1_to_hub(beta).api_version == ""
    assert convert.v1beta1_from_hub(v1.ResourceClaim()).api_version == ""


def test_other_types_are_refused() -> None:
    with pytest.raises(TypeError, match="no v1beta1 conversion for ResourcePool"):
        convert.v1beta1_to_hub(v1.ResourcePool())


def test_v1_and_v1beta2_are_the_identity() -> None:
    hub = _hub(by_kind(V1, "ResourceClaim"))
    for version in ("v1", "v1beta2"):
        conv = convert.CONVERSIONS[version]
        assert conv.to_hub(hub) is hub and conv.from_hub(hub) is hub
        assert conv.field_path("spec.devices.requests[0].exactly.count") == \
            "spec.devices.requests[0].exactly.count"
    assert convert.CONVERSIONS["v1beta1"] is convert.V1BETA1


# --- field paths ---------------------------------------------------------------------------


@pytest.mark.parametrize("hub,client", [
    ("spec.devices.requests[0].exactly.count", "spec.devices.requests[0].count"),
    ("spec.devices.requests[12].exactly.deviceClassName",
     "spec.devices.requests[12].deviceClassName"),
    ("spec.devices.requests[0].exactly.selectors[1].cel.expression",
     "spec.devices.requests[0].selectors[1].cel.expression"),
    ("spec.devices.requests[0].exactly.tolerations[0].operator",
     "spec.devices.requests[0].tolerations[0].operator"),
    ("spec.devices.requests[0].exactly", "spec.devices.requests[0]"),
    ("spec.spec.devices.requests[1].exactly.allocationMode",
     "spec.spec.devices.requests[1].allocationMode"),
    ("spec.devices[2].attributes[dra.example.com/model].string",
     "spec.devices[2].basic.attributes[dra.example.com/model].string"),
    ("spec.devices[2].attributes", "spec.devices[2].basic.attributes"),
    ("spec.devices[0].capacity[memory].requestPolicy.default",
     "spec.devices[0].basic.capacity[memory].requestPolicy.default"),
    ("spec.devices[3].taints[0].effect", "spec.devices[3].basic.taints[0].effect"),
    ("spec.devices[3].consumesCounters[0].counterSet",
     "spec.devices[3].basic.consumesCounters[0].counterSet"),
    ("spec.devices[1].nodeName", "spec.devices[1].basic.nodeName"),
    ("spec.devices[1].allowMultipleAllocations",
     "spec.devices[1].basic.allowMultipleAllocations"),
    # the same in both versions
    ("spec.devices[2].name", "spec.devices[2].name"),
    ("spec.devices[2]", "spec.devices[2]"),
    ("spec.devices", "spec.devices"),
    ("spec.nodeName", "spec.nodeName"),
    ("spec.allNodes", "spec.allNodes"),
    ("spec.devices.requests[0].firstAvailable[1].count",
     "spec.devices.requests[0].firstAvailable[1].count"),
    ("spec.devices.requests[0].name", "spec.devices.requests[0].name"),
    ("spec.devices.requests[0].adminAccess", "spec.devices.requests[0].adminAccess"),
    ("spec.devices.constraints[0].matchAttribute", "spec.devices.constraints[0].matchAttribute"),
    ("status.allocation.devices.results[0].driver", "status.allocation.devices.results[0].driver"),
    ("metadata.name", "metadata.name"),
    # a key that merely starts like a field, and a map key holding "exactly"
    ("spec.devices[2].attributesX", "spec.devices[2].attributesX"),
    ("spec.devices[0].attributes[exactly].int", "spec.devices[0].basic.attributes[exactly].int"),
])
def test_field_paths_map_back_to_v1beta1(hub: str, client: str) -> None:
    assert convert.V1BETA1.field_path(hub) == client
