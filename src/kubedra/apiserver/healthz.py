"""``/healthz``, ``/livez`` and ``/readyz`` as kube-apiserver's healthz package answers them:
each runs the server's checks (``ping``, ``log``, ``etcd``, the store whichever backend it
is); ``?verbose`` lists them, ``?exclude=<name>`` skips one, ``/<endpoint>/<check>`` runs
one. A failing check's reason goes to the log, not to the endpoint's (public) answer."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Final

from aiohttp import web
from multidict import MultiMapping

from kubedra.apiserver import errors
from kubedra.storage.contract import Store

log = logging.getLogger(__name__)

ENDPOINTS: Final = ("healthz", "livez", "readyz")
#: How long a check may take (``--etcd-healthcheck-timeout``'s default).
CHECK_TIMEOUT: Final = 2.0
_PROBE_KEY: Final = "/registry/health"  # upstream's probe: a read, found or not
_FLUSH_EVERY: Final = 60.0
_HEADERS: Final = {"X-Content-Type-Options": "nosniff"}

Check = Callable[[], Awaitable[None]]


class LogCheck:
    """Upstream's ``log`` check: logging is blocked (a full pipe, a stuck disk) when the
    handlers have not been flushed for two flush periods; a thread, started by the first
    check, flushes them every minute."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._flushed: float | None = None

    async def check(self) -> None:
        with self._lock:
            if self._flushed is None:
                self._flushed = time.monotonic()
                threading.Thread(target=self._flush_forever, name="log-health",
                                 daemon=True).start()
            flushed = self._flushed
        if time.monotonic() - flushed >= 2 * _FLUSH_EVERY:
            raise RuntimeError("logging blocked")

    def _flush_forever(self) -> None:
        while True:
            for handler in logging.getLogger().handlers:
                handler.flush()
            with self._lock:
                self._flushed = time.monotonic()
            time.sleep(_FLUSH_EVERY)


_LOG_CHECK: Final = LogCheck()  # one per process, as logging is


async def _ping() -> None:
    return None


class Health:
    """The checks of one server and the answers of its health endpoints."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.timeout = CHECK_TIMEOUT
        self.checks: dict[str, Check] = {"ping": _ping, "log": _LOG_CHECK.check,
                                         "etcd": self._store}

    async def _store(self) -> None:
        await self.store.get(_PROBE_KEY)

    async def answer(self, endpoint: str, check: str,
                     query: MultiMapping[str]) -> web.Response:
        """``/<endpoint>`` (``check`` empty) or ``/<endpoint>/<check>``."""
        if check:
            run = self.checks.get(check)
            if run is None:
                raise errors.path_not_found()
            failure = await self._run(endpoint, check, run)
            if failure is not None:
                return _text(f"internal server error: {failure}\n", 500)
            return _text("ok")
        excluded = set(query.getall("exclude", ()))
        lines, failed = [], []
        for name, run in self.checks.items():
            if name in excluded:
                excluded.discard(name)
                lines.append(f"[+]{name} excluded: ok\n")
            elif await self._run(endpoint, name, run) is not None:
                lines.append(f"[-]{name} failed: reason withheld\n")
                failed.append(name)
            else:
                lines.append(f"[+]{name} ok\n")
        if excluded:
            names = ",".join(f'"{n}"' for n in sorted(excluded))
            lines.append(f"warn: some health checks cannot be excluded: no matches for {names}\n")
        if failed:
            return _text(f"{''.join(lines)}{endpoint} check failed\n", 500)
        if "verbose" not in query:
            return _text("ok")
        return _text(f"{''.join(lines)}{endpoint} check passed\n")

    async def _run(self, endpoint: str, name: str, run: Check) -> str | None:
        """None when the check passes in time, else why not (logged)."""
        try:
            await asyncio.wait_for(run(), self.timeout)
        except Exception as err:  # any failure of a check is an unhealthy answer, not a 500
            reason = str(err) or type(err).__name__
            log.warning("%s check %s failed: %s", endpoint, name, reason)
            return reason
        return None


def _text(body: str, code: int = 200) -> web.Response:
    return web.Response(text=body, status=code, content_type="text/plain", headers=_HEADERS)
