"""The resource table is complete and consistent: each served version has one key, every
layer's facts are bound to rows that exist under the same keys, and the preferred version
is the group's priority, not a row's position."""

from __future__ import annotations

from collections import Counter

from kubedra.api import kinds, scheme
from kubedra.api.features import FeatureGates
from kubedra.api.resource import v1 as resource_v1
from kubedra.apiserver.patch.schema import SCHEMAS
from kubedra.apiserver.registry import Registry
from kubedra.apiserver.tables import PRINTERS
from kubedra.registry import resources

SERVED = {k.gvr for k in kinds.KINDS}


def test_each_served_version_has_one_key() -> None:
    for counts in (Counter(k.gvr for k in kinds.KINDS),
                   Counter((k.group, k.version, k.kind) for k in kinds.KINDS),
                   Counter(res.prefix for res in scheme.SCHEME)):
        assert [key for key, n in counts.items() if n > 1] == []


def test_every_resource_is_stored_in_a_version_it_serves() -> None:
    for res in scheme.SCHEME:
        assert res.storage in {s.version for s in res.served}, res.kind
        assert res.storage_gvr in SERVED


def test_versions_have_a_priority_and_a_priority_names_served_versions() -> None:
    for res in scheme.SCHEME:
        assert {s.version for s in res.served} <= set(scheme.VERSION_PRIORITY[res.group])
    assert {(k.group, k.version) for k in kinds.KINDS} == {
        (g, v) for g, vs in scheme.VERSION_PRIORITY.items() for v in vs}


def test_strategies_are_bound_to_every_resource_and_nothing_else() -> None:
    assert set(resources.strategies(FeatureGates())) == {r.storage_gvr for r in scheme.SCHEME}


def test_every_served_version_has_its_patch_tags_and_nothing_else() -> None:
    assert set(SCHEMAS) == SERVED


def test_printers_are_for_served_versions() -> None:
    assert set(PRINTERS) <= SERVED


def test_a_module_of_models_is_one_openapi_package() -> None:
    """A module's package is that of the preferred version among those serving it
    (resource.k8s.io v1beta2 is served with v1's classes)."""
    for k in kinds.KINDS:
        preferred = kinds.by_model(k.model)
        assert preferred is not None
        assert scheme.OPENAPI_PACKAGES[k.model.__module__] == preferred.openapi_package
    assert kinds.by_model(resource_v1.ResourceClaim) == kinds.by_gvk(
        "resource.k8s.io", "v1", "ResourceClaim")
    assert scheme.openapi_package("resource.k8s.io", "v1alpha2") == (
        "io.k8s.api.resource.v1alpha2")
    assert scheme.openapi_package("", "v1") == "io.k8s.api.core.v1"


def test_the_preferred_version_is_the_groups_first_priority() -> None:
    for res in scheme.SCHEME:
        found = kinds.lookup(f"{res.plural}.{res.group}" if res.group else res.plural)
        assert found is not None and found.resource is res
        first = next(v for v in scheme.VERSION_PRIORITY[res.group]
                     if v in {s.version for s in res.served})
        assert found.version == res.preferred.version == first
    assert Registry().group_versions() == {
        g: list(vs) for g, vs in scheme.VERSION_PRIORITY.items()}


def test_a_kind_is_the_view_of_its_row() -> None:
    for k in kinds.KINDS:
        assert kinds.by_gvk(k.group, k.version, k.kind) is k
        assert k.resource.kind == k.kind and k.resource.plural == k.plural
        assert k.model in {s.model for s in k.resource.served}
