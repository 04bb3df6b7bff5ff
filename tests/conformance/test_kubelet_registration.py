"""kubelet-plugin-registration.json: version negotiation (``HighestSupportedVersion``), the
DRA registration handler's validation and the plugin lookup, with upstream texts."""

from __future__ import annotations

from typing import Any

import pytest

from kubedra.kubelet.plugins import PluginError, PluginStore, highest_supported_version
from tests.vectors import load, vector_cases

FILE = "kubelet-plugin-registration.json"
V = load(FILE)


@vector_cases(FILE, V["HighestSupportedVersion"]["cases"])
def test_highest_supported_version(case: dict[str, Any]) -> None:
    if case.get("fail"):
        with pytest.raises(PluginError):
            highest_supported_version(case["versions"])
    else:
        assert str(highest_supported_version(case["versions"])) == case["expected"]


@vector_cases(FILE, V["ValidatePlugin"]["cases"])
def test_validate_plugin(case: dict[str, Any]) -> None:
    store = PluginStore()
    pre = case["preRegistered"]
    if pre:
        store.register_plugin(pre["pluginName"], pre["endpoint"], pre["versions"])
    if case["shouldError"]:
        with pytest.raises(PluginError) as e:
            store.validate_plugin(case["pluginName"], case["endpoint"], case["versions"])
        text = str(e.value)
        assert text.startswith(f"validation failed for DRA plugin {case['pluginName']} at "
                               f"endpoint {case['endpoint']}: kubernetes.io/dra: ValidatePlugin "
                               f"for DRA plugin \"{case['pluginName']}\" failed. ")
        if pre:
            assert text.endswith("Another plugin with the same name is already registered "
                                 'with a higher supported version: "1.1.0"')
        elif not case["versions"]:
            assert text.endswith("Plugin returned an empty list for supported versions")
        else:
            assert '"v2.0.0"' in text and "are supported. err=" in text
    else:
        store.validate_plugin(case["pluginName"], case["endpoint"], case["versions"])


@pytest.mark.vectors(FILE)
def test_same_version_never_replaces_and_higher_does() -> None:
    store = PluginStore()
    store.register_plugin("d", "/a", ["1.0.0"])
    with pytest.raises(PluginError, match="higher supported version"):
        store.register_plugin("d", "/b", ["1.0.0"])
    assert store.register_plugin("d", "/c", ["1.1.0"]).endpoint == "/c"


@vector_cases(FILE, V["NewDRAPluginClient"])
def test_plugin_lookup(case: dict[str, Any]) -> None:
    store = PluginStore()
    if case.get("registered"):
        store.register_plugin(case["pluginName"], "/x", ["1.0.0"])
        assert store.get(case["pluginName"]).name == case["pluginName"]
        return
    with pytest.raises(PluginError) as e:
        store.get(case["pluginName"])
    assert str(e.value) == case["error"]
