"""Indexed completion mode (``pkg/controller/job/indexed_job_utils.go``, v1.30): index sets
to and from the ``1,3-5`` interval strings of ``completedIndexes``/``failedIndexes``, the
indexes still to start, and what an indexed pod carries (annotation, label, hostname, env)."""

from __future__ import annotations

from collections.abc import Iterable

from kubedra.api import batch
from kubedra.api.core import EnvVar, PodTemplateSpec
from kubedra.validation.job_status import IndexFormatError, parse_index_interval

COMPLETION_INDEX_ENV = "JOB_COMPLETION_INDEX"
MAX_GENERATED_NAME_LENGTH = 58  # 63 minus the 5 random characters the API server appends


def parse_indexes(text: str | None, completions: int) -> set[int]:
    """The indexes of an interval string; malformed intervals are skipped, as upstream's
    controller does (the API server rejects them on status updates)."""
    result: set[int] = set()
    for interval in (text or "").split(","):
        if not interval:
            continue
        try:
            first, last = parse_index_interval(interval, completions)
        except IndexFormatError:
            continue
        result.update(range(first, last + 1))
    return result


def format_indexes(indexes: Iterable[int]) -> str:
    """``0-2,5``: sorted, consecutive runs of two or more joined with ``-``."""
    parts: list[str] = []
    run: list[int] = []
    for ix in sorted(set(indexes)):
        if run and ix == run[-1] + 1:
            run.append(ix)
            continue
        if run:
            parts.append(_run(run))
        run = [ix]
    if run:
        parts.append(_run(run))
    return ",".join(parts)


def _run(run: list[int]) -> str:
    return str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}"


def first_pending(count: int, completions: int, not_pending: set[int]) -> list[int]:
    """The lowest ``count`` indexes below ``completions`` that are not in ``not_pending``."""
    result: list[int] = []
    candidate = 0
    while len(result) < count and candidate < completions:
        if candidate not in not_pending:
            result.append(candidate)
        candidate += 1
    return result


def generate_name(job_name: str, index: int) -> str:
    """``<job>-<index>-``, the job name cut so the generated name stays a valid DNS label."""
    suffix = f"-{index}-"
    prefix = job_name + suffix
    if len(prefix) > MAX_GENERATED_NAME_LENGTH:
        prefix = job_name[: MAX_GENERATED_NAME_LENGTH - len(suffix)] + suffix
    return prefix


def add_index_env(template: PodTemplateSpec) -> None:
    """``JOB_COMPLETION_INDEX`` from the index annotation, in every (init) container."""
    path = f"metadata.annotations['{batch.JOB_COMPLETION_INDEX_ANNOTATION}']"
    for container in [*(template.spec.init_containers or ()), *template.spec.containers]:
        env = container.env or []
        if not any(e.name == COMPLETION_INDEX_ENV for e in env):
            env.append(EnvVar(name=COMPLETION_INDEX_ENV,
                              value_from={"fieldRef": {"apiVersion": "v1", "fieldPath": path}}))
        container.env = env


def mark_index(template: PodTemplateSpec, job_name: str, index: int,
               index_label: bool) -> None:
    """Annotation (and label, with ``PodIndexLabel``) and hostname of the pod for ``index``."""
    meta = template.metadata
    meta.annotations = {**(meta.annotations or {}),
                        batch.JOB_COMPLETION_INDEX_ANNOTATION: str(index)}
    if index_label:
        meta.labels = {**(meta.labels or {}), batch.JOB_COMPLETION_INDEX_ANNOTATION: str(index)}
    template.spec.hostname = f"{job_name}-{index}"
