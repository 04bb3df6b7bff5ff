"""Periodic compaction that keeps a window of recent history (kube-apiserver's compactor).

Any backend runs it the same way: every interval, forget what is older than the newest
``retain`` revisions. A failure is logged and retried at the next interval.
"""

from __future__ import annotations

import asyncio
import logging

from kubedra.storage.contract import Store, StoreClosedError, StoreError

log = logging.getLogger(__name__)


async def compact_periodically(store: Store, interval: float, retain: int) -> None:
    """Run until the store closes (or the task is cancelled)."""
    while True:
        await asyncio.sleep(interval)
        try:
            target = await store.current_revision() - retain
            if target <= await store.compacted_revision():
                continue
            await store.compact(target)
        except StoreClosedError:
            return
        except StoreError:
            log.exception("periodic compaction to the newest %d revisions failed", retain)
