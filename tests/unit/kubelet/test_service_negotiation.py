"""Registration on a 1.34 node: the service is the first of the plugin's ``supported_versions``
(in the plugin's order) that the kubelet supports, with upstream's texts for none and for an
empty list (1.34 dra_plugin_manager.go ``validateSupportedServices``); an endpoint registers
once; the 1.30 semver ``1.0.0`` no longer registers."""

from __future__ import annotations

import pytest

from kubedra.kubelet.draclient.devices import SERVICES
from kubedra.kubelet.plugins import PluginError, PluginStore, choose_service

KUBELET = tuple(SERVICES)


def test_the_kubelet_supports_v1_then_v1beta1() -> None:
    assert KUBELET == ("v1.DRAPlugin", "v1beta1.DRAPlugin")


@pytest.mark.parametrize(("offered", "chosen"), [
    (["v1.DRAPlugin", "v1beta1.DRAPlugin"], "v1.DRAPlugin"),
    (["v1beta1.DRAPlugin", "v1.DRAPlugin"], "v1beta1.DRAPlugin"),  # the plugin's order
    (["v1beta1.DRAPlugin"], "v1beta1.DRAPlugin"),
    (["v1alpha1.DRAResourceHealth", "v1.DRAPlugin"], "v1.DRAPlugin"),
])
def test_choice(offered: list[str], chosen: str) -> None:
    assert choose_service(offered, KUBELET) == chosen
    store = PluginStore(services=KUBELET)
    assert store.register_plugin("d.example.com", "/e.sock", offered).service == chosen


def test_none_supported() -> None:
    store = PluginStore(services=KUBELET)
    with pytest.raises(PluginError) as e:
        store.validate_plugin("d.example.com", "/e.sock", ["1.0.0"])
    assert str(e.value) == (
        "invalid supported gRPC versions of DRA driver plugin d.example.com at endpoint "
        '/e.sock: none of services supported by the plugin (["1.0.0"]) are supported by the '
        'kubelet (["v1.DRAPlugin" "v1beta1.DRAPlugin"])')
    with pytest.raises(PluginError, match=r"^invalid supported gRPC versions of DRA driver "
                       r"plugin d.example.com at endpoint /e.sock: empty list of supported "
                       r"gRPC services \(aka supported versions\)$"):
        store.register_plugin("d.example.com", "/e.sock", [])
    assert store.names() == []


def test_an_endpoint_registers_once_and_the_newest_is_used() -> None:
    store = PluginStore(services=KUBELET)
    store.register_plugin("d.example.com", "/a.sock", ["v1.DRAPlugin"])
    with pytest.raises(PluginError, match=r"^endpoint /a\.sock already registered for DRA "
                                          r"driver plugin d\.example\.com$"):
        store.register_plugin("d.example.com", "/a.sock", ["v1.DRAPlugin"])
    store.register_plugin("d.example.com", "/b.sock", ["v1beta1.DRAPlugin"])
    assert (store.get("d.example.com").endpoint, store.get("d.example.com").service) == (
        "/b.sock", "v1beta1.DRAPlugin")


def test_the_1_30_store_still_negotiates_semver() -> None:
    plugin = PluginStore().register_plugin("d.example.com", "/a.sock", ["1.0.0"])
    assert str(plugin.highest_version) == "1.0.0" and plugin.service == ""


def test_rolling_update_endpoints() -> None:
    """Two endpoints of one driver (a rolling update): the newest is called; when it goes,
    the older one is called again; the driver is gone with its last endpoint."""
    gone: list[tuple[str, bool]] = []
    store = PluginStore(on_deregister=lambda p, last: gone.append((p.endpoint, last)),
                        services=KUBELET)
    old = store.register_plugin("d.example.com", "/old.sock", ["v1.DRAPlugin"])
    new = store.register_plugin("d.example.com", "/new.sock", ["v1.DRAPlugin"])
    assert store.get("d.example.com") is new
    store.deregister_plugin(new)
    assert store.get("d.example.com") is old and gone == [("/new.sock", False)]
    store.deregister_plugin(new)  # already gone: nothing
    store.deregister_plugin(old)
    assert store.names() == [] and gone == [("/new.sock", False), ("/old.sock", True)]


def test_1_30_replaced_registration_going_away_changes_nothing() -> None:
    gone: list[tuple[str, bool]] = []
    store = PluginStore(on_deregister=lambda p, last: gone.append((p.endpoint, last)))
    first = store.register_plugin("d.example.com", "/a.sock", ["1.0.0"])
    second = store.register_plugin("d.example.com", "/b.sock", ["1.1.0"])
    store.deregister_plugin(first)
    assert store.get("d.example.com") is second and gone == []
    store.deregister_plugin(second)
    assert store.names() == [] and gone == [("/b.sock", True)]
