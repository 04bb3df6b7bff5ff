"""CDI names, spec validation and atomic spec files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubedra.driver import cdi


def test_qualified_names() -> None:
    assert cdi.qualified_name("gpu.example.com/test", "claim-1") == "gpu.example.com/test=claim-1"
    assert cdi.parse_qualified_name("nvidia.com/gpu=0:mig-1") == ("nvidia.com", "gpu", "0:mig-1")


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("nvidia.com/gpu", "must be vendor/class=name"),
        ("gpu=0", "must be vendor/class"),
        ("1vendor/gpu=0", "invalid vendor '1vendor'"),
        ("vendor/gpu.x=0", "invalid class 'gpu.x'"),
        ("vendor/gpu=-0", "invalid device name '-0'"),
        ("vendor/gpu=", "invalid device name ''"),
    ],
)
def test_invalid_names_say_what_is_wrong(name: str, message: str) -> None:
    with pytest.raises(cdi.CDIError, match=message.replace(".", r"\.")):
        cdi.parse_qualified_name(name)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ([], "spec: must be an object"),
        ({"cdiVersion": "9.9", "kind": "a/b", "devices": []}, "cdiVersion: unsupported"),
        ({"cdiVersion": "0.3.0", "kind": "ab", "devices": [{"name": "x"}]}, "must be vendor/class"),
        ({"cdiVersion": "0.3.0", "kind": "a/b", "devices": []}, "devices: must be a non-empty"),
        (
            {"cdiVersion": "0.3.0", "kind": "a/b", "devices": [{"name": "x"}, {"name": "x"}]},
            r"devices\[1\].name: duplicate",
        ),
        (
            {
                "cdiVersion": "0.3.0",
                "kind": "a/b",
                "devices": [{"name": "x", "containerEdits": {"env": ["NOVALUE"]}}],
            },
            r"devices\[0\].containerEdits.env\[0\]: invalid environment variable",
        ),
    ],
)
def test_spec_validation(spec: object, message: str) -> None:
    with pytest.raises(cdi.CDIError, match=message):
        cdi.validate_spec(spec)


def test_write_is_atomic_and_remove_is_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "cdi" / "vendor-uid.json"
    spec = cdi.make_spec("vendor.com/test", {"claim-uid": ["A=1"], "other": []})
    cdi.write_spec(path, spec)
    assert json.loads(path.read_text()) == {
        "cdiVersion": "0.3.0",
        "kind": "vendor.com/test",
        "devices": [
            {"name": "claim-uid", "containerEdits": {"env": ["A=1"]}},
            {"name": "other", "containerEdits": {}},
        ],
    }
    with pytest.raises(cdi.CDIError):
        cdi.write_spec(path, {**spec, "kind": "broken"})
    assert json.loads(path.read_text()) == spec  # a rejected spec changes nothing
    assert [p.name for p in path.parent.iterdir()] == ["vendor-uid.json"]  # no temp files left
    cdi.remove_spec(path)
    cdi.remove_spec(path)
    assert not path.exists()
