"""Which node agent holds a Node: its root dir's lock and its identity in the Node's Lease.

An agent locks ``ROOT/lock`` (an flock, released however the process ends, and naming the
holder's pid), so one root dir has at most one live agent. It writes its Lease's
``holderIdentity`` as ``<node>_<id>``, the id kept in ``ROOT/node-lease-holder``: an agent
restarted on the same root dir (after a crash or ``kill -9``, under a supervisor) is provably
the previous holder and renews the Lease at once, while an agent with another root dir is
refused until the Lease has expired (``renewTime`` + ``leaseDuration`` in the past), so two
live agents never take turns publishing one Node's ResourceSlices.
"""

from __future__ import annotations

import fcntl
import os
import secrets
from pathlib import Path

LOCK_FILE = "lock"
HOLDER_FILE = "node-lease-holder"


class RootDirInUse(Exception):
    pass


def lock_root_dir(root_dir: Path) -> int:
    """Hold ``ROOT/lock`` with our pid in it; the returned descriptor must stay open for as
    long as the agent runs."""
    root_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(root_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.read(fd, 32).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise RootDirInUse(f"root dir {root_dir} is in use by another node agent "
                           f"(pid {holder})") from None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def holder_identity(root_dir: Path, node: str) -> str:
    """``<node>_<id>``, the id made once per root dir and kept there."""
    path = root_dir / HOLDER_FILE
    try:
        agent_id = path.read_text().strip()
    except FileNotFoundError:
        agent_id = ""
    if not agent_id:
        agent_id = secrets.token_hex(4)
        path.write_text(agent_id + "\n")
    return f"{node}_{agent_id}"
