"""Pod re-creation back-off after failures (``pkg/controller/job/backoff_utils.go``, v1.30):
after n failures since the last success the next pod waits base·2^(n-1), capped, counted
from the last failure's finish time."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from kubedra.api.core import Pod
from kubedra.controllers.job import pods as podutil

DEFAULT_BACKOFF = 10.0
MAX_BACKOFF = 600.0


@dataclass(frozen=True, slots=True)
class BackoffRecord:
    key: str
    failures_after_last_success: int = 0
    last_failure_time: datetime | None = None

    def remaining(self, now: datetime, base: float, cap: float) -> float:
        return remaining_for_failures(now, base, cap, self.failures_after_last_success,
                                      self.last_failure_time)


def remaining_for_failures(now: datetime, base: float, cap: float, failures: int,
                           last_failure: datetime | None) -> float:
    """Seconds still to wait before a replacement pod may be created."""
    if failures == 0 or last_failure is None:
        return 0.0
    delay = base
    for _ in range(1, failures):
        delay *= 2
        if delay >= cap:
            delay = cap
            break
    elapsed = (now - last_failure).total_seconds()
    return 0.0 if delay < elapsed else delay - elapsed


class BackoffStore:
    def __init__(self) -> None:
        self._records: dict[str, BackoffRecord] = {}

    def new_record(self, key: str, succeeded: list[Pod], failed: list[Pod]) -> BackoffRecord:
        """The record after this sync's newly finished pods (not stored until the status
        write that counts them succeeds)."""
        old = self._records.get(key, BackoffRecord(key))
        fail_times = sorted(podutil.finished_time(p) for p in failed)
        if not succeeded:
            if not fail_times:
                return old
            return BackoffRecord(key, old.failures_after_last_success + len(fail_times),
                                 fail_times[-1])
        last_success = max(podutil.finished_time(p) for p in succeeded)
        after = [t for t in fail_times if t > last_success]
        return BackoffRecord(key, len(after), after[-1] if after else None)

    def update(self, record: BackoffRecord) -> None:
        self._records[record.key] = record

    def remove(self, key: str) -> None:
        self._records.pop(key, None)
