"""Many deadlines, few timers: each request (or connection) waiting on a deadline joins the
slot its deadline rounds up to, and one timer per slot acts on whatever is still in it then.
Arming and cancelling a timer of its own costs every request more than the rest of the door.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")
log = logging.getLogger(__name__)

Slot = dict[int, T]


class DeadlineSlots(Generic[T]):
    """``enter`` a waiter for ``timeout`` seconds; ``expired(waiter)`` is called for those
    still in their slot when it ends (at most ``precision`` seconds after their deadline).
    A waiter that finishes in time leaves with ``slot.pop(id(waiter))``."""

    def __init__(self, expired: Callable[[T], None], precision: float) -> None:
        self._expired = expired
        self._precision = precision
        self._slots: dict[float, Slot[T]] = {}

    def enter(self, waiter: T, timeout: float) -> Slot[T]:
        loop = asyncio.get_running_loop()
        due = math.ceil((loop.time() + timeout) / self._precision) * self._precision
        slot = self._slots.get(due)
        if slot is None:
            slot = self._slots[due] = {}
            loop.call_at(due, self._end, due)
        slot[id(waiter)] = waiter
        return slot

    def _end(self, due: float) -> None:
        for waiter in self._slots.pop(due, {}).values():
            try:
                self._expired(waiter)
            except Exception:  # one waiter's failure must not spare the others in the slot
                log.exception("acting on an expired deadline failed")
