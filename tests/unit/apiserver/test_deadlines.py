"""DeadlineSlots: waiters past their deadline are handed to the callback within the
precision; those that left their slot in time are not."""

from __future__ import annotations

import asyncio

from kubedra.apiserver.deadlines import DeadlineSlots


class Waiter:
    pass


async def test_late_waiters_expire_within_the_precision_and_leavers_do_not() -> None:
    loop = asyncio.get_running_loop()
    expired: list[tuple[Waiter, float]] = []
    slots = DeadlineSlots[Waiter](lambda w: expired.append((w, loop.time())), 0.1)
    late, early = Waiter(), Waiter()
    start = loop.time()
    slots.enter(late, 0.2)
    slot = slots.enter(early, 0.2)  # the same slot: one timer for both
    slot.pop(id(early))
    await asyncio.sleep(0.45)
    assert [w for w, _ in expired] == [late]
    assert 0.2 <= expired[0][1] - start <= 0.2 + 0.1 + 0.05
