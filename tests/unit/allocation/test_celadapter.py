"""The allocation engine on the real CEL adapter (kubedra.cel, StoredExpressions)."""

from __future__ import annotations

import pytest

from kubedra.allocation.celadapter import cel_selectors, compile_selector
from kubedra.allocation.instance import Instance
from kubedra.allocation.selectors import SelectorCompileError
from kubedra.api.codec import decode
from kubedra.api.resource.v1alpha2 import NamedResourcesInstance


def instance(raw: dict[str, object]) -> Instance:
    inst = decode(raw, NamedResourcesInstance)
    return Instance(inst.name, inst.attributes or (), "slice", 0)


def test_compile_errors_carry_upstream_detail() -> None:
    with pytest.raises(SelectorCompileError, match="must evaluate to bool"):
        compile_selector("1")
    with pytest.raises(SelectorCompileError, match="undeclared reference to 'nosuchvar'"):
        compile_selector("nosuchvar")
    # ip() is only in the StoredExpressions environment, which the scheduler uses
    compile_selector('ip("10.0.0.1").family() == 4')


def test_verdicts_and_errors() -> None:
    sels = cel_selectors()
    inst = instance({"name": "gpu-0", "attributes": [
        {"name": "model", "string": "a100"}, {"name": "memory", "quantity": "40Gi"},
        {"name": "driverVersion", "version": "1.2.3"}]})
    assert sels.get('attributes.string["model"] == "a100"').verdict(inst) is True
    assert sels.get('attributes.quantity["memory"].compareTo(quantity("80Gi")) >= 0') \
        .verdict(inst) is False
    assert sels.get('attributes.version["driverVersion"].isGreaterThan(semver("1.0.0"))') \
        .verdict(inst) is True
    assert sels.get('attributes.bool["healthy"]').verdict(inst) == "no such key: healthy"
    assert inst.prepared is not None  # converted once, reused by every selector
    bad = instance({"name": "x", "attributes": [{"name": "v", "version": "v1"}]})
    verdict = sels.get("true").verdict(bad)
    assert isinstance(verdict, str)
    assert verdict.startswith("extract attributes with type version: ")
