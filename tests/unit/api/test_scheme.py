"""The resource table is complete and consistent: each served version has one key, every
layer's facts are bound to rows that exist under the same keys, and the preferred version
is the group's priority, not a row's position."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest

from kubedra.api import kinds, scheme
from kubedra.api.features import FeatureGates
from kubedra.api.release import R1_30, R1_34, RELEASES, Release
from kubedra.api.resource import v1 as resource_v1
from kubedra.api.runtimeconfig import parse_runtime_config
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


@pytest.mark.parametrize("release", RELEASES)
def test_the_preferred_version_is_the_groups_first_priority(release: Release) -> None:
    gvrs = scheme.served(release)
    for res in scheme.SCHEME:
        mine = {s.version for s in res.served if (res.group, s.version, res.plural) in gvrs}
        if not mine:
            continue
        found = kinds.lookup(f"{res.plural}.{res.group}" if res.group else res.plural, release)
        assert found is not None and found.resource is res
        first = next(v for v in scheme.VERSION_PRIORITY[res.group] if v in mine)
        assert found.version == first
    registry = Registry(FeatureGates.for_release(release))
    assert registry.group_versions() == {
        g: [v for v in vs if (g, v) in {(g2, v2) for g2, v2, _ in gvrs}]
        for g, vs in scheme.VERSION_PRIORITY.items()
        if any(g2 == g for g2, _, _ in gvrs)}


def test_a_kind_is_the_view_of_its_row() -> None:
    for k in kinds.KINDS:
        assert kinds.by_gvk(k.group, k.version, k.kind) is k
        assert k.resource.kind == k.kind and k.resource.plural == k.plural
        assert k.model in {s.model for s in k.resource.served}


def test_1_30_serves_every_row_it_has_and_v1alpha2() -> None:
    gvrs = scheme.served(R1_30)
    assert ("resource.k8s.io", "v1alpha2", "resourceclaims") in gvrs
    assert gvrs == {(res.group, s.version, res.plural) for res in scheme.SCHEME
                    for s in res.served if R1_30 in s.releases}
    assert Registry().served == gvrs


def test_1_34_serves_no_v1alpha2_and_only_its_rows_on_by_default() -> None:
    gvrs = scheme.served(R1_34)
    assert not any(v == "v1alpha2" for _, v, _ in gvrs)
    for res in scheme.SCHEME:
        for s in res.served:
            gvr = (res.group, s.version, res.plural)
            assert (gvr in gvrs) == (R1_34 in s.releases and s.on), gvr
    registry = Registry(FeatureGates.for_release(R1_34))
    assert registry.release is R1_34
    assert registry.get("resource.k8s.io", "v1alpha2", "resourceclaims") is None
    assert registry.by_kind("resource.k8s.io/v1alpha2", "ResourceClaim") is None
    assert registry.get("batch", "v1", "jobs") is not None
    assert "v1alpha2" not in registry.group_versions().get("resource.k8s.io", [])
    assert kinds.lookup("resourceclaimparameters", R1_34) is None
    assert kinds.lookup("pods", R1_34) is kinds.by_gvk("", "v1", "Pod")


def test_runtime_config_turns_an_off_row_on_and_an_on_row_off(
        monkeypatch: pytest.MonkeyPatch) -> None:
    job = next(res for res in scheme.SCHEME if res.plural == "jobs")
    off = scheme.Served("v1", job.served[0].model, job.served[0].list_model,
                        frozenset({R1_34}), on=False)
    monkeypatch.setattr(scheme, "SCHEME", (dataclasses.replace(job, served=(off,)),))
    assert scheme.served(R1_34) == frozenset()
    assert scheme.registered(R1_34) == {("batch", "v1")}
    on = parse_runtime_config("batch/v1=true", scheme.registered(R1_34))
    assert scheme.served(R1_34, on) == {("batch", "v1", "jobs")}
    assert scheme.served(R1_30, on) == frozenset()  # not a row of 1.30


def test_runtime_config_turns_a_version_off_in_the_registry() -> None:
    config = parse_runtime_config("batch/v1=false", scheme.registered(R1_34))
    registry = Registry(FeatureGates.for_release(R1_34), runtime_config=config)
    assert registry.get("batch", "v1", "jobs") is None
    assert "batch" not in registry.group_versions()
