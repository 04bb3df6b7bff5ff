"""resource.k8s.io in the protobuf wire format (kubedra.proto.kube), every kind of every served
version: JSON -> protobuf -> JSON round trips of generated objects (each special type: Quantity,
RawExtension, attribute unions, int64, maps of messages, times, Conditions, Go's embedded
structs, pointer zeros) and of every resource object of the vectors and examples; then the bytes
read and written by the protobuf runtime's own classes, as a Go client fills them."""

from __future__ import annotations

import glob
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubedra.api import codec, kinds, scheme
from kubedra.api.meta import format_time
from kubedra.api.resource import convert
from kubedra.proto import kube
from kubedra.proto.generated import apimachinery_runtime_pb2 as runtime_pb2
from kubedra.proto.generated import (
    resource_v1_pb2,
    resource_v1alpha2_pb2,
    resource_v1beta1_pb2,
)
from tests.unit.proto.test_kube import encoded
from tests.vectors import VECTORS, example_files, load

R = "resource.k8s.io"

# --- building blocks --------------------------------------------------------------------------

word = st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=8)
text = st.text(min_size=1, max_size=12)
any_text = st.text(max_size=8)  # a Go pointer: "" is kept
int64 = st.integers(-(2**63), 2**63 - 1)
nonzero = int64.filter(bool)
quantity = st.sampled_from(["0", "1", "8Gi", "500m", "1500m", "10k", "2Ei", "123456789"])
time = st.integers(1, 253402300799).map(format_time)
qualified = st.one_of(word, st.tuples(word, word).map(lambda p: f"{p[0]}.example.com/{p[1]}"))
json_value = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                max_size=3),
    max_leaves=8)
raw_json = st.dictionaries(st.text(max_size=4), json_value, min_size=1, max_size=3)


def obj(required: dict[str, Any], optional: dict[str, Any] | None = None) -> Any:
    return st.fixed_dictionaries(required, optional=optional or {})


def some(item: Any) -> Any:
    return st.lists(item, min_size=1, max_size=3)


def keyed(item: Any, keys: Any = qualified) -> Any:
    return st.dictionaries(keys, item, min_size=1, max_size=3)


metadata = obj({"name": word}, {
    "namespace": word, "uid": word, "resourceVersion": st.integers(1, 10**9).map(str),
    "generation": nonzero, "creationTimestamp": time, "labels": keyed(any_text, word),
    "annotations": keyed(text, word), "finalizers": some(word)})
node_selector = obj({"nodeSelectorTerms": some(obj({}, {
    "matchExpressions": some(obj({"key": word, "operator": st.sampled_from(["In", "Exists"])},
                                 {"values": some(word)})),
    "matchFields": some(obj({"key": word, "operator": st.just("In"),
                             "values": some(word)}))}))})
condition = obj({"type": word, "status": st.sampled_from(["True", "False", "Unknown"]),
                 "lastTransitionTime": time, "reason": word},
                {"message": text, "observedGeneration": nonzero})
consumer = obj({"resource": word, "name": word, "uid": word}, {"apiGroup": word})

# --- resource.k8s.io/v1 (v1beta2 has the same JSON) -----------------------------------------------

attribute = st.one_of(obj({"int": int64}), obj({"bool": st.booleans()}),
                      obj({"string": any_text}), obj({"version": st.just("1.2.3-rc.1")}))
counters = keyed(obj({"value": quantity}), word)
capacity = obj({"value": quantity}, {"requestPolicy": obj({}, {
    "default": quantity, "validValues": some(quantity),
    "validRange": obj({"min": quantity}, {"max": quantity, "step": quantity})})})
taint = obj({"key": word, "effect": st.sampled_from(["NoSchedule", "NoExecute", "None"])},
            {"value": word, "timeAdded": time})
device_fields = {
    "attributes": keyed(attribute), "capacity": keyed(capacity),
    "consumesCounters": some(obj({"counterSet": word, "counters": counters})),
    "nodeName": any_text, "nodeSelector": node_selector, "allNodes": st.booleans(),
    "taints": some(taint), "bindsToNode": st.booleans(), "bindingConditions": some(word),
    "bindingFailureConditions": some(word), "allowMultipleAllocations": st.booleans()}
slice_spec = obj(
    {"driver": word, "pool": obj({"name": word, "generation": nonzero,
                                  "resourceSliceCount": nonzero})},
    {"nodeName": any_text, "nodeSelector": node_selector, "allNodes": st.booleans(),
     "devices": some(obj({"name": word}, device_fields)),
     "perDeviceNodeSelection": st.booleans(),
     "sharedCounters": some(obj({"name": word, "counters": counters}))})
selectors = some(obj({"cel": obj({"expression": text})}))
opaque = obj({"driver": word, "parameters": raw_json})
toleration = obj({}, {"key": word, "operator": st.sampled_from(["Exists", "Equal"]),
                      "value": word, "effect": st.sampled_from(["NoSchedule", "NoExecute"]),
                      "tolerationSeconds": int64})
request_fields = {"selectors": selectors, "allocationMode": st.sampled_from(["ExactCount", "All"]),
                  "count": nonzero, "tolerations": some(toleration),
                  "capacity": obj({"requests": keyed(quantity)})}
exact = obj({"deviceClassName": word}, {**request_fields, "adminAccess": st.booleans()})
request = st.one_of(
    obj({"name": word, "exactly": exact}),
    obj({"name": word, "firstAvailable": some(obj({"name": word, "deviceClassName": word},
                                                  request_fields))}))
claim_spec = obj({"devices": obj({"requests": some(request)}, {
    "constraints": some(obj({"requests": some(word)}, {"matchAttribute": qualified,
                                                       "distinctAttribute": qualified})),
    "config": some(obj({"opaque": opaque}, {"requests": some(word)}))})})
result = obj({"request": word, "driver": word, "pool": word, "device": word}, {
    "adminAccess": st.booleans(), "tolerations": some(toleration),
    "bindingConditions": some(word), "bindingFailureConditions": some(word),
    "shareID": any_text, "consumedCapacity": keyed(quantity)})
claim_status = obj({}, {
    "allocation": obj({"devices": obj({"results": some(result)}, {
        "config": some(obj({"source": st.sampled_from(["FromClass", "FromClaim"]),
                            "opaque": opaque}, {"requests": some(word)}))})},
                      {"nodeSelector": node_selector, "allocationTimestamp": time}),
    "reservedFor": some(consumer),
    "devices": some(obj({"driver": word, "pool": word, "device": word}, {
        "shareID": any_text, "conditions": some(condition), "data": raw_json,
        "networkData": obj({}, {"interfaceName": word, "ips": some(word),
                                "hardwareAddress": word})}))})
V1_KINDS = {
    "ResourceSlice": obj({"metadata": metadata, "spec": slice_spec}),
    "ResourceClaim": obj({"metadata": metadata, "spec": claim_spec}, {"status": claim_status}),
    "ResourceClaimTemplate": obj({"metadata": metadata, "spec": obj(
        {"spec": claim_spec}, {"metadata": obj({}, {"labels": keyed(text, word)})})}),
    "DeviceClass": obj({"metadata": metadata, "spec": obj({}, {
        "selectors": selectors, "config": some(obj({"opaque": opaque})),
        "extendedResourceName": any_text})}),
}


def as_v1beta1(kind: str, obj: dict[str, Any]) -> dict[str, Any]:
    """A v1 object's JSON as v1beta1 writes it: a device's fields under ``basic``, requests
    flat, a slice's nodeName and allNodes Go values (their zero is not written)."""
    if kind == "ResourceSlice":
        spec = obj["spec"]
        for key, zero in (("nodeName", ""), ("allNodes", False)):
            if spec.get(key) == zero:
                del spec[key]
        if "devices" in spec:
            spec["devices"] = [{"name": d.pop("name"), "basic": d} for d in spec["devices"]]
    claim = {"ResourceClaim": obj["spec"], "ResourceClaimTemplate": obj["spec"].get("spec")}
    for req in (claim.get(kind) or {}).get("devices", {}).get("requests", []):
        req.update(req.pop("exactly", {}))
    return obj


# --- resource.k8s.io/v1alpha2 -----------------------------------------------------------------

named_value = st.one_of(
    obj({"quantity": quantity}), obj({"bool": st.booleans()}), obj({"int": int64}),
    obj({"intSlice": obj({"ints": some(int64)})}), obj({"string": any_text}),
    obj({"stringSlice": obj({"strings": some(any_text)})}),
    obj({"version": st.just("1.0.0")}))
named_attribute = st.tuples(word, named_value).map(lambda p: {"name": p[0], **p[1]})
class_ref = obj({"kind": word, "name": word}, {"apiGroup": word, "namespace": word})
claim_ref = obj({"kind": word, "name": word}, {"apiGroup": word})
alpha_claim_spec = obj({"resourceClassName": word}, {
    "parametersRef": claim_ref,
    "allocationMode": st.sampled_from(["WaitForFirstConsumer", "Immediate"])})
handle = obj({"driverName": word}, {"data": text, "structuredData": obj(
    {"results": some(obj({}, {"vendorRequestParameters": raw_json,
                              "namedResources": obj({"name": word})}))},
    {"vendorClassParameters": raw_json, "vendorClaimParameters": raw_json, "nodeName": word})})
V1ALPHA2_KINDS = {
    "ResourceClass": obj({"metadata": metadata, "driverName": word}, {
        "parametersRef": class_ref, "suitableNodes": node_selector,
        "structuredParameters": st.booleans()}),
    "ResourceClaim": obj({"metadata": metadata, "spec": alpha_claim_spec}, {"status": obj({}, {
        "driverName": word, "reservedFor": some(consumer),
        "deallocationRequested": st.just(True),
        "allocation": obj({}, {"resourceHandles": some(handle),
                               "availableOnNodes": node_selector,
                               "shareable": st.just(True)})})}),
    "ResourceClaimTemplate": obj({"metadata": metadata, "spec": obj(
        {"spec": alpha_claim_spec}, {"metadata": obj({}, {"labels": keyed(text, word)})})}),
    "ResourceSlice": obj({"metadata": metadata, "driverName": word}, {
        "nodeName": word, "namedResources": obj({"instances": some(obj(
            {"name": word}, {"attributes": some(named_attribute)}))})}),
    "ResourceClaimParameters": obj({"metadata": metadata}, {
        "generatedFrom": claim_ref, "shareable": st.just(True),
        "driverRequests": some(obj({"driverName": word}, {
            "vendorParameters": raw_json,
            "requests": some(obj({}, {"vendorParameters": raw_json,
                                      "namedResources": obj({"selector": text})}))}))}),
    "ResourceClassParameters": obj({"metadata": metadata}, {
        "generatedFrom": class_ref,
        "vendorParameters": some(obj({"driverName": word}, {"parameters": raw_json})),
        "filters": some(obj({"driverName": word}, {"namedResources": obj({"selector": text})}))}),
    "PodSchedulingContext": obj({"metadata": metadata, "spec": obj({}, {
        "selectedNode": word, "potentialNodes": some(word)})}, {"status": obj({}, {
            "resourceClaims": some(obj({"name": word}, {"unsuitableNodes": some(word)}))})}),
}


# --- round trips ------------------------------------------------------------------------------


def typed(api_version: str, kind: str, body: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, **body}


def listed(api_version: str, kind: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    """A List as the server writes it: its items carry no TypeMeta of their own."""
    return {"apiVersion": api_version, "kind": f"{kind}List",
            "metadata": {"resourceVersion": "42", "continue": "c"}, "items": items}


def model_json(obj: dict[str, Any]) -> Any:
    """An object (or List) read by the JSON codec into its model, and written again."""
    found = kinds.by_api_version(obj["apiVersion"], obj["kind"].removesuffix("List"))
    assert found is not None
    model = found.list_model if obj["kind"].endswith("List") else found.model
    return codec.to_builtins(codec.decode(obj, model))


def assert_round_trip(obj: dict[str, Any]) -> None:
    """The same JSON back, and the same model as the JSON codec reads."""
    back = kube.decode(encoded(obj))
    assert back == obj
    assert model_json(back) == model_json(obj)


_FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CASES = [(f"{R}/{v}", kind) for v in ("v1", "v1beta2", "v1beta1") for kind in V1_KINDS] + \
    [(f"{R}/v1alpha2", kind) for kind in V1ALPHA2_KINDS]


@pytest.mark.parametrize(("api_version", "kind"), CASES)
@_FAST
@given(data=st.data())
def test_every_kind_round_trips(api_version: str, kind: str, data: st.DataObject) -> None:
    version = api_version.rpartition("/")[2]
    kinds = V1ALPHA2_KINDS if version == "v1alpha2" else V1_KINDS
    bodies = data.draw(st.lists(kinds[kind], min_size=1, max_size=2))
    if version == "v1beta1":
        bodies = [as_v1beta1(kind, b) for b in bodies]
    assert_round_trip(typed(api_version, kind, bodies[0]))
    assert_round_trip(listed(api_version, kind, bodies))


def test_every_served_resource_kind_has_a_message() -> None:
    served = [(f"{gr.group}/{s.version}", gr.kind) for gr in scheme.SCHEME
              if gr.group == R for s in gr.served]
    assert set(served) == set(CASES)
    for api_version, kind in served:
        assert kube.message_for(api_version, kind) is not None
        assert kube.message_for(api_version, f"{kind}List") is not None


def _resource_objects() -> list[dict[str, Any]]:
    """Every resource.k8s.io object in the vectors and the examples."""
    found: list[dict[str, Any]] = []

    def walk(x: Any) -> None:
        if isinstance(x, dict):
            if str(x.get("apiVersion", "")).startswith(R + "/") and "metadata" in x \
                    and isinstance(x.get("kind"), str):
                found.append(x)
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    for path in sorted(glob.glob(str(VECTORS / "*.json"))):
        walk(load(path.rpartition("/")[2]))
    for path in example_files():
        walk(codec.load_documents(path.read_text()))
    return found


_MAPS = frozenset({"attributes", "capacity", "labels", "annotations"})


def as_go_writes(obj: Any, key: str = "") -> Any:
    """What Go's JSON omits of an object that our models keep: empty maps (omitempty) and
    ObjectMeta's empty strings (Go values)."""
    if isinstance(obj, dict):
        return {k: as_go_writes(v, k) for k, v in obj.items()
                if not (v == {} and k in _MAPS) and not (key == "metadata" and v == "")}
    if isinstance(obj, list):
        return [as_go_writes(v) for v in obj]
    return obj


def test_every_vector_and_example_object_round_trips_in_each_version() -> None:
    """Each object our models read, written in its version (v1 ones also as v1beta2 and,
    converted, as v1beta1): protobuf and back is the same model."""
    objects = [o for o in _resource_objects() if _decodes(o)]
    assert len(objects) > 300
    seen = set()
    for raw in objects:
        model = codec.decode_object(raw)
        forms = [codec.to_builtins(model)]
        if raw["apiVersion"] == f"{R}/v1":
            forms.append({**forms[0], "apiVersion": f"{R}/v1beta2"})
            forms.append(codec.to_builtins(convert.V1BETA1.from_hub(model)))
        for form in forms:
            seen.add((form["apiVersion"], form["kind"]))
            back = kube.decode(kube.encode(form))
            assert codec.to_builtins(codec.decode_object(back)) == as_go_writes(form)
    assert len(seen) == 7 + 3 * 3  # v1alpha2: every kind; v1, v1beta2, v1beta1: three


def _decodes(raw: dict[str, Any]) -> bool:
    try:
        codec.decode_object(raw)
    except (codec.DecodeError, KeyError, TypeError, ValueError):
        return False
    return True


# --- the runtime's own classes ----------------------------------------------------------------


def envelope(api_version: str, kind: str, msg: Any) -> bytes:
    unknown = runtime_pb2.Unknown(raw=msg.SerializeToString())
    unknown.typeMeta.apiVersion, unknown.typeMeta.kind = api_version, kind
    return b"k8s\x00" + unknown.SerializeToString()


def parsed(cls: Any, data: bytes) -> Any:
    return cls.FromString(runtime_pb2.Unknown.FromString(data[4:]).raw)


def test_a_slice_built_by_the_runtime_reads_as_its_json_and_model() -> None:
    s = resource_v1_pb2.ResourceSlice()
    s.metadata.name = "gpus"
    s.spec.driver, s.spec.nodeName = "gpu.example.com", "n1"
    s.spec.pool.name, s.spec.pool.generation, s.spec.pool.resourceSliceCount = "n1", 2**40, 1
    d = s.spec.devices.add(name="gpu-0")
    d.attributes["model"].string = "a100"
    d.attributes["gpu.example.com/numa"].int = 0  # a pointer: the zero is there
    d.attributes["gpu.example.com/mig"].bool = False
    d.attributes["driverVersion"].version = "1.2.3"
    d.capacity["memory"].value.string = "80Gi"
    d.capacity["memory"].requestPolicy.validRange.min.string = "1Gi"
    d.capacity["memory"].requestPolicy.default.string = "1Gi"
    t = d.taints.add(key="k", effect="NoExecute")
    t.timeAdded.seconds = 1714557600
    obj = kube.decode(envelope(f"{R}/v1", "ResourceSlice", s))
    assert obj["spec"]["devices"] == [{
        "name": "gpu-0",
        "attributes": {"model": {"string": "a100"}, "gpu.example.com/numa": {"int": 0},
                       "gpu.example.com/mig": {"bool": False},
                       "driverVersion": {"version": "1.2.3"}},
        "capacity": {"memory": {"value": "80Gi", "requestPolicy": {
            "default": "1Gi", "validRange": {"min": "1Gi"}}}},
        "taints": [{"key": "k", "effect": "NoExecute", "timeAdded": "2024-05-01T10:00:00Z"}]}]
    assert obj["spec"]["pool"]["generation"] == 2**40
    model = codec.decode_object(obj)
    assert model.spec.devices[0].attributes["gpu.example.com/numa"].int_ == 0


def test_what_we_write_is_read_by_the_runtime() -> None:
    claim = typed(f"{R}/v1", "ResourceClaim", {
        "metadata": {"name": "c", "namespace": "d"},
        "spec": {"devices": {
            "requests": [{"name": "r", "exactly": {
                "deviceClassName": "gpu", "count": 2, "adminAccess": False,
                "tolerations": [{"operator": "Exists", "tolerationSeconds": 0}]}}],
            "config": [{"requests": ["r"], "opaque": {
                "driver": "gpu.example.com", "parameters": {"kind": "Cfg", "n": [1, 2]}}}]}},
        "status": {
            "allocation": {"devices": {"results": [{
                "request": "r", "driver": "gpu.example.com", "pool": "p", "device": "g0",
                "shareID": "", "consumedCapacity": {"memory": "10Gi"}}]},
                "allocationTimestamp": "2024-05-01T10:00:00Z"},
            "devices": [{"driver": "gpu.example.com", "pool": "p", "device": "g0",
                         "data": {"health": "ok"},
                         "conditions": [{"type": "Ready", "status": "True", "reason": "R",
                                         "lastTransitionTime": "2024-05-01T10:00:01Z"}]}]}})
    pb = parsed(resource_v1_pb2.ResourceClaim, kube.encode(claim))
    req = pb.spec.devices.requests[0].exactly
    assert (req.deviceClassName, req.count) == ("gpu", 2)
    assert req.HasField("adminAccess") and not req.adminAccess
    assert req.tolerations[0].HasField("tolerationSeconds")
    config = pb.spec.devices.config[0].deviceConfiguration.opaque
    assert json.loads(config.parameters.raw) == {"kind": "Cfg", "n": [1, 2]}
    result = pb.status.allocation.devices.results[0]
    assert result.HasField("shareID") and result.consumedCapacity["memory"].string == "10Gi"
    assert pb.status.allocation.allocationTimestamp.seconds == 1714557600
    status = pb.status.devices[0]
    assert status.data.raw == b'{"health":"ok"}'
    assert status.conditions[0].lastTransitionTime.seconds == 1714557601


def test_v1beta1_devices_and_requests_by_their_numbers() -> None:
    """Hand-written bytes: Device{name(1) "d", basic(2){}} and, in a DeviceSubRequest,
    tolerations at 7 (v1 has them at 6)."""
    device = {"name": "d", "basic": {}}
    msg = kube.from_json(resource_v1beta1_pb2.Device, device)
    assert msg.SerializeToString() == b"\x0a\x01d\x12\x00"
    assert kube.to_json(resource_v1beta1_pb2.Device.FromString(b"\x0a\x01d\x12\x00")) == device
    sub = kube.from_json(resource_v1beta1_pb2.DeviceSubRequest,
                         {"name": "s", "tolerations": [{"key": "k"}]})
    assert sub.SerializeToString() == b"\x0a\x01s" + b"\x3a\x03" + b"\x0a\x01k"


def test_go_value_fields_written_as_zero_read_as_go_json_omits_them() -> None:
    """Go writes every value field; a v1beta1 slice with nodeName "" (3) and allNodes false
    (5) and a pool of generation 0 reads without them, as Go's JSON has it."""
    spec = b"\x0a\x01x" + b"\x12\x05\x0a\x01p\x10\x00" + b"\x1a\x00" + b"\x28\x00"
    raw = b"\x12" + bytes([len(spec)]) + spec
    unknown = runtime_pb2.Unknown(raw=raw)
    unknown.typeMeta.apiVersion, unknown.typeMeta.kind = f"{R}/v1beta1", "ResourceSlice"
    obj = kube.decode(b"k8s\x00" + unknown.SerializeToString())
    assert obj["spec"] == {"driver": "x", "pool": {"name": "p"}}
    model = codec.decode_object(obj)
    assert (model.spec.node_name, model.spec.all_nodes, model.spec.pool.generation) == \
        ("", False, 0)


def test_v1alpha2_models_are_inline_in_json() -> None:
    sl = typed(f"{R}/v1alpha2", "ResourceSlice", {
        "metadata": {"name": "s"}, "nodeName": "n", "driverName": "d",
        "namedResources": {"instances": [{"name": "i", "attributes": [
            {"name": "mem", "quantity": "1Gi"}, {"name": "ids", "intSlice": {"ints": [1, -2]}}]}]}})
    pb = parsed(resource_v1alpha2_pb2.ResourceSlice, kube.encode(sl))
    inst = pb.resourceModel.namedResources.instances[0]
    assert inst.attributes[0].attributeValue.quantity.string == "1Gi"
    assert list(inst.attributes[1].attributeValue.intSlice.ints) == [1, -2]
    # unpacked, as Go's proto2 code writes them: a tag per number
    assert inst.attributes[1].attributeValue.intSlice.SerializeToString() == \
        b"\x08\x01\x08" + b"\xfe" + b"\xff" * 8 + b"\x01"
    params = typed(f"{R}/v1alpha2", "ResourceClaimParameters", {
        "metadata": {"name": "p"}, "driverRequests": [{"driverName": "d", "requests": [
            {"vendorParameters": {"a": 1}, "namedResources": {"selector": "true"}}]}]})
    pb2 = parsed(resource_v1alpha2_pb2.ResourceClaimParameters, kube.encode(params))
    request = pb2.driverRequests[0].requests[0]
    assert request.resourceRequestModel.namedResources.selector == "true"
    assert request.vendorParameters.raw == b'{"a":1}'
    assert kube.decode(kube.encode(params)) == params


def test_a_v1alpha2_claim_built_as_go_writes_it_reads_as_its_model() -> None:
    """Go writes every value field: empty RawExtensions (JSON null), the empty node name of a
    structured handle, ``shareable: false``; they read as Go's JSON has them."""
    c = resource_v1alpha2_pb2.ResourceClaim()
    c.metadata.name, c.metadata.namespace = "c", "d"
    c.spec.resourceClassName, c.spec.allocationMode = "gpu", "WaitForFirstConsumer"
    c.status.driverName = "gpu.example.com"
    handle = c.status.allocation.resourceHandles.add(driverName="gpu.example.com")
    sh = handle.structuredData
    sh.vendorClassParameters.SetInParent()
    sh.vendorClaimParameters.raw = b'{"size":"large"}'
    result = sh.results.add()
    result.vendorRequestParameters.SetInParent()
    result.allocationResultModel.namedResources.name = "gpu-0"
    c.status.allocation.shareable = False
    c.status.reservedFor.add(resource="pods", name="p", uid="u1")
    obj = kube.decode(envelope(f"{R}/v1alpha2", "ResourceClaim", c))
    assert obj["status"]["allocation"] == {"resourceHandles": [{
        "driverName": "gpu.example.com", "structuredData": {
            "vendorClaimParameters": {"size": "large"},
            "results": [{"namedResources": {"name": "gpu-0"}}]}}]}
    model = codec.decode_object(obj)
    data = model.status.allocation.resource_handles[0].structured_data
    assert data.vendor_class_parameters is None and data.node_name == ""
    assert data.results[0].named_resources.name == "gpu-0"
    assert model.status.reserved_for[0].uid == "u1"
