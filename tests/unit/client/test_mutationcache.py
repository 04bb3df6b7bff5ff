"""MutationCache: the newer of the informer's copy and our own write; waiting after a
conflict until the informer shows a later version."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubedra.api.meta import ObjectMeta, Status, revision
from kubedra.api.resource.v1alpha2 import ResourceClaim, ResourceClaimSpec
from kubedra.client.errors import ApiError
from kubedra.client.mutationcache import MutationCache


def claim(rv: int, uid: str = "u1", name: str = "c") -> ResourceClaim:
    return ResourceClaim(
        metadata=ObjectMeta(name=name, namespace="ns", uid=uid, resource_version=str(rv)),
        spec=ResourceClaimSpec(resource_class_name="gpu"))


def test_our_newer_write_wins_until_the_informer_shows_it() -> None:
    cache: MutationCache[ResourceClaim] = MutationCache()
    written = cache.wrote(claim(7))
    assert cache.newest(claim(5)) is written
    cache.observed(claim(6))  # the informer is still behind: keep the write
    assert cache.newest(claim(6)) is written
    shown = claim(7)
    cache.observed(shown)
    assert cache.newest(shown) is shown
    later = claim(9)  # someone else wrote after us
    assert cache.newest(later) is later


def test_a_write_of_another_object_with_the_same_name_is_ignored() -> None:
    cache: MutationCache[ResourceClaim] = MutationCache()
    cache.wrote(claim(7, uid="old"))
    recreated = claim(5, uid="new")
    assert cache.newest(recreated) is recreated
    assert cache.newest(claim(5, uid="new", name="other")) is not None


def test_after_a_conflict_the_sync_waits_for_a_later_version() -> None:
    cache: MutationCache[ResourceClaim] = MutationCache()
    cache.wrote(claim(4))
    cache.conflicted(claim(4))  # the server holds something newer than 4
    assert cache.newest(claim(3)) is None
    cache.observed(claim(4))  # the informer shows the refused version itself: still behind
    assert cache.newest(claim(4)) is None
    fresh = claim(8)
    assert cache.newest(fresh) is fresh
    stale = claim(4)  # the later version was seen, so nothing is held back any more
    assert cache.newest(stale) is stale


def test_a_conflict_on_a_recreated_object_does_not_hold_the_new_one() -> None:
    cache: MutationCache[ResourceClaim] = MutationCache()
    cache.conflicted(claim(4, uid="old"))
    recreated = claim(2, uid="new")
    assert cache.newest(recreated) is recreated


def test_observed_and_forget_drop_what_is_no_longer_needed() -> None:
    cache: MutationCache[ResourceClaim] = MutationCache()
    cache.conflicted(claim(4))
    cache.observed(claim(5))
    stale = claim(4)  # the later version was seen: nothing is held back
    assert cache.newest(stale) is stale
    cache.wrote(claim(9))
    cache.forget(claim(9))
    cached = claim(3)
    assert cache.newest(cached) is cached
    cache.conflicted(claim(3))
    cache.forget(claim(3))
    assert cache.newest(cached) is cached


async def test_write_keeps_the_answer_and_notes_a_conflict() -> None:
    cache: MutationCache[ResourceClaim] = MutationCache()

    async def accepted(sent: ResourceClaim) -> ResourceClaim:
        return claim(revision(sent) + 1)

    async def refused(sent: ResourceClaim) -> ResourceClaim:
        raise ApiError(409, Status(reason="Conflict"))

    async def missing(sent: ResourceClaim) -> ResourceClaim:
        raise ApiError(404, Status(reason="NotFound"))

    answer = await cache.write(claim(3), accepted)
    assert cache.newest(claim(3)) is answer
    with pytest.raises(ApiError):
        await cache.write(claim(4), refused)
    assert cache.newest(claim(4)) is None
    with pytest.raises(ApiError):
        await cache.write(claim(5, name="other"), missing)
    other = claim(5, name="other")
    assert cache.newest(other) is other  # only a conflict holds the object back


def test_revision_of_unset_or_foreign_versions_is_zero() -> None:
    assert revision(claim(12)) == 12
    unset = ResourceClaim(metadata=ObjectMeta(name="c"), spec=ResourceClaimSpec())
    assert revision(unset) == 0
    odd = ResourceClaim(metadata=ObjectMeta(name="c", resource_version="x1"),
                        spec=ResourceClaimSpec())
    assert revision(odd) == 0


OPS = st.lists(st.tuples(st.sampled_from(["wrote", "conflicted", "observed"]),
                         st.integers(1, 8)), max_size=12)


@given(OPS, st.integers(1, 8))
def test_newest_is_never_older_than_what_the_informer_or_we_know(
        ops: list[tuple[str, int]], cached_rv: int) -> None:
    """Against a model: the newest copy is the informer's or our last write, whichever is
    later; None exactly when the informer is at or before a refused version (and no later
    version was seen since)."""
    cache: MutationCache[ResourceClaim] = MutationCache()
    written: int | None = None
    refused: int | None = None
    for op, rv in ops:
        if op == "wrote":
            cache.wrote(claim(rv))
            written, refused = rv, None
        elif op == "conflicted":
            cache.conflicted(claim(rv))
            written, refused = None, rv
        else:
            cache.observed(claim(rv))
            if written is not None and written <= rv:
                written = None
            if refused is not None and refused < rv:
                refused = None
    got = cache.newest(claim(cached_rv))
    if refused is not None and cached_rv <= refused:
        assert got is None
        return
    assert got is not None
    want = written if written is not None and written > cached_rv else cached_rv
    assert revision(got) == want


def test_with_a_ttl_own_creates_show_until_the_informer_does_or_it_expires(
        monkeypatch: pytest.MonkeyPatch) -> None:
    now = [100.0]
    monkeypatch.setattr("kubedra.client.mutationcache.time.monotonic", lambda: now[0])
    cache: MutationCache[ResourceClaim] = MutationCache(ttl=60)
    created = cache.wrote(claim(3, name="a"))
    other = cache.wrote(claim(4, name="b"))
    assert cache.added(set()) == [created, other]
    assert cache.added({"ns/a"}) == [other]  # the informer shows "a" already
    cache.observed(claim(3, name="a"))
    now[0] += 61  # "b" was deleted before the informer saw it: shown no longer
    assert cache.added(set()) == []
    assert MutationCache().added(set()) == []  # without a ttl: updates only
