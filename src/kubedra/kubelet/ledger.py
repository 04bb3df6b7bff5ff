"""The claim ledger: the order in which the node agent records, prepares, unprepares and forgets
claims, so that no crash leaves a claim prepared that nobody will unprepare. It is the one home
of that rule whatever the checkpoint format: a :class:`Format` says how an entry keeps its pods
and its drivers' answers (the v1.30 ``dra_manager_state`` in ``manager.py``; the 1.34 node side
brings its own format and reuses this module unchanged), and the ledger decides when each is
written.

- **Prepare**: the claim is recorded with its pod, and so with the drivers it needs, *before*
  any driver is called; each driver's answer is recorded when it comes. An entry that some
  driver has not answered since it was recorded is *unconfirmed*: the claim may be prepared.
- **Unprepare**: the drivers are called first and the entry is forgotten once all of them
  answered. A crash in between leaves the entry, so the claim is unprepared once more after the
  restart (drivers are idempotent), then forgotten: never lost, never repeated for ever.
- **Restart**: confirmed entries are trusted (a pod that still runs is not prepared again);
  an unconfirmed one is prepared again for a pod that still needs it, and unprepared like any
  other when no pod on the node does.
- **Concurrency**: operations on one claim are serialized (a lock per claim uid); other claims
  and other drivers never wait for them, so a driver that hangs holds only its own claims, each
  call bounded by the driver client's timeout.

This is upstream's order since v1.31 (pkg/kubelet/cm/dra/manager.go); v1.30 wrote the
checkpoint only after the drivers answered (docs/deviations.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar


class PrepareError(Exception):
    pass


@dataclass(frozen=True)
class PreparedDevice:
    """One device a driver prepared for a claim (the 1.34 protocols' ``Device``)."""

    pool: str
    device: str
    request_names: tuple[str, ...] = ()
    cdi_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class DriverDevices:
    """What one driver prepared for one claim, as a container started with it sees it: the
    devices (1.30's named resources carry no CDI ids of their own) and the claim's CDI ids
    from that driver."""

    driver: str
    devices: tuple[PreparedDevice, ...]
    cdi_ids: tuple[str, ...]


@dataclass(frozen=True)
class ClaimResult:
    """One claim's answer: its CDI devices (every protocol), the devices they belong to (from
    1.34 on), or the error."""

    cdi_devices: list[str] = field(default_factory=list)
    error: str = ""
    devices: tuple[PreparedDevice, ...] = ()


class DriverClient(Protocol):
    """The batched DRA calls of one registered driver, in the claim form its protocol takes
    (what the checkpoint format's ``requests`` gives): ``registration.DraClient`` (1.30),
    ``draclient.DevicesClient`` (1.34)."""

    async def prepare(self, claims: list[Any]) -> dict[str, ClaimResult]: ...

    async def unprepare(self, claims: list[Any]) -> dict[str, ClaimResult]: ...


E = TypeVar("E")


class Format(Protocol[E]):
    """What one checkpoint format decides: how an entry keeps its claim, pods and answers."""

    def load(self) -> list[E]: ...

    def store(self, entries: list[E]) -> None: ...

    def uid(self, entry: E) -> str: ...

    def name(self, entry: E) -> str:
        """``namespace/name``, for error texts."""
        ...

    def pods(self, entry: E) -> set[str]: ...

    def set_pods(self, entry: E, pods: set[str]) -> None: ...

    def requests(self, entry: E) -> dict[str, list[Any]]:
        """Driver name -> what its calls carry for this claim."""
        ...

    def answered(self, entry: E, driver: str, result: ClaimResult) -> None:
        """Keep a driver's successful prepare answer (its CDI devices)."""
        ...

    def confirmed(self, entry: E) -> bool:
        """Every driver of the claim answered its prepare since the entry was recorded."""
        ...


@dataclass
class _Batch:
    driver: str
    client: DriverClient
    claims: list[Any] = field(default_factory=list)


class Ledger(Generic[E]):
    def __init__(self, fmt: Format[E], get_driver: Callable[[str], DriverClient]) -> None:
        self.format = fmt
        self.get_driver = get_driver
        self.entries: dict[str, E] = {fmt.uid(e): e for e in fmt.load()}
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = (
            weakref.WeakValueDictionary())

    def pod_uids(self) -> set[str]:
        """Pods some entry still references (``PodMightNeedToUnprepareResources``)."""
        return {uid for e in self.entries.values() for uid in self.format.pods(e)}

    def of_pod(self, pod_uid: str) -> list[E]:
        return [e for e in self.entries.values() if pod_uid in self.format.pods(e)]

    def _store(self) -> None:
        try:
            self.format.store(list(self.entries.values()))
        except OSError as e:
            raise PrepareError(f"failed to checkpoint claimInfo state, err: {e}") from e

    @contextlib.asynccontextmanager
    async def _locked(self, uids: Iterable[str]) -> AsyncIterator[None]:
        """Hold these claims' locks, taken in uid order so that two operations never
        deadlock."""
        async with contextlib.AsyncExitStack() as held:
            for uid in sorted(set(uids)):
                lock = self._locks.get(uid)
                if lock is None:
                    lock = self._locks[uid] = asyncio.Lock()
                await held.enter_async_context(lock)
            yield

    async def prepare(self, pod_uid: str, wanted: list[E]) -> None:
        """Prepare the pod's claims; ``wanted`` are entries made from the API's objects, used
        for claims the ledger does not hold yet. Errors leave the pod waiting; the caller
        retries."""
        fmt = self.format
        fresh = {fmt.uid(e): e for e in wanted}
        async with self._locked(fresh):
            entries = {uid: self.entries.get(uid, e) for uid, e in fresh.items()}
            pending = [e for e in entries.values() if not fmt.confirmed(e)]
            batches = self._batches(pending)  # an unknown driver fails before any record
            recorded = False
            for uid, entry in entries.items():
                pods = fmt.pods(entry)
                if uid not in self.entries or pod_uid not in pods:
                    fmt.set_pods(entry, pods | {pod_uid})
                    self.entries[uid] = entry
                    recorded = True
            if recorded:
                self._store()
            await self._call(batches, pending, prepare=True)

    async def unprepare(self, pod_uid: str) -> None:
        """Drop the pod from its claims; claims no other pod uses are unprepared through their
        drivers, then forgotten."""
        fmt = self.format
        while True:
            uids = {fmt.uid(e) for e in self.of_pod(pod_uid)}
            async with self._locked(uids):
                entries = self.of_pod(pod_uid)
                if not {fmt.uid(e) for e in entries} <= uids:
                    continue  # a prepare recorded another claim meanwhile: lock it too
                last = [e for e in entries if fmt.pods(e) == {pod_uid}]
                batches = self._batches(last)
                for entry in entries:
                    if fmt.pods(entry) != {pod_uid}:
                        fmt.set_pods(entry, fmt.pods(entry) - {pod_uid})
                if len(last) < len(entries):
                    self._store()
                await self._call(batches, last, prepare=False)
                return

    def _batches(self, entries: list[E]) -> list[_Batch]:
        """One call per driver with every claim it handles."""
        out: dict[str, _Batch] = {}
        for entry in entries:
            for driver, claims in self.format.requests(entry).items():
                if driver not in out:
                    try:
                        out[driver] = _Batch(driver, self.get_driver(driver))
                    except Exception as e:
                        raise PrepareError(f"failed to get DRA Plugin client for plugin name "
                                           f"{driver}: {e}") from e
                out[driver].claims.extend(claims)
        return list(out.values())

    async def _call(self, batches: list[_Batch], entries: list[E], *, prepare: bool) -> None:
        """Call every driver at once; the first batch's failure is raised once all have
        answered."""
        fmt = self.format
        by_uid = {fmt.uid(e): e for e in entries}
        waiting = {uid: set(fmt.requests(e)) for uid, e in by_uid.items()}
        outcomes = await asyncio.gather(*(self._batch(b, by_uid, waiting, prepare=prepare)
                                          for b in batches), return_exceptions=True)
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome

    async def _batch(self, batch: _Batch, by_uid: dict[str, E], waiting: dict[str, set[str]],
                     *, prepare: bool) -> None:
        rpc = "NodePrepareResources" if prepare else "NodeUnprepareResources"
        try:
            call = batch.client.prepare if prepare else batch.client.unprepare
            results = await call(batch.claims)
        except Exception as e:
            raise PrepareError(f"{rpc} failed: {e}") from e
        error: PrepareError | None = None
        changed = False
        for uid, result in results.items():
            entry = by_uid.get(uid)
            if entry is None:
                error = error or PrepareError(f"{rpc} returned result for unknown claim UID {uid}")
            elif result.error:
                error = error or PrepareError(f"{rpc} failed for claim {self.format.name(entry)}: "
                                              f"{result.error}")
            elif prepare:
                self.format.answered(entry, batch.driver, result)
                changed = True
            else:
                waiting[uid].discard(batch.driver)
                if not waiting[uid]:
                    del self.entries[uid]
                    changed = True
        if changed:
            self._store()
        if error is not None:
            raise error
        if len(results) < len(batch.claims):
            raise PrepareError(f"{rpc} left out {len(batch.claims) - len(results)} claims")
