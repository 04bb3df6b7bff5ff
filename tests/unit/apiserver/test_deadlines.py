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


async def test_a_failing_expiry_does_not_spare_the_rest_of_its_slot() -> None:
    seen: list[Waiter] = []

    def expired(w: Waiter) -> None:
        seen.append(w)
        if len(seen) == 1:
            raise RuntimeError("the first one fails")

    slots = DeadlineSlots[Waiter](expired, 1.0)  # both entered within one slot of a second
    first, second = Waiter(), Waiter()
    assert slots.enter(first, 0.0) is slots.enter(second, 0.0)
    async with asyncio.timeout(2):
        while len(seen) < 2:
            await asyncio.sleep(0.02)
    assert seen == [first, second]
