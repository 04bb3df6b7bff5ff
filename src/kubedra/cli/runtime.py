"""Running a component's asyncio main until SIGINT/SIGTERM/SIGHUP, with logging set up
once, and tied to the life of its supervisor."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Awaitable, Callable

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_PR_SET_PDEATHSIG = 1


def follow_supervisor(supervisor: int) -> None:
    """Have SIGTERM sent to this process when its parent ``supervisor`` dies (Linux's
    parent-death signal; elsewhere a thread watching the parent pid). Exits at once if the
    supervisor is already gone."""
    if sys.platform == "linux":
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")
    else:
        def watch() -> None:
            while os.getppid() == supervisor:
                time.sleep(1.0)
            os.kill(os.getpid(), signal.SIGTERM)

        threading.Thread(target=watch, name="follow-supervisor", daemon=True).start()
    if os.getppid() != supervisor:  # it died before the signal was armed
        sys.exit("the supervisor exited")


def setup_logging(verbosity: int) -> None:
    level = logging.WARNING if verbosity <= 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def run_until_signalled(main: Callable[[asyncio.Event], Awaitable[None]]) -> None:
    """Run ``main(stop)``; ``stop`` is set on SIGINT, SIGTERM or SIGHUP so it can shut down
    cleanly."""

    async def runner() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in STOP_SIGNALS:
            loop.add_signal_handler(sig, stop.set)
        await main(stop)

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(runner())


async def until_stopped(stop: asyncio.Event, *work: Awaitable[None]) -> None:
    """Run ``work`` until ``stop`` is set or one of them ends (an error is re-raised)."""
    tasks = [asyncio.ensure_future(w) for w in work]
    stopper = asyncio.ensure_future(stop.wait())
    try:
        done, _ = await asyncio.wait([*tasks, stopper], return_when=asyncio.FIRST_COMPLETED)
        for t in done:
            if t is not stopper:
                t.result()
    finally:
        for t in [*tasks, stopper]:
            t.cancel()
        for t in [*tasks, stopper]:
            with contextlib.suppress(asyncio.CancelledError):
                await t
