"""The plugin registry watcher: inotify events for Unix sockets (also in sub-directories and
those present at start), nothing for dot files or regular files, removal reported."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from pathlib import Path

from kubedra.kubelet.watcher import PluginWatcher


def bind(path: Path) -> socket.socket:
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(path))
    return s


async def next_event(events: AsyncIterator[tuple[str, str]]) -> tuple[str, str]:
    return await asyncio.wait_for(anext(events), 5)


async def test_sockets_appear_and_go(tmp_path: Path) -> None:
    registry = tmp_path / "plugins_registry"
    registry.mkdir()
    early = bind(registry / "early.sock")
    events = PluginWatcher(registry).events()
    assert await next_event(events) == ("add", str(registry / "early.sock"))
    (registry / "plain-file").write_text("not a socket")
    hidden = bind(registry / ".hidden.sock")
    late = bind(registry / "late.sock")
    assert await next_event(events) == ("add", str(registry / "late.sock"))
    sub = registry / "sub"
    sub.mkdir()
    await asyncio.sleep(0.05)  # the new directory's watch is added from its create event
    nested = bind(sub / "nested.sock")
    assert await next_event(events) == ("add", str(sub / "nested.sock"))
    (registry / "late.sock").unlink()
    assert await next_event(events) == ("remove", str(registry / "late.sock"))
    for s in (early, hidden, late, nested):
        s.close()
    await events.aclose()


async def test_missing_directory_is_created(tmp_path: Path) -> None:
    registry = tmp_path / "root" / "plugins_registry"
    events = PluginWatcher(registry).events()
    task = asyncio.ensure_future(anext(events))
    await asyncio.sleep(0.05)
    assert registry.is_dir()
    s = bind(registry / "a.sock")
    assert await asyncio.wait_for(task, 5) == ("add", str(registry / "a.sock"))
    s.close()
    await events.aclose()
