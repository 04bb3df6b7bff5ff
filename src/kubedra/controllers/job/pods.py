"""What the Job controller reads off a pod (``pkg/controller/controller_utils.go`` and
``job_controller.go`` / ``indexed_job_utils.go`` helpers): activity, readiness, the tracking
finalizer, the controlling Job, the completion index and failure-count annotations, and when
the pod finished."""

from __future__ import annotations

from datetime import UTC, datetime

from kubedra.api import batch
from kubedra.api.batch import Job
from kubedra.api.core import Pod
from kubedra.api.meta import OwnerReference

UNKNOWN_INDEX = -1
INDEX_FAILURE_COUNT_ANNOTATION = "batch.kubernetes.io/job-index-failure-count"
INDEX_IGNORED_FAILURE_COUNT_ANNOTATION = "batch.kubernetes.io/job-index-ignored-failure-count"
_TERMINAL = ("Succeeded", "Failed")


def parse_time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def format_time(when: datetime) -> str:
    """metav1.Time on the wire: RFC 3339, whole seconds, ``Z``."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def is_terminal(pod: Pod) -> bool:
    return pod.status.phase in _TERMINAL


def is_active(pod: Pod) -> bool:
    """``FilterActivePods``: not finished and not being deleted."""
    return not is_terminal(pod) and pod.metadata.deletion_timestamp is None


def is_terminating(pod: Pod) -> bool:
    return not is_terminal(pod) and pod.metadata.deletion_timestamp is not None


def is_ready(pod: Pod) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions or ())


def has_tracking_finalizer(pod: Pod) -> bool:
    return batch.JOB_TRACKING_FINALIZER in (pod.metadata.finalizers or ())


def controller_ref(pod: Pod) -> OwnerReference | None:
    return next((r for r in pod.metadata.owner_references or () if r.controller), None)


def is_job_ref(ref: OwnerReference) -> bool:
    return ref.kind == "Job" and ref.api_version == "batch/v1"


def is_controlled_by(pod: Pod, job: Job) -> bool:
    ref = controller_ref(pod)
    return ref is not None and ref.uid == job.metadata.uid


def completion_index(pod: Pod) -> int:
    """The pod's index annotation, or :data:`UNKNOWN_INDEX` when absent or malformed."""
    value = (pod.metadata.annotations or {}).get(batch.JOB_COMPLETION_INDEX_ANNOTATION)
    if value is None or not value.isascii() or not value.isdigit():
        return UNKNOWN_INDEX
    return int(value)


def _count_annotation(pod: Pod, name: str) -> int:
    value = (pod.metadata.annotations or {}).get(name, "")
    return int(value) if value.isascii() and value.isdigit() else 0


def index_failure_count(pod: Pod) -> int:
    return _count_annotation(pod, INDEX_FAILURE_COUNT_ANNOTATION)


def index_ignored_failure_count(pod: Pod) -> int:
    return _count_annotation(pod, INDEX_IGNORED_FAILURE_COUNT_ANNOTATION)


def restart_count(pod: Pod) -> int:
    statuses = [*(pod.status.init_container_statuses or ()),
                *(pod.status.container_statuses or ())]
    return sum(s.restart_count for s in statuses)


def terminated_state(state: dict[str, object]) -> dict[str, object] | None:
    terminated = state.get("terminated")
    return terminated if isinstance(terminated, dict) else None


def finished_time(pod: Pod) -> datetime:
    """The latest container finish time; else when Ready turned False; else the deletion
    timestamp; else the creation time (``getFinishedTime``)."""
    ends = []
    for s in [*(pod.status.init_container_statuses or ()),
              *(pod.status.container_statuses or ())]:
        t = terminated_state(s.state)
        when = parse_time(str(t.get("finishedAt"))) if t and t.get("finishedAt") else None
        if when is not None:
            ends.append(when)
    if ends:
        return max(ends)
    for c in pod.status.conditions or ():
        if c.type == "Ready" and c.status == "False":
            when = parse_time(c.last_transition_time)
            if when is not None:
                return when
    return (parse_time(pod.metadata.deletion_timestamp)
            or parse_time(pod.metadata.creation_timestamp)
            or datetime.fromtimestamp(0, UTC))


def removal_order(pod: Pod) -> tuple[int, int, int, int, str]:
    """``controller.ActivePods`` order: the pods cheapest to lose come first (unscheduled,
    pending, not ready, restarted most, newest)."""
    phase_rank = {"Pending": 0, "Unknown": 1, "Running": 2}.get(pod.status.phase or "", 0)
    created = pod.metadata.creation_timestamp or ""
    return (1 if pod.spec.node_name else 0, phase_rank, 1 if is_ready(pod) else 0,
            -restart_count(pod), _invert(created))


def _invert(text: str) -> str:
    """Sort newer timestamps first within an ascending sort."""
    return "".join(chr(0x10FFFF - ord(ch)) for ch in text)
