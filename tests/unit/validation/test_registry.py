"""The validation registry covers every served kind and its entries really validate."""

from __future__ import annotations

from kubedra.api import kinds
from kubedra.api.features import FeatureGates
from kubedra.validation.registry import rules_for


def test_every_kind_has_rules() -> None:
    for kind in kinds.KINDS:
        rules = rules_for(kind.group, kind.kind)
        assert rules is not None, kind.kind
        has_status = "status" in kind.subresources
        assert (rules.validate_status_update is not None) == has_status, kind.kind


def test_entries_validate_an_empty_object() -> None:
    """An object without a name is invalid for every kind (create) and every update."""
    gates = FeatureGates()
    for kind in kinds.KINDS:
        rules = rules_for(kind.group, kind.kind)
        assert rules is not None
        obj = kind.model()
        if kind.namespaced:
            obj.metadata.namespace = "default"
        if rules.default is not None:
            rules.default(obj, gates)
        fields = {str(e.field) for e in rules.validate(obj, gates)}
        assert "metadata.name" in fields, kind.kind
        update = {str(e.field) for e in rules.validate_update(obj, kind.model(), gates)}
        assert "metadata.resourceVersion" in update, kind.kind
        if rules.validate_status_update is not None:
            status = rules.validate_status_update(obj, kind.model(), gates)
            assert "metadata.resourceVersion" in {str(e.field) for e in status}, kind.kind
