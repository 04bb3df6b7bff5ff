"""A data directory (``--data-dir``): it holds the store, keys and kubeconfigs, so only its
owner may enter it, as kube-apiserver's and etcd's data directories."""

from __future__ import annotations

from pathlib import Path

MODE = 0o700


def private_directory(path: Path) -> Path:
    """Create ``path`` (and missing parents) with mode 0700, or tighten an existing one to
    0700 (data directories made by older versions were 0755)."""
    path.mkdir(mode=MODE, parents=True, exist_ok=True)
    if path.stat().st_mode & 0o777 != MODE:
        path.chmod(MODE)
    return path
