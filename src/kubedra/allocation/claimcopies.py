"""A claim as the scheduler counts it, in either model: its newest copy among an in-flight
allocation (Reserve until PreBind wrote it), our own written copy (assumed, until the informer
shows it) and the informer's. Upstream's claim assume cache with its in-flight map; the models
count the devices of the copy that wins (:meth:`ClaimCopies._refresh`)."""

from __future__ import annotations

from typing import Generic, TypeVar

from kubedra.api.meta import TypedObject, revision

C = TypeVar("C", bound=TypedObject)


def claim_key(claim: TypedObject) -> str:
    """UID, or ``namespace/name`` for objects that have none yet."""
    meta = claim.metadata
    return meta.uid or f"{meta.namespace or ''}/{meta.name or ''}"


class ClaimCopies(Generic[C]):
    def __init__(self) -> None:
        self._informer: dict[str, C] = {}
        self._assumed: dict[str, C] = {}
        self._in_flight: dict[str, C] = {}

    def _refresh(self, key: str) -> None:
        """The copy that counts for ``key`` may have changed (see :meth:`claim`)."""
        raise NotImplementedError

    # --- informer ------------------------------------------------------------------------------

    def upsert_claim(self, claim: C) -> None:
        """Informer add/update. A copy as new as the assumed one replaces it."""
        key = claim_key(claim)
        self._informer[key] = claim
        assumed = self._assumed.get(key)
        if assumed is not None and revision(claim) >= revision(assumed):
            del self._assumed[key]
        self._refresh(key)

    def delete_claim(self, claim: C) -> None:
        key = claim_key(claim)
        self._informer.pop(key, None)
        self._assumed.pop(key, None)
        self._refresh(key)

    # --- reading --------------------------------------------------------------------------------

    def claim(self, key: str) -> C | None:
        """The newest copy: in flight, else assumed, else the informer's."""
        return self._in_flight.get(key) or self._assumed.get(key) or self._informer.get(key)

    def current(self, claim: C) -> C:
        """Our own written copy over the informer's (not an in-flight one: it is not written)."""
        return self._assumed.get(claim_key(claim)) or claim

    def is_in_flight(self, key: str) -> bool:
        return key in self._in_flight

    # --- our own writes --------------------------------------------------------------------------

    def set_in_flight(self, claim: C) -> None:
        """A tentative allocation (Reserve until PreBind ends): its devices count at once."""
        key = claim_key(claim)
        self._in_flight[key] = claim
        self._refresh(key)

    def clear_in_flight(self, key: str) -> None:
        if self._in_flight.pop(key, None) is not None:
            self._refresh(key)

    def assume(self, stored: C) -> None:
        """Keep ``stored`` (our write's answer) until the informer shows it; ValueError when
        the informer already has a newer copy."""
        key = claim_key(stored)
        current = self._informer.get(key)
        if current is not None and revision(stored) < revision(current):
            raise ValueError(f"claim {stored.metadata.namespace or ''}/"
                             f"{stored.metadata.name or ''} is out of sync")
        self._assumed[key] = stored
        self._refresh(key)

    def restore(self, key: str) -> None:
        """Drop an assumed copy: the informer copy counts again."""
        if self._assumed.pop(key, None) is not None:
            self._refresh(key)

    def commit(self, stored: C) -> bool:
        """``stored`` was written: assume it, then stop counting it as in flight (in that
        order, so its devices never look free). False: the informer has a newer copy."""
        try:
            self.assume(stored)
            return True
        except ValueError:
            return False
        finally:
            self.clear_in_flight(claim_key(stored))
