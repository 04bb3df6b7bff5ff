"""The selector environments, built from a versioned option list like upstream's EnvSet.

apiserver:pkg/cel/environment/base.go filters options by the compatibility version:
NewExpressions uses ``DefaultCompatibilityVersion``, StoredExpressions uses every option not
removed. Two families share the base options:

* v1alpha2 (:class:`EnvType` alone; apiserver@v0.30, compatibility 1.29): DRA adds its seven
  attribute variables and the semver library at 1.0
  (DRA:structured/namedresources/cel/compile.go@v0.30.0), so both envs have them.
* resource.k8s.io/v1 (:class:`DeviceEnv`; apiserver@v0.34, compatibility 1.33): the variable
  ``device`` (DRA:cel/compile.go@v0.34) and the apiserver semver library's normalize
  overloads (1.33). NewExpressions declares ``device`` with ``allowMultipleAllocations`` only
  when DRAConsumableCapacity is on; StoredExpressions ignores feature checks and always has
  it. Its type (_proto.py) serves type checking; programs run in
  :func:`build_device_evaluation`'s env, where ``device`` is a plain map.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_optional

from kubedra.cel import _k8s, _lists, _metered, _net, _numeric, _strings
from kubedra.cel._decl import Overloads
from kubedra.cel._proto import DRA_DEVICE, DRA_DEVICE_BASE, POOL, QUANTITY, SEMVER

T = cel.Type
Version = tuple[int, int]
NEW_EXPRESSIONS_VERSION: Final = (1, 29)
DEVICE_NEW_EXPRESSIONS_VERSION: Final = (1, 33)
_FOREVER: Final = (1 << 32, 1 << 32)


class EnvType(enum.Enum):
    """``environment.Type``: which environment a selector is compiled in."""

    NEW_EXPRESSIONS = "NewExpressions"
    STORED_EXPRESSIONS = "StoredExpressions"


@dataclass(frozen=True, slots=True)
class DeviceEnv:
    """The resource.k8s.io/v1 environment of ``device`` selectors (``Options`` of
    DRA:cel/compile.go@v0.34: its EnvType and ``EnableConsumableCapacity``)."""

    env_type: EnvType = EnvType.STORED_EXPRESSIONS
    consumable_capacity: bool = False

    @property
    def device_type(self) -> str:
        gated = self.consumable_capacity or self.env_type is EnvType.STORED_EXPRESSIONS
        return DRA_DEVICE if gated else DRA_DEVICE_BASE


AnyEnv = EnvType | DeviceEnv


@dataclass(frozen=True, slots=True)
class VersionedOption:
    """Overloads/extensions/variables introduced (and maybe removed) at a version."""

    introduced: Version
    overloads: Callable[[], Overloads] | None = None
    optional_types: bool = False
    bindings: bool = False
    variables: dict[str, str] | None = None
    removed: Version | None = None
    note: str = ""


ATTRIBUTE_VARIABLES: Final = {
    "attributes.quantity": f"map<string,{QUANTITY}>",
    "attributes.bool": "map<string,bool>",
    "attributes.int": "map<string,int>",
    "attributes.intslice": "map<string,list<int>>",
    "attributes.string": "map<string,string>",
    "attributes.stringslice": "map<string,list<string>>",
    "attributes.version": f"map<string,{SEMVER}>",
}

BASE_OPTIONS: Final = (
    VersionedOption((1, 0), _numeric.same_type_overloads, note="standard <, <=, >, >="),
    VersionedOption((1, 28), _numeric.cross_type_overloads,
                    note="CrossTypeNumericComparisons(true)"),
    VersionedOption((1, 0), _metered.overloads, note="string functions charged by size"),
    VersionedOption((1, 0), _k8s.url_overloads, note="library.URLs"),
    VersionedOption((1, 0), _lists.regex_overloads, note="library.Regex"),
    VersionedOption((1, 0), _lists.list_overloads, note="library.Lists"),
    # 1.27 library.Authz: declared upstream but unusable without an `authorizer` variable
    VersionedOption(
        (1, 28),
        _k8s.quantity_and_semver_overloads,
        optional_types=True,
        note="OptionalTypes, library.Quantity (+ DRA SemverLib, 1.0; same names)",
    ),
    VersionedOption((1, 29), _strings.string_overloads, note="ext.Strings(v2)"),
    VersionedOption((1, 29), _strings.set_overloads, note="ext.Sets"),
    VersionedOption((1, 30), _net.net_overloads, note="library.IP, library.CIDR"),
)
OPTIONS: Final = (
    *BASE_OPTIONS,
    VersionedOption((1, 0), variables=ATTRIBUTE_VARIABLES, note="DRA attribute variables"),
)


def _active(opt: VersionedOption, version: Version) -> bool:
    return opt.introduced <= version and (opt.removed is None or opt.removed > version)


def build(env: AnyEnv) -> Any:
    """A cel-cpp ``Env`` for ``env`` (a v1alpha2 EnvType or a v1 DeviceEnv)."""
    if isinstance(env, EnvType):
        new = NEW_EXPRESSIONS_VERSION
        return _build(new if env is EnvType.NEW_EXPRESSIONS else _FOREVER, OPTIONS)
    stored = env.env_type is EnvType.STORED_EXPRESSIONS
    version = _FOREVER if stored else DEVICE_NEW_EXPRESSIONS_VERSION
    return _build(version, _device_options(env.device_type))


def build_device_evaluation() -> Any:
    """The env v1 device programs run in: every device option, ``device`` a plain map.

    cel-expr-python binds a message-typed variable only from a protobuf message, and ours
    cannot hold Quantity/Semver values in its Struct maps; the checked AST (checked against
    the message type) runs unchanged on a map with the same keys."""
    return _build(_FOREVER, _device_options("map<string,dyn>"))


def _device_options(device_type: str) -> tuple[VersionedOption, ...]:
    return (
        *BASE_OPTIONS,
        VersionedOption((1, 31), variables={"device": device_type}, bindings=True,
                        note="DRA: the device variable, ext.Bindings (cel.bind)"),
        VersionedOption((1, 33), _k8s.semver_normalize_overloads,
                        note="library.SemverLib(SemverVersion(1)): the normalize overloads"),
    )


def _build(version: Version, options: tuple[VersionedOption, ...]) -> Any:
    by_name: dict[str, list[Any]] = {}
    variables: dict[str, Any] = {}
    extensions: list[Any] = []
    for opt in options:
        if not _active(opt, version):
            continue
        if opt.overloads is not None:
            for name, overload in opt.overloads():
                by_name.setdefault(name, []).append(overload)
        if opt.optional_types:
            extensions.append(ext_optional.ExtOptional())
        if opt.bindings:
            extensions.append(ext_bindings.ExtBindings())
        for var, sig in (opt.variables or {}).items():
            variables[var] = T(sig)
    functions = [cel.FunctionDecl(name, ovs) for name, ovs in by_name.items()]
    return cel.NewEnv(POOL, config=_numeric.STDLIB_CONFIG, variables=variables,
                      extensions=extensions, functions=functions)
