"""The official client of 1.34, ``kubernetes==34.1.0`` (run in its own environment, see
:mod:`tests.e2e.official_client`), against ``kubedra apiserver --emulated-version 1.34``:
CRUD of the four ``resource.k8s.io/v1`` kinds, lists with the ResourceSlice field
selectors, and a watch resumed from the last resourceVersion it saw."""

from __future__ import annotations

import uuid

from tests.e2e.official_client import OfficialClient

_PRELUDE = """
import json, sys
from kubernetes import client, config, watch
api_client = config.new_client_from_config(config_file=sys.argv[1])
api = client.ResourceV1Api(api_client)
core = client.CoreV1Api(api_client)
args = sys.argv[2:]
"""

_CRUD = _PRELUDE + """
suffix, = args
ns = "c34-" + suffix
core.create_namespace({"metadata": {"name": ns}})
out = {}
cls = api.create_device_class(client.V1DeviceClass(
    metadata=client.V1ObjectMeta(name="cls-" + suffix),
    spec=client.V1DeviceClassSpec(selectors=[client.V1DeviceSelector(
        cel=client.V1CELDeviceSelector(expression='device.driver == "d.example.com"'))])))
out["class_generation"] = cls.metadata.generation
cls.spec.selectors[0].cel.expression = "true"
cls = api.replace_device_class("cls-" + suffix, cls)
out["class_generation_after_spec_change"] = cls.metadata.generation
claim = api.create_namespaced_resource_claim(ns, client.ResourceV1ResourceClaim(
    metadata=client.V1ObjectMeta(name="claim"),
    spec=client.V1ResourceClaimSpec(devices=client.V1DeviceClaim(requests=[
        client.V1DeviceRequest(name="r", exactly=client.V1ExactDeviceRequest(
            device_class_name="cls-" + suffix))]))))
out["claim_count"] = claim.spec.devices.requests[0].exactly.count
out["claim_mode"] = claim.spec.devices.requests[0].exactly.allocation_mode
claim = api.patch_namespaced_resource_claim(
    "claim", ns, {"metadata": {"labels": {"a": "b"}}})
out["claim_labels"] = claim.metadata.labels
claim.status = client.V1ResourceClaimStatus(allocation=client.V1AllocationResult(
    devices=client.V1DeviceAllocationResult(results=[client.V1DeviceRequestAllocationResult(
        request="r", driver="d.example.com", pool="p", device="dev-0")])))
claim = api.replace_namespaced_resource_claim_status("claim", ns, claim)
out["allocated_device"] = claim.status.allocation.devices.results[0].device
tpl = api.create_namespaced_resource_claim_template(ns, client.V1ResourceClaimTemplate(
    metadata=client.V1ObjectMeta(name="tpl"),
    spec=client.V1ResourceClaimTemplateSpec(spec=client.V1ResourceClaimSpec(
        devices=client.V1DeviceClaim(requests=[client.V1DeviceRequest(
            name="r", exactly=client.V1ExactDeviceRequest(
                device_class_name="cls-" + suffix))])))))
out["template_names"] = [t.metadata.name for t in
                         api.list_namespaced_resource_claim_template(ns).items]
api.delete_namespaced_resource_claim_template("tpl", ns)
api.delete_namespaced_resource_claim("claim", ns)
api.delete_device_class("cls-" + suffix)
out["left"] = [len(api.list_namespaced_resource_claim(ns).items),
               len(api.list_namespaced_resource_claim_template(ns).items)]
print(json.dumps(out))
"""

_SELECT = _PRELUDE + """
suffix, = args
def slice_(name, node, driver):
    return client.V1ResourceSlice(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1ResourceSliceSpec(
            driver=driver, node_name=node,
            pool=client.V1ResourcePool(name=name, generation=1, resource_slice_count=1),
            devices=[client.V1Device(name="dev-0", attributes={
                "model": client.V1DeviceAttribute(string="x")})]))
for name, node, driver in (("a", "node-a", "one.example.com"),
                           ("b", "node-a", "two.example.com"),
                           ("c", "node-b", "one.example.com")):
    api.create_resource_slice(slice_(name + "-" + suffix, node + "-" + suffix, driver))
def names(selector):
    items = api.list_resource_slice(field_selector=selector).items
    return sorted(s.metadata.name.split("-")[0] for s in items)
print(json.dumps({
    "node": names("spec.nodeName=node-a-" + suffix),
    "node_and_driver": names(
        "spec.nodeName=node-a-" + suffix + ",spec.driver=one.example.com"),
    "driver": [n for n in names("spec.driver=one.example.com")],
    "name": names("metadata.name=c-" + suffix),
}))
"""

_WATCH = _PRELUDE + """
suffix, = args
ns = "w34-" + suffix
core.create_namespace({"metadata": {"name": ns}})
def claim(name):
    return client.ResourceV1ResourceClaim(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1ResourceClaimSpec(devices=client.V1DeviceClaim(requests=[
            client.V1DeviceRequest(name="r", exactly=client.V1ExactDeviceRequest(
                device_class_name="c"))])))
api.create_namespaced_resource_claim(ns, claim("first"))
rv = api.list_namespaced_resource_claim(ns).metadata.resource_version
api.create_namespaced_resource_claim(ns, claim("second"))
# 34.1.0 cannot deserialize a ResourceClaim watch event (it looks for a class
# V1ResourceClaim; the v1 model is ResourceV1ResourceClaim): read the events as JSON
seen = []
w = watch.Watch()
for ev in w.stream(api.list_namespaced_resource_claim, ns, resource_version=rv,
                   timeout_seconds=20, deserialize=False):
    seen.append([ev["type"], ev["object"]["metadata"]["name"]])
    last = ev["object"]["metadata"]["resourceVersion"]
    w.stop()
api.delete_namespaced_resource_claim("first", ns)
resumed = []
w = watch.Watch()
for ev in w.stream(api.list_namespaced_resource_claim, ns, resource_version=last,
                   timeout_seconds=20, deserialize=False):
    resumed.append([ev["type"], ev["object"]["metadata"]["name"]])
    w.stop()
# typed events of another kind, with a field selector
slices = []
w = watch.Watch()
api.create_resource_slice(client.V1ResourceSlice(
    metadata=client.V1ObjectMeta(name="w-" + suffix),
    spec=client.V1ResourceSliceSpec(driver="d.example.com", all_nodes=True,
        pool=client.V1ResourcePool(name="p", generation=1, resource_slice_count=1),
        devices=[])))
for ev in w.stream(api.list_resource_slice, timeout_seconds=20,
                   field_selector="metadata.name=w-" + suffix):
    slices.append([ev["type"], ev["object"].metadata.name, ev["object"].spec.all_nodes])
    w.stop()
print(json.dumps({"seen": seen, "resumed": resumed, "slices": slices}))
"""


def test_crud_of_the_four_kinds(client_134: OfficialClient) -> None:
    out = client_134.run(_CRUD, uuid.uuid4().hex[:6])
    assert out["class_generation"] == 1
    assert out["class_generation_after_spec_change"] == 2
    assert (out["claim_mode"], out["claim_count"]) == ("ExactCount", 1)
    assert out["claim_labels"] == {"a": "b"}
    assert out["allocated_device"] == "dev-0"
    assert out["template_names"] == ["tpl"]
    assert out["left"] == [0, 0]


def test_list_resource_slices_with_field_selectors(client_134: OfficialClient) -> None:
    out = client_134.run(_SELECT, uuid.uuid4().hex[:6])
    assert out["node"] == ["a", "b"]
    assert out["node_and_driver"] == ["a"]
    assert {"a", "c"} <= set(out["driver"]) and "b" not in out["driver"]
    assert out["name"] == ["c"]


def test_watch_resumes_from_the_last_resource_version(client_134: OfficialClient) -> None:
    suffix = uuid.uuid4().hex[:6]
    out = client_134.run(_WATCH, suffix)
    assert out["seen"] == [["ADDED", "second"]]
    assert out["resumed"] == [["DELETED", "first"]]
    assert out["slices"] == [["ADDED", f"w-{suffix}", True]]
