"""Jobs for the unit tests: a manifest as a user writes it, and the stored form of it."""

from __future__ import annotations

from typing import Any

from kubedra.api import codec
from kubedra.api.batch import Job
from kubedra.api.features import FeatureGates
from kubedra.registry.strategies.job import prepare_for_create
from kubedra.validation.job import default_job


def manifest(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "template": {
            "spec": {
                "containers": [{"name": "main", "image": "busybox:1.36"}],
                "restartPolicy": "Never",
            }
        }
    }
    body.update(spec)
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "pi", "namespace": "default", "uid": "uid-1"},
        "spec": body,
    }


def created(raw: dict[str, Any] | None = None, gates: FeatureGates | None = None) -> Job:
    """``raw`` (default: :func:`manifest`) after defaulting and PrepareForCreate."""
    gates = gates or FeatureGates()
    job = codec.decode(raw or manifest(), Job)
    default_job(job, gates)
    prepare_for_create(job, gates)
    return job


def stored(raw: dict[str, Any] | None = None, gates: FeatureGates | None = None) -> Job:
    job = created(raw, gates)
    job.metadata.resource_version = "7"
    return job


def copy(job: Job) -> Job:
    return codec.decode(codec.to_builtins(job), Job)
