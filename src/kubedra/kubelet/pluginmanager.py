"""Plugin discovery: registration sockets seen by the watcher become registered drivers
(upstream pluginmanager's desired/actual state and reconciler). A failed registration is
retried with exponential backoff (500 ms doubling to 2 m 2 s); a removed socket deregisters
what it registered; a socket re-created in place (a new driver process) deregisters, then
registers anew.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

from kubedra.kubelet.plugins import Plugin, PluginStore
from kubedra.kubelet.watcher import PluginWatcher
from kubedra.tasks import cancel_and_wait

log = logging.getLogger(__name__)

BACKOFF_INITIAL = 0.5
BACKOFF_MAX = 122.0

Register = Callable[[str, PluginStore], Awaitable[Plugin]]


class PluginManager:
    def __init__(self, registry_dir: Path, store: PluginStore, register: Register) -> None:
        self.watcher = PluginWatcher(registry_dir)
        self.store = store
        self.register = register
        self.registered: dict[str, Plugin] = {}  # socket path -> its registration
        self._tasks: dict[str, asyncio.Task[None]] = {}

    async def run(self) -> None:
        try:
            async for kind, path in self.watcher.events():
                self._forget(path)
                if kind == "add":
                    self._tasks[path] = asyncio.create_task(self._register(path),
                                                            name=f"register {path}")
        finally:
            await cancel_and_wait(*self._tasks.values())

    def _forget(self, path: str) -> None:
        """Stop a pending registration of ``path`` and deregister what it registered."""
        task = self._tasks.pop(path, None)
        if task is not None:
            task.cancel()
        plugin = self.registered.pop(path, None)
        if plugin is not None:
            log.info("driver %s deregistered (socket %s gone)", plugin.name, path)
            self.store.deregister_plugin(plugin)

    async def _register(self, path: str) -> None:
        delay = BACKOFF_INITIAL
        while True:
            try:
                plugin = await self.register(path, self.store)
                self.registered[path] = plugin
                log.info("driver %s registered at %s", plugin.name, plugin.endpoint)
                return
            except asyncio.CancelledError:
                raise
            except Exception as e:
                log.warning("registering plugin socket %s failed (retry in %.1f s): %s",
                            path, delay, e)
            await asyncio.sleep(delay)
            delay = min(delay * 2, BACKOFF_MAX)
