"""One live agent per root dir, and a holder identity that survives a restart on it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kubedra.kubelet.holder import RootDirInUse, holder_identity, lock_root_dir


def test_a_root_dir_has_one_agent(tmp_path: Path) -> None:
    fd = lock_root_dir(tmp_path / "root")
    try:
        with pytest.raises(RootDirInUse, match=f"is in use by another node agent "
                                               f"\\(pid {os.getpid()}\\)"):
            lock_root_dir(tmp_path / "root")
    finally:
        os.close(fd)
    os.close(lock_root_dir(tmp_path / "root"))  # released with its holder


def test_holder_identity_is_kept_per_root_dir(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    first = holder_identity(a, "node-0")
    assert first.startswith("node-0_") and holder_identity(a, "node-0") == first
    assert holder_identity(b, "node-0") != first
