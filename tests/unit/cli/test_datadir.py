"""A data directory is made 0700 (parents too), and an existing looser one is tightened."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from kubedra.cli.datadir import private_directory


def test_new_directory_is_private(tmp_path: Path) -> None:
    old = os.umask(0)  # even with a permissive umask
    try:
        made = private_directory(tmp_path / "a" / "data")
    finally:
        os.umask(old)
    assert stat.S_IMODE(made.stat().st_mode) == 0o700


def test_existing_directory_is_tightened(tmp_path: Path) -> None:
    loose = tmp_path / "data"
    loose.mkdir()
    loose.chmod(0o755)
    private_directory(loose)
    assert stat.S_IMODE(loose.stat().st_mode) == 0o700
