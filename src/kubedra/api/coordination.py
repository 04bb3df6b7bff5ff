"""coordination.k8s.io/v1: Lease, the lock behind leader election and node heartbeats.

``acquireTime`` and ``renewTime`` are MicroTime strings (``2024-05-01T10:00:00.123456Z``).
"""

from __future__ import annotations

import msgspec

from kubedra.api.base import Int32, Model, required_list
from kubedra.api.meta import ListMeta, TypedObject


class LeaseSpec(Model):
    holder_identity: str | None = None
    lease_duration_seconds: Int32 | None = None
    acquire_time: str | None = None
    renew_time: str | None = None
    lease_transitions: Int32 | None = None


class Lease(TypedObject):
    spec: LeaseSpec = msgspec.field(default_factory=LeaseSpec)


class LeaseList(Model):
    api_version: str = ""
    kind: str = ""
    metadata: ListMeta = msgspec.field(default_factory=ListMeta)
    items: list[Lease] = required_list()
