"""The etcd flags of ``kubedra apiserver`` and ``kubedra up``: bad values are clear usage
errors that start nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kubedra.cli.apiserver import apiserver
from kubedra.cli.up import up


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--etcd-servers", "127.0.0.1:2379"], "want http(s)://host:port"),
        (["--etcd-servers", "http://a:1,https://b:2"], "mix http and https"),
        (["--etcd-cafile", "ca.pem"], "need --etcd-servers"),
    ],
)
def test_apiserver_rejects_bad_etcd_flags(tmp_path: Path, args: list[str], message: str) -> None:
    result = CliRunner().invoke(apiserver, ["--data-dir", str(tmp_path / "d"), *args])
    assert result.exit_code == 2
    assert message in result.output
    assert not (tmp_path / "d").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--apiservers", "2"], "several API servers need etcd"),
        (["--etcd", "--etcd-servers", "http://a:1"], "exclude each other"),
        (["--apiservers", "0"], "0 is not in the range"),
    ],
)
def test_up_rejects_bad_etcd_flags(tmp_path: Path, args: list[str], message: str) -> None:
    result = CliRunner().invoke(up, ["--data-dir", str(tmp_path / "d"), "--port", "0", *args])
    assert result.exit_code == 2
    assert message in result.output
    assert not (tmp_path / "d").exists()
