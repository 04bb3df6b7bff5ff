"""Running a component's asyncio main until SIGINT/SIGTERM, with logging set up once."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Awaitable, Callable


def setup_logging(verbosity: int) -> None:
    level = logging.WARNING if verbosity <= 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def run_until_signalled(main: Callable[[asyncio.Event], Awaitable[None]]) -> None:
    """Run ``main(stop)``; ``stop`` is set on SIGINT or SIGTERM so it can shut down cleanly."""

    async def runner() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
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
