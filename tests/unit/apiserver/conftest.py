"""An in-process API server on 127.0.0.1 over a SQLite store in tmp_path."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from kubedra.apiserver.app import ApiServer, Options
from kubedra.storage.sqlite import SQLiteStore


@dataclass
class Env:
    server: ApiServer
    store: SQLiteStore
    http: aiohttp.ClientSession

    async def call(self, method: str, path: str, body: Any = None,
                   content_type: str = "application/json", token: str = "",
                   headers: tuple[tuple[str, str], ...] = ()) -> tuple[int, Any]:
        sent = [("Content-Type", content_type), *headers]
        if token:
            sent.append(("Authorization", f"Bearer {token}"))
        data = json.dumps(body).encode() if body is not None else None
        async with self.http.request(method, path, data=data, headers=sent) as resp:
            text = await resp.text()
            return resp.status, json.loads(text) if text.startswith("{") else text


MakeEnv = Callable[..., Awaitable[Env]]


@pytest.fixture
async def make_env(tmp_path: Path) -> AsyncIterator[MakeEnv]:
    made: list[Env] = []

    async def make(**options: Any) -> Env:
        store = await SQLiteStore.open(tmp_path / f"db{len(made)}", compact_interval=0)
        server = ApiServer(store, Options(**options))
        port = await server.start("127.0.0.1", 0)
        http = aiohttp.ClientSession(f"http://127.0.0.1:{port}",
                                     connector=aiohttp.TCPConnector(limit=0))
        env = Env(server, store, http)
        made.append(env)
        return env

    yield make
    for env in made:
        await env.http.close()
        await env.server.stop()
        await env.store.close()


@pytest.fixture
async def env(make_env: MakeEnv) -> Env:
    return await make_env()
