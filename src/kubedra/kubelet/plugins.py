"""The DRA plugin store and registration handler: which drivers are registered on this node,
at which endpoint, and whether a new registration may replace an old one. Two eras: 1.30 takes
semver ``supported_versions`` (upstream pkg/kubelet/cm/dra/plugin/plugin.go and
plugins_store.go, apimachinery's ``version.HighestSupportedVersion``); from 1.31 on they name
gRPC services and registration fixes the one used, the first of the plugin's list the kubelet
supports (1.34's dra_plugin_manager.go ``validateSupportedServices``).

Pure bookkeeping: the gRPC side (connections, the handshake) lives in ``registration``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubedra.api.goformat import go_quote, go_quoted_list
from kubedra.proto import services

DRA_PLUGIN_NAME = "kubernetes.io/dra"
PLUGIN_TYPE = "DRAPlugin"
CLIENT_TIMEOUT = 45.0

_GENERIC = re.compile(r"^\s*v?([0-9]+(?:\.[0-9]+)*)(.*)*$")


class PluginError(Exception):
    pass


def _log(text: str) -> str:
    return f"{DRA_PLUGIN_NAME}: {text}"


@dataclass(frozen=True, order=True)
class GenericVersion:
    """apimachinery's ``ParseGeneric`` result: numeric components, anything after ignored."""

    components: tuple[int, ...]

    @property
    def major(self) -> int:
        return self.components[0]

    def __str__(self) -> str:
        return ".".join(str(c) for c in self.components)


def parse_generic(text: str) -> GenericVersion:
    m = _GENERIC.match(text)
    if m is None:
        raise PluginError(f"could not parse {go_quote(text)} as version")
    parts = m.group(1).split(".")
    if len(parts) < 2:
        raise PluginError(f"illegal version string {go_quote(text)}")
    if parts[0].startswith("0") and parts[0] != "0":
        raise PluginError(f"illegal zero-prefixed version component {go_quote(parts[0])} "
                          f"in {go_quote(text)}")
    return GenericVersion(tuple(int(p) for p in parts))


def _go_list(items: Sequence[str]) -> str:
    return "[" + " ".join(items) + "]"


def choose_service(offered: Sequence[str], supported: Sequence[str]) -> str:
    """``chosenService`` (:func:`kubedra.proto.services.choose_service`) as a plugin error."""
    try:
        return services.choose_service(offered, supported)
    except services.NoService as e:
        raise PluginError(str(e)) from None


def highest_supported_version(versions: Sequence[str]) -> GenericVersion:
    if not versions:
        raise PluginError("empty array for supported versions")
    highest: GenericVersion | None = None
    last_error: PluginError | None = None
    for text in reversed(versions):
        try:
            v = parse_generic(text)
        except PluginError as e:
            last_error = e
            continue
        if v.major > 1:
            continue
        if highest is None or highest < v:
            highest = v
    if highest is None:
        raise PluginError("could not find a highest supported version from versions "
                          f"({_go_list(versions)}) reported: {last_error or '<nil>'}")
    if highest.major != 1:
        raise PluginError(f"highest supported version reported is {highest}, must be v1.x")
    return highest


@dataclass
class Plugin:
    """One registration of a driver. A new registration is a new object (and connection)."""

    name: str
    endpoint: str
    highest_version: GenericVersion | None  # 1.30's negotiation
    client_timeout: float = CLIENT_TIMEOUT
    version: str = "v1alpha3"  # 1.30: the API in use (v1alpha2 after the fallback)
    connection: Any = field(default=None, repr=False)
    service: str = ""  # from 1.31: the chosen gRPC service, e.g. ``v1.DRAPlugin``


class PluginStore:
    """Registered drivers by name, with the upstream validation and replacement rules.
    ``on_register(plugin)``/``on_deregister(plugin, last)`` tell the agent (connections;
    ResourceSlices when ``last``: the driver has no registration left). ``services``: the
    gRPC services the kubelet supports, newest first (1.34's era); without them, 1.30's semver
    negotiation, where a new registration replaces the driver's previous one."""

    def __init__(self, on_register: Callable[[Plugin], None] | None = None,
                 on_deregister: Callable[[Plugin, bool], None] | None = None,
                 services: Sequence[str] | None = None) -> None:
        self._plugins: dict[str, list[Plugin]] = {}  # by driver, oldest first
        self._on_register = on_register
        self._on_deregister = on_deregister
        self.services = services

    def get(self, name: str) -> Plugin:
        if not name:
            raise PluginError("plugin name is empty")
        plugins = self._plugins.get(name)
        if not plugins:
            raise PluginError(f"plugin name {name} not found in the list of registered "
                              "DRA plugins")
        return plugins[-1]  # the newest

    def names(self) -> list[str]:
        return sorted(self._plugins)

    def plugins(self) -> list[Plugin]:
        """Every registration held, of every driver."""
        return [p for ps in self._plugins.values() for p in ps]

    def _validate_versions(self, caller: str, name: str,
                           versions: Sequence[str] | None) -> GenericVersion:
        if not versions:
            raise PluginError(_log(f"{caller} for DRA plugin {go_quote(name)} failed. Plugin "
                                   "returned an empty list for supported versions"))
        try:
            highest = highest_supported_version(versions)
        except PluginError as e:
            raise PluginError(_log(
                f"{caller} for DRA plugin {go_quote(name)} failed. None of the versions "
                f"specified {go_quoted_list(versions)} are supported. err={e}")) from None
        existing = self._plugins.get(name, [None])[-1]
        if existing is not None and existing.highest_version is not None and not (
                existing.highest_version < highest):
            raise PluginError(_log(
                f"{caller} for DRA plugin {go_quote(name)} failed. Another plugin with the same "
                "name is already registered with a higher supported version: "
                f"{go_quote(str(existing.highest_version))}"))
        return highest

    def _choose_service(self, services: Sequence[str], name: str, endpoint: str,
                        versions: Sequence[str] | None) -> str:
        try:
            return choose_service(versions or (), services)
        except PluginError as e:
            raise PluginError(f"invalid supported gRPC versions of DRA driver plugin {name} at "
                              f"endpoint {endpoint}: {e}") from None

    def validate_plugin(self, name: str, endpoint: str, versions: Sequence[str] | None) -> None:
        if self.services is not None:
            self._choose_service(self.services, name, endpoint, versions)
            return
        try:
            self._validate_versions("ValidatePlugin", name, versions)
        except PluginError as e:
            raise PluginError(f"validation failed for DRA plugin {name} at endpoint "
                              f"{endpoint}: {e}") from None

    def register_plugin(self, name: str, endpoint: str, versions: Sequence[str] | None,
                        timeout: float | None = None) -> Plugin:
        """1.34: several endpoints of one driver may register (a rolling update); the newest
        is called."""
        if self.services is not None:
            service = self._choose_service(self.services, name, endpoint, versions)
            if any(p.endpoint == endpoint for p in self._plugins.get(name, ())):
                raise PluginError(f"endpoint {endpoint} already registered for DRA driver "
                                  f"plugin {name}")
            plugin = Plugin(name, endpoint, None, timeout or CLIENT_TIMEOUT, service=service)
            self._plugins.setdefault(name, []).append(plugin)
        else:
            highest = self._validate_versions("RegisterPlugin", name, versions)
            plugin = Plugin(name, endpoint, highest, timeout or CLIENT_TIMEOUT)
            self._plugins[name] = [plugin]
        if self._on_register:
            self._on_register(plugin)
        return plugin

    def deregister_plugin(self, plugin: Plugin) -> None:
        """``plugin``'s registration socket is gone. A registration already replaced (1.30)
        or already gone changes nothing."""
        plugins = self._plugins.get(plugin.name, [])
        left = [p for p in plugins if p is not plugin]
        if len(left) == len(plugins):
            return
        if left:
            self._plugins[plugin.name] = left
        else:
            del self._plugins[plugin.name]
        if self._on_deregister:
            self._on_deregister(plugin, not left)
