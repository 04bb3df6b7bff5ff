"""``--runtime-config``: kube-apiserver's parsing, precedence and error texts."""

from __future__ import annotations

import pytest

from kubedra.api.runtimeconfig import RuntimeConfigError, parse_runtime_config

REGISTERED = frozenset({("", "v1"), ("batch", "v1"), ("resource.k8s.io", "v1"),
                        ("resource.k8s.io", "v1beta2"), ("resource.k8s.io", "v1beta1"),
                        ("resource.k8s.io", "v1alpha3")})
RES = "resource.k8s.io"


def test_empty_changes_nothing() -> None:
    config = parse_runtime_config("", REGISTERED)
    assert config.enabled(RES, "v1beta1", "resourceslices", False) is False
    assert config.enabled(RES, "v1", "resourceslices", True) is True


def test_group_version_turns_a_version_on_or_off() -> None:
    config = parse_runtime_config(" resource.k8s.io/v1beta1 = true,resource.k8s.io/v1=false,",
                                  REGISTERED)
    assert config.enabled(RES, "v1beta1", "deviceclasses", False) is True
    assert config.enabled(RES, "v1", "deviceclasses", True) is False
    assert config.enabled(RES, "v1beta2", "deviceclasses", False) is False


@pytest.mark.parametrize("value", ["", "1", "t", "True"])
def test_empty_and_go_true_values_are_true(value: str) -> None:
    config = parse_runtime_config(f"resource.k8s.io/v1beta2={value}", REGISTERED)
    assert config.enabled(RES, "v1beta2", "deviceclasses", False) is True
    bare = parse_runtime_config("resource.k8s.io/v1beta2", REGISTERED)
    assert bare.enabled(RES, "v1beta2", "deviceclasses", False) is True


def test_api_keys_apply_in_order_and_specific_keys_win() -> None:
    config = parse_runtime_config("api/alpha=false,api/all=true,resource.k8s.io/v1beta1=false",
                                  REGISTERED)
    assert config.enabled(RES, "v1beta2", "deviceclasses", False) is True
    assert config.enabled(RES, "v1alpha3", "devicetaintrules", True) is False
    assert config.enabled(RES, "v1beta1", "deviceclasses", False) is False
    beta = parse_runtime_config("api/beta=true", REGISTERED)
    assert beta.enabled(RES, "v1beta1", "deviceclasses", False) is True
    assert beta.enabled(RES, "v1alpha3", "devicetaintrules", False) is False
    ga_off = parse_runtime_config("api/ga=false,batch/v1=true", REGISTERED)
    assert ga_off.enabled(RES, "v1", "deviceclasses", True) is False
    assert ga_off.enabled("batch", "v1", "jobs", True) is True
    assert ga_off.enabled("", "v1", "pods", True) is True  # core v1 stays


def test_resource_keys_win_over_versions() -> None:
    config = parse_runtime_config(
        "resource.k8s.io/v1beta1=true,resource.k8s.io/v1beta1/resourceslices=false", REGISTERED)
    assert config.enabled(RES, "v1beta1", "resourceslices", False) is False
    assert config.enabled(RES, "v1beta1", "deviceclasses", False) is True


@pytest.mark.parametrize(("text", "message"), [
    ("api/all=false", "invalid key with only api/all=false"),
    ("api/beta=yes", "invalid value api/beta=yes"),
    ("resource.k8s.io", "runtime-config invalid key resource.k8s.io"),
    ("a/b/c/d=true", "runtime-config invalid key a/b/c/d"),
    ("resource.k8s.io/v1alpha2=true",
     "group version resource.k8s.io/v1alpha2 that has not been registered"),
    ("foo.example.com/v1=true,bar.io/v1=false", "unknown api groups bar.io,foo.example.com"),
    ("resource.k8s.io/v1beta1=yes",
     'invalid value of resource.k8s.io/v1beta1: yes, err: strconv.ParseBool: parsing "yes": '
     "invalid syntax"),
    ("resource.k8s.io/v1/DeviceClasses=true",
     "invalid key resource.k8s.io/v1/DeviceClasses: group/version/resource and resource is "
     'always lowercase plural, not "DeviceClasses"'),
    ("api/v1=false", "invalid key api/v1: kubedra always serves the core v1"),
])
def test_errors(text: str, message: str) -> None:
    with pytest.raises(RuntimeConfigError) as err:
        parse_runtime_config(text, REGISTERED)
    assert str(err.value) == message


def test_api_v1_names_the_core_group() -> None:
    config = parse_runtime_config("api/all=false,api/v1=true", REGISTERED)
    assert config.enabled("", "v1", "pods", True) is True
    assert config.enabled("batch", "v1", "jobs", True) is False
