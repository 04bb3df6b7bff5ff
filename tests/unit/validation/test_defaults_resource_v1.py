"""Defaulting of the devices model (spec §3), per served version."""

from __future__ import annotations

import calendar
import json
from typing import Any

from kubedra.api import codec
from kubedra.api.resource import convert, v1, v1beta1
from kubedra.validation.defaults_resource_v1 import DEFAULTERS, default_v1, default_v1beta1

NOW = calendar.timegm((2025, 8, 27, 10, 0, 0)) + 0.75  # truncated to the second


def _claim(model: type[Any], *requests: dict[str, Any], status: dict[str, Any] | None = None
           ) -> Any:
    raw: dict[str, Any] = {"spec": {"devices": {"requests": list(requests)}}}
    if status:
        raw["status"] = status
    return codec.decode(raw, model)


def _requests(obj: Any) -> list[Any]:
    return json.loads(codec.encode(obj))["spec"]["devices"]["requests"]


def test_v1_exact_requests_and_subrequests() -> None:
    claim = _claim(
        v1.ResourceClaim,
        {"name": "a", "exactly": {"deviceClassName": "c"}},
        {"name": "b", "exactly": {"deviceClassName": "c", "count": 3}},
        {"name": "c", "exactly": {"deviceClassName": "c", "allocationMode": "All"}},
        {"name": "d", "exactly": {"deviceClassName": "c", "allocationMode": "Bogus"}},
        {"name": "e", "firstAvailable": [{"name": "x", "deviceClassName": "c"},
                                         {"name": "y", "deviceClassName": "c",
                                          "allocationMode": "All"}]},
    )
    default_v1(claim)
    assert _requests(claim) == [
        {"name": "a", "exactly": {"deviceClassName": "c", "allocationMode": "ExactCount",
                                  "count": 1}},
        {"name": "b", "exactly": {"deviceClassName": "c", "allocationMode": "ExactCount",
                                  "count": 3}},
        {"name": "c", "exactly": {"deviceClassName": "c", "allocationMode": "All"}},
        {"name": "d", "exactly": {"deviceClassName": "c", "allocationMode": "Bogus"}},
        {"name": "e", "firstAvailable": [
            {"name": "x", "deviceClassName": "c", "allocationMode": "ExactCount", "count": 1},
            {"name": "y", "deviceClassName": "c", "allocationMode": "All"}]},
    ]


def test_v1_toleration_operator_everywhere() -> None:
    tol = [{"key": "k", "effect": "NoSchedule"}, {"operator": "Exists"}]
    claim = _claim(
        v1.ResourceClaim,
        {"name": "a", "exactly": {"deviceClassName": "c", "tolerations": tol}},
        {"name": "b", "firstAvailable": [{"name": "x", "deviceClassName": "c",
                                          "tolerations": tol}]},
        status={"allocation": {"devices": {"results": [
            {"request": "a", "driver": "d", "pool": "p", "device": "x", "tolerations": tol}]}}},
    )
    default_v1(claim)
    want = [{"key": "k", "operator": "Equal", "effect": "NoSchedule"}, {"operator": "Exists"}]
    requests = _requests(claim)
    assert requests[0]["exactly"]["tolerations"] == want
    assert requests[1]["firstAvailable"][0]["tolerations"] == want
    result = json.loads(codec.encode(claim))["status"]["allocation"]["devices"]["results"][0]
    assert result["tolerations"] == want


def test_v1_template_and_list() -> None:
    template = codec.decode({"spec": {"spec": {"devices": {"requests": [
        {"name": "a", "exactly": {"deviceClassName": "c"}}]}}}}, v1.ResourceClaimTemplate)
    items = v1.ResourceClaimTemplateList(items=[template])
    default_v1(items)
    exactly = template.spec.spec.devices.requests[0].exactly
    assert exactly is not None and (exactly.allocation_mode, exactly.count) == ("ExactCount", 1)


def test_taints_get_the_time_added_in_whole_seconds() -> None:
    slice_ = codec.decode({"spec": {"devices": [
        {"name": "a", "taints": [{"key": "k", "effect": "NoSchedule"},
                                 {"key": "j", "effect": "NoExecute",
                                  "timeAdded": "2020-01-01T00:00:00Z"}]},
        {"name": "b"}]}}, v1.ResourceSlice)
    default_v1(slice_, NOW)
    taints = slice_.spec.devices[0].taints
    assert taints is not None
    assert [t.time_added for t in taints] == ["2025-08-27T10:00:00Z", "2020-01-01T00:00:00Z"]
    beta = codec.decode({"spec": {"devices": [
        {"name": "a", "basic": {"taints": [{"key": "k", "effect": "NoSchedule"}]}},
        {"name": "b"}]}}, v1beta1.ResourceSlice)
    default_v1beta1(v1beta1.ResourceSliceList(items=[beta]), NOW)
    basic = beta.spec.devices[0].basic
    assert basic is not None and basic.taints is not None
    assert basic.taints[0].time_added == "2025-08-27T10:00:00Z"


def test_taints_default_to_the_clock() -> None:
    slice_ = codec.decode({"spec": {"devices": [
        {"name": "a", "taints": [{"key": "k", "effect": "NoSchedule"}]}]}}, v1.ResourceSlice)
    default_v1(slice_)
    taints = slice_.spec.devices[0].taints
    assert taints is not None and taints[0].time_added is not None
    assert taints[0].time_added.endswith("Z") and len(taints[0].time_added) == 20


def test_v1beta1_defaults_a_flat_request_only_with_a_class() -> None:
    claim = _claim(
        v1beta1.ResourceClaim,
        {"name": "a", "deviceClassName": "c"},
        {"name": "b", "deviceClassName": "c", "allocationMode": "All"},
        # no class: the firstAvailable form; its subrequests are defaulted
        {"name": "c", "firstAvailable": [{"name": "x", "deviceClassName": "c"}],
         "tolerations": [{"key": "k"}]},
        # no class but an exact field: stays undefaulted (validation then reports it)
        {"name": "d", "count": 2},
    )
    default_v1beta1(claim)
    assert _requests(claim) == [
        {"name": "a", "deviceClassName": "c", "allocationMode": "ExactCount", "count": 1},
        {"name": "b", "deviceClassName": "c", "allocationMode": "All"},
        {"name": "c", "deviceClassName": "",
         "firstAvailable": [{"name": "x", "deviceClassName": "c",
                             "allocationMode": "ExactCount", "count": 1}],
         "tolerations": [{"key": "k", "operator": "Equal"}]},
        {"name": "d", "deviceClassName": "", "count": 2},
    ]
    hub = convert.V1BETA1.to_hub(claim)
    assert _requests(hub)[3] == {"name": "d", "exactly": {"deviceClassName": "", "count": 2}}
    assert _requests(hub)[2]["exactly"] == {"deviceClassName": "",
                                            "tolerations": [{"key": "k", "operator": "Equal"}]}


def test_v1beta1_template_and_status() -> None:
    template = codec.decode({"spec": {"spec": {"devices": {"requests": [
        {"name": "a", "deviceClassName": "c"}]}}}}, v1beta1.ResourceClaimTemplate)
    default_v1beta1(template)
    req = template.spec.spec.devices.requests[0]
    assert (req.allocation_mode, req.count) == ("ExactCount", 1)
    claim = _claim(v1beta1.ResourceClaim, status={"allocation": {"devices": {"results": [
        {"request": "a", "driver": "d", "pool": "p", "device": "x",
         "tolerations": [{"key": "k"}]}]}}})
    default_v1beta1(claim)
    assert claim.status.allocation is not None
    results = claim.status.allocation.devices.results
    assert results is not None and results[0].tolerations is not None
    assert results[0].tolerations[0].operator == "Equal"


def test_device_classes_have_no_defaults_and_each_version_its_defaulter() -> None:
    cls = codec.decode({"spec": {"selectors": [{"cel": {"expression": "true"}}]}},
                       v1.DeviceClass)
    before = codec.encode(cls)
    default_v1(cls)
    default_v1beta1(cls)
    assert codec.encode(cls) == before
    assert dict(DEFAULTERS) == {"v1": default_v1, "v1beta2": default_v1,
                                "v1beta1": default_v1beta1}
