"""The Store contract: a revisioned key/value store with etcd semantics.

Every write gets the next global revision. Updates and deletes are compare-and-swap on the
key's modification revision. Watches deliver every change after a revision, in revision
order, without gaps or repeats. Old revisions can be compacted away; reading or watching
from before the compacted revision raises :class:`CompactedError` (the API server's 410).

A write may carry a time to live (etcd's leases, kube-apiserver's ``--event-ttl``): the store
deletes the key once ``ttl`` seconds have passed since that write, unless a later write
replaced it; the deletion is an ordinary one (a new revision, a DELETED watch event). Expiry
is never early and may be late by a few seconds (etcd's lease checks, lease reuse).
"""

from __future__ import annotations

import abc
import enum
from collections.abc import AsyncGenerator
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class KeyValue:
    key: str
    value: bytes
    create_revision: int
    mod_revision: int


class EventType(enum.Enum):
    ADDED = "ADDED"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"


@dataclass(frozen=True, slots=True)
class WatchEvent:
    """One change. For DELETED, ``kv`` holds the last value and the deletion's revision."""

    type: EventType
    kv: KeyValue
    prev: KeyValue | None
    revision: int


@dataclass(frozen=True, slots=True)
class ListResult:
    items: list[KeyValue]
    revision: int
    """The revision the list was read at (use it for the next page and for a watch)."""
    more: bool
    """True when ``limit`` cut the list; continue after ``items[-1].key``."""
    remaining: int = 0


class StoreError(Exception):
    """Base of the store's errors."""


class KeyExistsError(StoreError):
    def __init__(self, key: str) -> None:
        super().__init__(f"key exists: {key}")
        self.key = key


class NotFoundError(StoreError):
    def __init__(self, key: str) -> None:
        super().__init__(f"key not found: {key}")
        self.key = key


class ConflictError(StoreError):
    """A compare-and-swap lost: ``current`` is the value the store holds now.

    (Typed optional for backends that cannot read the value in the same transaction; a missing
    key is reported as :class:`NotFoundError` instead.)
    """

    def __init__(self, key: str, current: KeyValue | None) -> None:
        super().__init__(f"revision conflict on {key}")
        self.key = key
        self.current = current


class CompactedError(StoreError):
    def __init__(self, revision: int, compacted: int) -> None:
        super().__init__(
            f"required revision {revision} has been compacted (compacted revision {compacted})"
        )
        self.revision = revision
        self.compacted = compacted


class WatchOverflowError(StoreError):
    """The watcher fell too far behind the writers; it must re-list and watch again."""

    def __init__(self, pending: int) -> None:
        super().__init__(f"watcher fell too far behind ({pending} undelivered events); re-list")
        self.pending = pending


class StoreClosedError(StoreError):
    """The store was closed; no further operations are possible."""

    def __init__(self) -> None:
        super().__init__("store is closed")


class FutureRevisionError(StoreError):
    def __init__(self, revision: int, current: int) -> None:
        super().__init__(f"required revision {revision} is a future revision (current {current})")
        self.revision = revision
        self.current = current


class Store(abc.ABC):
    """What the API server needs from a backend. All keys are ``/``-separated strings."""

    @abc.abstractmethod
    async def get(self, key: str, *, revision: int | None = None) -> KeyValue | None: ...

    @abc.abstractmethod
    async def list(
        self,
        prefix: str,
        *,
        revision: int | None = None,
        limit: int = 0,
        start_after: str | None = None,
    ) -> ListResult:
        """Keys under ``prefix`` in key order, as of ``revision`` (default: now)."""

    @abc.abstractmethod
    async def create(self, key: str, value: bytes, *, ttl: int = 0) -> KeyValue:
        """Store a new key; raises :class:`KeyExistsError` if it exists. ``ttl`` > 0: the key
        expires that many seconds after this write (see the module docstring)."""

    @abc.abstractmethod
    async def update(
        self, key: str, value: bytes, expected_revision: int, *, ttl: int = 0
    ) -> KeyValue:
        """Replace a key whose mod revision is ``expected_revision`` (else ConflictError).
        ``ttl`` as for :meth:`create`: the new value expires on its own terms (0: never).

        Raises :class:`NotFoundError` if the key does not exist.
        """

    @abc.abstractmethod
    async def delete(self, key: str, expected_revision: int | None = None) -> KeyValue:
        """Delete a key; returns its last value with the deletion's revision.

        ``expected_revision`` (if given) must equal the key's mod revision, else ConflictError;
        a missing key raises :class:`NotFoundError`.
        """

    @abc.abstractmethod
    async def current_revision(self) -> int: ...

    @abc.abstractmethod
    def watch(self, prefix: str, after_revision: int) -> AsyncGenerator[WatchEvent, None]:
        """Every change under ``prefix`` with revision > ``after_revision``, then live ones.

        Events come in revision order without gaps or repeats. Iterating raises
        :class:`CompactedError` if history is gone, :class:`WatchOverflowError` if the consumer
        fell too far behind; the iteration ends when the store closes. Close the iterator
        (``aclose``) to stop watching.
        """

    @abc.abstractmethod
    async def compact(self, revision: int) -> None:
        """Forget history before ``revision`` (reads at ``revision`` itself still work)."""

    @abc.abstractmethod
    async def compacted_revision(self) -> int: ...

    @abc.abstractmethod
    async def close(self) -> None: ...
