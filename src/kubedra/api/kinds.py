"""The kinds the system serves, one :class:`Kind` per served version of a resource: the view
of :data:`kubedra.api.scheme.SCHEME` that routing, discovery, OpenAPI, the codec, the client
and the CLI read. Adding a kind is a row in the scheme plus its model, validation and
strategy.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubedra.api.meta import TypedObject
from kubedra.api.release import DEFAULT_RELEASE, Release
from kubedra.api.scheme import (
    GVR,
    SCHEME,
    VERSION_PRIORITY,
    GroupResource,
    Served,
    openapi_package,
    served,
)


@dataclass(frozen=True, slots=True)
class Kind:
    """One served version of one resource, its facts copied flat for the request path."""

    group: str
    version: str
    kind: str
    plural: str
    singular: str
    namespaced: bool
    model: type[TypedObject]
    list_model: type[object]
    short_names: tuple[str, ...]
    subresources: tuple[str, ...]
    categories: tuple[str, ...]
    verbs: tuple[str, ...]
    #: The resource this is a version of (its storage version, all its versions).
    resource: GroupResource = field(compare=False)

    #: Derived once here: the request path reads them several times per request.
    list_kind: str = field(init=False, compare=False, repr=False)
    api_version: str = field(init=False, compare=False, repr=False)
    #: ``<plural>.<group>`` as used in error messages (``resourceslices.resource.k8s.io``).
    qualified: str = field(init=False, compare=False, repr=False)
    #: This version's key in the resource table and the tables bound to it.
    gvr: GVR = field(init=False, compare=False, repr=False)
    #: Objects are stored in this version (no conversion at the edge).
    stored: bool = field(init=False, compare=False, repr=False)
    #: The model of the version objects are stored in (the hub form).
    storage_model: type[TypedObject] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        derived = {
            "list_kind": self.kind + "List",
            "api_version": f"{self.group}/{self.version}" if self.group else self.version,
            "qualified": f"{self.plural}.{self.group}" if self.group else self.plural,
            "gvr": (self.group, self.version, self.plural),
            "stored": self.version == self.resource.storage,
            "storage_model": self.resource.row(self.resource.storage).model,
        }
        for name, value in derived.items():
            object.__setattr__(self, name, value)

    @classmethod
    def of(cls, res: GroupResource, served: Served) -> Kind:
        return cls(res.group, served.version, res.kind, res.plural, res.singular,
                   res.namespaced, served.model, served.list_model, res.short_names,
                   res.subresources, res.categories, res.verbs, res)

    @property
    def openapi_package(self) -> str:
        return openapi_package(self.group, self.version)

    @property
    def row(self) -> Served:
        """This version's row of the resource table (its conversions)."""
        return self.resource.row(self.version)


#: Every row of every release (what a server of one release serves is
#: :func:`kubedra.api.scheme.served`).
KINDS: tuple[Kind, ...] = tuple(Kind.of(res, s) for res in SCHEME for s in res.served)

_BY_GVK = {(k.group, k.version, k.kind): k for k in KINDS}


def _by_model() -> dict[type[object], Kind]:
    """Each model's (and list model's) kind: where versions share classes (v1beta2 is
    v1's), the preferred version."""
    out: dict[type[object], Kind] = {}
    for k in KINDS:
        order = VERSION_PRIORITY[k.group]
        for model in (k.model, k.list_model):
            have = out.get(model)
            if have is None or order.index(k.version) < order.index(have.version):
                out[model] = k
    return out


_BY_MODEL = _by_model()


def by_model(model: type[object]) -> Kind | None:
    """The kind a model (or list model) is written as: its preferred version."""
    return _BY_MODEL.get(model)


def by_gvk(group: str, version: str, kind: str) -> Kind | None:
    return _BY_GVK.get((group, version, kind))


def by_api_version(api_version: str, kind: str) -> Kind | None:
    group, _, version = api_version.rpartition("/")
    return _BY_GVK.get((group, version, kind))


def lookup(name: str, release: Release = DEFAULT_RELEASE) -> Kind | None:
    """Find a kind the way a CLI user names it: plural, singular, short name or Kind,
    optionally qualified with its group (``resourceslices.resource.k8s.io``); among the
    versions ``release`` serves by default, the resource's preferred one."""
    base, _, group = name.partition(".")
    low = base.lower()
    gvrs = served(release)
    for res in SCHEME:
        if group and res.group != group:
            continue
        if low in (res.plural, res.singular, res.kind.lower()) or low in res.short_names:
            preferred = res.preferred_among(gvrs)
            if preferred is not None:
                return _BY_GVK[(res.group, preferred.version, res.kind)]
    return None
