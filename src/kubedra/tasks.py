"""Ending background tasks: the one place for "cancel it, then wait until it has ended".

Plain Python on purpose (never in setup.py's compiled list): a coroutine compiled by mypyc
that catches the CancelledError of a task it awaits while another exception propagates lets
that CancelledError escape instead. Compiled code awaits this helper and catches nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any


async def cancel_and_wait(*tasks: asyncio.Future[Any],
                          ignore: tuple[type[Exception], ...] = ()) -> None:
    """Cancel ``tasks`` and wait until each has ended. Their cancellation, and the
    ``ignore`` exceptions they may end with, are swallowed; any other exception is raised."""
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError, *ignore):
            await task
