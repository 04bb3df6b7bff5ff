"""The API server's data directory is private: ``kubedra.db``, its WAL, shared-memory index
and lock are 0600 and the directory 0700, for a new data directory and, tightened at start,
for one an older version left 0755 with 0644 files (every object was readable by any local
user)."""

from __future__ import annotations

import stat
from pathlib import Path

import requests

from kubedra.apiserver.pki import ClusterPki
from kubedra.client import kubeconfig as kubeconfig_file
from tests.e2e.conftest import apiserver_process

STORE_FILES = ("kubedra.db", "kubedra.db-wal", "kubedra.db-shm", "kubedra.db.lock")


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _write_something(data: Path, kubeconfig: Path) -> None:
    config = kubeconfig_file.load(kubeconfig)
    resp = requests.post(f"{config.server}/api/v1/namespaces",
                         json={"metadata": {"name": "private"}},
                         headers={"Authorization": "Bearer tok"},
                         verify=str(ClusterPki(data / "pki").ca_cert), timeout=10)
    assert resp.status_code in (201, 409), resp.text  # 409: the old store is still there


def test_store_files_and_directory_are_private(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o755)  # as older versions made it (the server's log goes here too)
    data.chmod(0o755)
    with apiserver_process(data, "--token", "tok") as kubeconfig:
        _write_something(data, kubeconfig)
        assert _mode(data) == 0o700
        for name in STORE_FILES:
            assert _mode(data / name) == 0o600, name
    # an older version's data directory: everything readable by all
    (data / "kubeconfig").unlink()  # written again once the server is up
    data.chmod(0o755)
    for name in STORE_FILES:
        if (data / name).exists():
            (data / name).chmod(0o644)
    with apiserver_process(data, "--token", "tok") as kubeconfig:
        _write_something(data, kubeconfig)
        assert _mode(data) == 0o700
        for name in STORE_FILES:
            assert _mode(data / name) == 0o600, name
