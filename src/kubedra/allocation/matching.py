"""Assigning instances to requests on one node+driver pool.

Candidates are bitmasks over the pool's instance order (bit ``i`` = instance ``i``). The answer
is upstream's greedy first-fit whenever that succeeds (so results match v1.30 byte for byte);
only when it fails do we run a complete bipartite matching (Kuhn's augmenting paths), which
finds an assignment whenever one exists.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence


def bits(mask: int) -> Iterator[int]:
    """The set bit positions of ``mask``, lowest first (= pool order)."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def first_fit(candidates: Sequence[int]) -> list[int] | None:
    """Upstream's allocation: each request in order takes its first still-untaken candidate."""
    taken = 0
    chosen: list[int] = []
    for cand in candidates:
        free = cand & ~taken
        if not free:
            return None
        low = free & -free
        taken |= low
        chosen.append(low.bit_length() - 1)
    return chosen


def complete_match(candidates: Sequence[int]) -> list[int] | None:
    """A perfect matching of requests to distinct instances, or None if none exists.

    Deterministic: requests are inserted in order, candidates tried lowest position first.
    """
    owner: dict[int, int] = {}  # instance position -> request index

    def augment(req: int, seen: set[int]) -> bool:
        for pos in bits(candidates[req]):
            if pos in seen:
                continue
            seen.add(pos)
            other = owner.get(pos)
            if other is None or augment(other, seen):
                owner[pos] = req
                return True
        return False

    for req in range(len(candidates)):
        if not augment(req, set()):
            return None
    chosen = [0] * len(candidates)
    for pos, req in owner.items():
        chosen[req] = pos
    return chosen


def assign(candidates: Sequence[int]) -> list[int] | None:
    """First-fit if it succeeds, else a complete matching (None = no valid assignment)."""
    chosen = first_fit(candidates)
    return chosen if chosen is not None else complete_match(candidates)


def lex_first_match(candidates: Sequence[int]) -> list[int] | None:
    """The lexicographically first matching (request order, lowest position first), or None.

    From any perfect matching, each request in turn tries its lower candidates: taking one
    held by a later request works iff that request finds an alternating path among the
    requests after this one (the one's old instance being free again). O(R·I) path searches.
    """
    chosen = complete_match(candidates)
    if chosen is None:
        return None
    owner = {pos: req for req, pos in enumerate(chosen)}

    def augment(req: int, fixed: int, seen: set[int]) -> bool:
        for pos in bits(candidates[req]):
            if pos in seen:
                continue
            seen.add(pos)
            other = owner.get(pos)
            if other is None or (other > fixed and augment(other, fixed, seen)):
                owner[pos] = req
                chosen[req] = pos
                return True
        return False

    for req in range(len(candidates)):
        for pos in bits(candidates[req]):
            old = chosen[req]
            if pos == old:
                break
            other = owner.get(pos)
            if other is not None and other < req:
                continue
            del owner[old]
            owner[pos] = req
            chosen[req] = pos
            if other is None or augment(other, req, {pos}):
                break
            owner[old] = req
            owner[pos] = other
            chosen[req] = old
            chosen[other] = pos
    return chosen
