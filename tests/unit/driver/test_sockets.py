"""Claiming socket paths: stale files replaced, live sockets and other files refused."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from kubedra.driver import sockets


def test_missing_path_gets_its_directories(short_dir: Path) -> None:
    path = short_dir / "a" / "b" / "x.sock"
    sockets.claim_socket_path(path)
    assert path.parent.is_dir() and not path.exists()


def test_stale_socket_is_removed(short_dir: Path) -> None:
    path = short_dir / "x.sock"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(path))
    sockets.claim_socket_path(path)
    assert not path.exists()


def test_live_socket_is_an_error(short_dir: Path) -> None:
    path = short_dir / "x.sock"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(path))
        s.listen()
        with pytest.raises(sockets.SocketPathError, match="in use by a live process"):
            sockets.claim_socket_path(path)
        assert path.exists()


def test_regular_file_is_left_alone(short_dir: Path) -> None:
    path = short_dir / "x.sock"
    path.write_text("data")
    with pytest.raises(sockets.SocketPathError, match="is not a unix socket"):
        sockets.claim_socket_path(path)
    assert path.read_text() == "data"


def test_path_length_limit(short_dir: Path) -> None:
    path = short_dir / ("d" * 120) / "x.sock"
    with pytest.raises(sockets.SocketPathError, match="over the unix socket limit of 107"):
        sockets.claim_socket_path(path)
    sockets.release_socket_path(short_dir / "gone.sock")  # a missing file is fine
