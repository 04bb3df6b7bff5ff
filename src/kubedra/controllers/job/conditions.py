"""Job conditions as the controller writes them (``newCondition``,
``ensureJobConditionStatus``, ``findConditionByType`` in ``job_controller.go``)."""

from __future__ import annotations

from datetime import datetime

from kubedra.api.batch import JobCondition
from kubedra.controllers.job.pods import format_time


def new_condition(ctype: str, status: str, reason: str, message: str,
                  now: datetime) -> JobCondition:
    stamp = format_time(now)
    return JobCondition(type=ctype, status=status, last_probe_time=stamp,
                        last_transition_time=stamp, reason=reason or None,
                        message=message or None)


def find(conditions: list[JobCondition] | None, ctype: str) -> JobCondition | None:
    return next((c for c in conditions or () if c.type == ctype), None)


def ensure_status(conditions: list[JobCondition] | None, ctype: str, status: str, reason: str,
                  message: str, now: datetime) -> tuple[list[JobCondition] | None, bool]:
    """Set the condition of ``ctype``; a missing one is added only when not ``False``."""
    result = list(conditions or ())
    for i, c in enumerate(result):
        if c.type == ctype:
            if (c.status, c.reason or "", c.message or "") != (status, reason, message):
                result[i] = new_condition(ctype, status, reason, message, now)
                return result, True
            return conditions, False
    if status != "False":
        result.append(new_condition(ctype, status, reason, message, now))
        return result, True
    return conditions, False
