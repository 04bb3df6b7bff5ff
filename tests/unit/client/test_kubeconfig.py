"""kubeconfig rendering and loading."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from kubedra.client import kubeconfig


def test_render_then_load(tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text(kubeconfig.render("http://127.0.0.1:1234/",
                                      kubeconfig.Credentials(token="abc")))
    config = kubeconfig.load(path)
    assert config.server == "http://127.0.0.1:1234"
    assert config.token == "abc"
    assert config.ssl_context() is True


def test_inline_certificate_data_stays_in_memory() -> None:
    doc = {
        "current-context": "c",
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
        "clusters": [{"name": "k", "cluster": {
            "server": "https://127.0.0.1:6443",
            "certificate-authority-data": base64.b64encode(b"PEM").decode()}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
    }
    config = kubeconfig.from_dict(doc)
    assert (config.ca_file, config.ca_data) == (None, b"PEM")


def test_errors_are_clear(tmp_path: Path) -> None:
    with pytest.raises(kubeconfig.KubeconfigError, match="cannot read"):
        kubeconfig.load(tmp_path / "missing")
    with pytest.raises(kubeconfig.KubeconfigError, match="no context named 'x'"):
        kubeconfig.from_dict({"current-context": "x", "contexts": []})


def test_write_is_private_and_carries_the_ca_inline(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "config"
    kubeconfig.write(path, "https://127.0.0.1:6443", kubeconfig.Credentials(token="t"),
                     ca_pem=b"PEM")
    assert path.stat().st_mode & 0o777 == 0o600
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".kubeconfig-")]
    config = kubeconfig.load(path)
    assert (config.server, config.token) == ("https://127.0.0.1:6443", "t")
    assert config.ca_data == b"PEM"
