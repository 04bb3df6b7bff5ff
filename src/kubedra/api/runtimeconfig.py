"""``--runtime-config``: which API group versions are on beyond a release's defaults, parsed
and applied as kube-apiserver does (``apiserver/pkg/server/resourceconfig``, options
validation), with its error texts.

``key=value`` pairs, comma-separated; a key is ``api/all``, ``api/ga``, ``api/beta``,
``api/alpha`` (value ``true`` or ``false``), ``group/version`` or ``group/version/resource``
(an empty value is ``true``). A more specific key wins: resource over version over the
``api/*`` keys, which apply in that order. ``api/v1`` names the core group. One difference:
kubedra's core ``v1`` is always served (it needs its namespaces), so ``api/*`` keys pass it by
and ``api/v1=false`` is refused.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

from kubedra.api.goformat import go_quote, parse_bool

GroupVersion = tuple[str, str]

_MATCHERS: Final = {
    "api/all": re.compile(r""),
    "api/ga": re.compile(r"v\d+$"),
    "api/beta": re.compile(r"v\d+beta\d+$"),
    "api/alpha": re.compile(r"v\d+alpha\d+$"),
}
_CORE = ("", "v1")


class RuntimeConfigError(ValueError):
    """A ``--runtime-config`` value kube-apiserver would refuse (same message)."""


@dataclass(frozen=True, slots=True)
class RuntimeConfig:
    """Parsed overrides; :meth:`enabled` applies them to one served version."""

    #: ``api/*`` keys in the order they apply, with their value.
    matchers: tuple[tuple[str, bool], ...] = ()
    versions: Mapping[GroupVersion, bool] = field(
        default_factory=lambda: MappingProxyType({}))
    resources: Mapping[tuple[str, str, str], bool] = field(
        default_factory=lambda: MappingProxyType({}))

    def enabled(self, group: str, version: str, plural: str, default: bool) -> bool:
        """Whether ``group/version/plural`` is served; ``default`` is its release's."""
        found = self.resources.get((group, version, plural))
        if found is not None:
            return found
        found = self.versions.get((group, version))
        if found is not None:
            return found
        if (group, version) == _CORE:
            return default
        for key, value in self.matchers:
            if _MATCHERS[key].match(version):
                default = value
        return default


def parse_runtime_config(text: str, registered: Collection[GroupVersion]) -> RuntimeConfig:
    """Parse ``text`` against the group versions a release has (served or not)."""
    pairs: dict[str, str] = {}
    for item in text.split(","):
        if item:
            key, _, value = item.partition("=")
            pairs[key.strip()] = value.strip()
    if pairs == {"api/all": "false"}:
        raise RuntimeConfigError("invalid key with only api/all=false")
    groups = {group for group, _ in registered}
    matchers: list[tuple[str, bool]] = []
    versions: dict[GroupVersion, bool] = {}
    resources: dict[tuple[str, str, str], bool] = {}
    unknown: set[str] = set()
    for key in _MATCHERS:
        if key in pairs:
            value = pairs[key]
            if value not in ("true", "false"):
                raise RuntimeConfigError(f"invalid value {key}={value}")
            matchers.append((key, value == "true"))
    for key, value in pairs.items():
        if key in _MATCHERS:
            continue
        tokens = key.split("/")
        if len(tokens) not in (2, 3):
            raise RuntimeConfigError(f"runtime-config invalid key {key}")
        group, version = tokens[0], tokens[1]
        if group == "api":
            group = ""
        if group not in groups:
            unknown.add(tokens[0])
            continue
        if (group, version) not in registered:
            shown = f"{group}/{version}" if group else version
            raise RuntimeConfigError(f"group version {shown} that has not been registered")
        on = _parse_value(key, value)
        if (group, version) == _CORE and not on:
            raise RuntimeConfigError(f"invalid key {key}: kubedra always serves the core v1")
        if len(tokens) == 2:
            versions[(group, version)] = on
        elif tokens[2].lower() != tokens[2]:
            raise RuntimeConfigError(
                f"invalid key {key}: group/version/resource and resource is always lowercase "
                f"plural, not {go_quote(tokens[2])}")
        else:
            resources[(group, version, tokens[2])] = on
    if unknown:
        raise RuntimeConfigError(f"unknown api groups {','.join(sorted(unknown))}")
    return RuntimeConfig(tuple(matchers), MappingProxyType(versions),
                         MappingProxyType(resources))


def _parse_value(key: str, value: str) -> bool:
    """``strconv.ParseBool``, an empty value being ``true``."""
    try:
        return parse_bool(value) if value else True
    except ValueError as err:
        raise RuntimeConfigError(f"invalid value of {key}: {value}, err: {err}") from None
