"""The complete search of one devices-model Allocate call, with upstream's preferences.

The problem (built by :mod:`.model.devices`): requests in order (claims in order, then each
claim's requests), each with one or more :class:`Choice` s in priority order (the request
itself, or the subrequests of ``firstAvailable``). A choice takes ``count`` devices out of a
candidate bitmask (``ExactCount``) or exactly its ``fixed`` devices (``All``). Devices are bit
positions in upstream's candidate order. A :class:`Constraint` (``matchAttribute``) maps devices
to attribute values: all devices of the slots it covers must have the attribute, with one value.
Devices are exclusive, except that an admin-access slot only avoids devices taken by earlier
slots of its own claim (a later non-admin slot still avoids it, as upstream's in-order search).

The answer: the first choice vector in priority order (lexicographic, in request order) that
admits an allocation within the per-claim limit of results, and for it the lexicographically
first device sequence (slots in order, candidates in order). That is what upstream's
first-fit-with-backtracking returns whenever it returns anything, and first-fit without
backtracking (:func:`_greedy`) is tried first, since its success is that answer.

Method and bound. A fixed choice vector with S slots over D devices is feasible iff, for some
value per constraint (only values that every covered slot can take), the slots, restricted to
the devices with those values, have a matching of distinct devices (Kuhn's augmenting paths,
:func:`~.matching.complete_match`, O(S·D) per augmentation). So feasibility costs
O(∏_k V_k · S²·D), V_k the number of values constraint k can take (devices grouped by the
constrained attribute's value; in practice one or two constraints and a handful of groups).
The lexicographically first sequence fixes one slot at a time, trying candidates in order
against that check: at most S·D checks. Choice vectors are searched depth first in priority
order; a prefix that is infeasible on its own is cut, so the search visits at most
∏_i |choices_i| vectors (≤ 8 per request) and in practice a few. Admin-access slots make the
distinct-devices check a search of its own (exponential in the worst case, cut by a matching
of the other slots); no upstream row or scheduler workload mixes them with contention.
Every step calls ``check``, which raises to stop a search that runs too long.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from kubedra.allocation.matching import bits, complete_match, lex_first_match


@dataclass(frozen=True, slots=True)
class Choice:
    """One way to satisfy a request: ``count`` devices of ``mask``, or exactly ``fixed``."""

    mask: int = 0
    count: int = 0
    fixed: tuple[int, ...] | None = None
    admin: bool = False
    constraints: tuple[int, ...] = ()  # indices into Problem.constraints covering this choice
    error: str | None = None  # trying this choice is an error (upstream's text)

    @property
    def size(self) -> int:
        return len(self.fixed) if self.fixed is not None else self.count


@dataclass(frozen=True, slots=True)
class Request:
    claim: int
    choices: tuple[Choice, ...]


@dataclass(frozen=True, slots=True)
class Constraint:
    """``matchAttribute``: device -> value (devices without the attribute are absent)."""

    values: Mapping[int, Hashable]
    groups: dict[Hashable, int] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        for dev, value in self.values.items():
            self.groups[value] = self.groups.get(value, 0) | (1 << dev)


@dataclass(frozen=True, slots=True)
class Slot:
    request: int
    claim: int
    mask: int
    admin: bool
    constraints: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Solution:
    choices: tuple[int, ...]  # per request: the chosen choice's index
    devices: tuple[tuple[int, ...], ...]  # per request: its devices in slot order


class ChoiceError(Exception):
    """The search tried a choice marked with an error."""


def _never() -> None:
    return None


class Problem:
    """One Allocate call's search; :meth:`solve` gives the preferred :class:`Solution`."""

    def __init__(self, requests: Sequence[Request], constraints: Sequence[Constraint],
                 limit: int, check: Callable[[], None] = _never) -> None:
        self.requests = requests
        self.constraints = constraints
        self.limit = limit
        self.check = check

    # --- choice vectors --------------------------------------------------------------------

    def solve(self) -> Solution | None:
        counts = [0] * (1 + max((r.claim for r in self.requests), default=0))
        return self._vectors(0, [], counts)

    def _vectors(self, i: int, vector: list[int], counts: list[int]) -> Solution | None:
        self.check()
        if i == len(self.requests):
            slots = self._slots(vector)
            devices = self.assign(slots)
            if devices is None:
                return None
            return Solution(tuple(vector), self._split(slots, devices))
        request = self.requests[i]
        several = len(request.choices) > 1
        for k, choice in enumerate(request.choices):
            if choice.error is not None:
                raise ChoiceError(choice.error)
            if choice.fixed is not None and not choice.fixed:
                continue  # All with no matching device: no solution with this choice
            if counts[request.claim] + choice.size > self.limit:
                continue  # the claim's results would exceed the limit
            vector.append(k)
            counts[request.claim] += choice.size
            if not several or self.feasible(self._slots(vector)):
                found = self._vectors(i + 1, vector, counts)
                if found is not None:
                    return found
            counts[request.claim] -= choice.size
            vector.pop()
        return None

    def _slots(self, vector: Sequence[int]) -> list[Slot]:
        slots: list[Slot] = []
        for i, k in enumerate(vector):
            request = self.requests[i]
            c = request.choices[k]
            if c.fixed is not None:
                slots += [Slot(i, request.claim, 1 << d, c.admin, c.constraints)
                          for d in c.fixed]
            else:
                slots += [Slot(i, request.claim, c.mask, c.admin, c.constraints)] * c.count
        return slots

    def _split(self, slots: Sequence[Slot], devices: Sequence[int]) -> tuple[tuple[int, ...], ...]:
        out: list[list[int]] = [[] for _ in self.requests]
        for slot, dev in zip(slots, devices, strict=True):
            out[slot.request].append(dev)
        return tuple(tuple(d) for d in out)

    # --- one choice vector -----------------------------------------------------------------

    def assign(self, slots: Sequence[Slot]) -> list[int] | None:
        """The lexicographically first device per slot, or None if there is no allocation."""
        first = _greedy(slots, self.constraints)
        if first is not None:
            return first
        masks = [s.mask for s in slots]
        if any(s.admin for s in slots):
            return self._assign_admin(slots, masks)
        best: list[int] | None = None
        for restricted in self._groups(slots, masks):
            self.check()
            found = lex_first_match(restricted)
            if found is not None and (best is None or found < best):
                best = found
        return best

    def _assign_admin(self, slots: Sequence[Slot], masks: list[int]) -> list[int] | None:
        """With admin-access slots: fix one slot at a time to its first device that still
        admits an allocation."""
        if not self._feasible(slots, masks):
            return None
        for j in range(len(slots)):
            for dev in bits(masks[j]):
                trial = [*masks[:j], 1 << dev, *masks[j + 1:]]
                if self._feasible(slots, trial):
                    masks = trial
                    break
        return [m.bit_length() - 1 for m in masks]

    def feasible(self, slots: Sequence[Slot]) -> bool:
        return self._feasible(slots, [s.mask for s in slots])

    def _feasible(self, slots: Sequence[Slot], masks: Sequence[int]) -> bool:
        for restricted in self._groups(slots, masks):
            self.check()
            if _distinct(slots, restricted, self.check):
                return True
        return False

    def _groups(self, slots: Sequence[Slot], masks: Sequence[int]) -> Iterator[list[int]]:
        """The slots' masks restricted to one value per constraint, for each value tuple that
        every covered slot can take."""
        used = sorted({k for s in slots for k in s.constraints})
        if not used:
            yield list(masks)
            return
        options: list[list[int]] = []
        for k in used:
            covered = [m for s, m in zip(slots, masks, strict=True) if k in s.constraints]
            options.append([g for g in self.constraints[k].groups.values()
                            if all(m & g for m in covered)])
        for combo in itertools.product(*options):
            allowed = dict(zip(used, combo, strict=True))
            out = list(masks)
            for j, s in enumerate(slots):
                for k in s.constraints:
                    out[j] &= allowed[k]
            if all(out):
                yield out


def _greedy(slots: Sequence[Slot], constraints: Sequence[Constraint]) -> list[int] | None:
    """Upstream's first fit without backtracking: each slot takes its first usable device."""
    chosen: list[int] = []
    taken = 0
    by_claim: dict[int, int] = {}
    value: dict[int, Hashable] = {}
    for s in slots:
        blocked = by_claim.get(s.claim, 0) if s.admin else taken
        pick = None
        for dev in bits(s.mask & ~blocked):
            if all(_fits(constraints[k], value, k, dev) for k in s.constraints):
                pick = dev
                break
        if pick is None:
            return None
        for k in s.constraints:
            value.setdefault(k, constraints[k].values[pick])
        chosen.append(pick)
        taken |= 1 << pick
        by_claim[s.claim] = by_claim.get(s.claim, 0) | (1 << pick)
    return chosen


def _fits(c: Constraint, value: Mapping[int, Hashable], k: int, dev: int) -> bool:
    if dev not in c.values:
        return False
    return k not in value or value[k] == c.values[dev]


def _distinct(slots: Sequence[Slot], masks: Sequence[int], check: Callable[[], None]) -> bool:
    """Can each slot take a device of its mask under the exclusivity rule?"""
    if not any(s.admin for s in slots):
        return complete_match(masks) is not None
    return _distinct_admin(slots, masks, 0, 0, {}, check)


def _distinct_admin(slots: Sequence[Slot], masks: Sequence[int], j: int, taken: int,
                    by_claim: dict[int, int], check: Callable[[], None]) -> bool:
    """In slot order: a non-admin slot avoids every taken device, an admin slot only those of
    its claim. Cut by a matching of the remaining non-admin slots on the untaken devices."""
    check()
    if j == len(slots):
        return True
    rest = [m & ~taken for s, m in zip(slots[j:], masks[j:], strict=True) if not s.admin]
    if complete_match(rest) is None:
        return False
    s = slots[j]
    blocked = by_claim.get(s.claim, 0) if s.admin else taken
    for dev in bits(masks[j] & ~blocked):
        bit = 1 << dev
        mine = by_claim.get(s.claim, 0)
        by_claim[s.claim] = mine | bit
        if _distinct_admin(slots, masks, j + 1, taken | bit, by_claim, check):
            by_claim[s.claim] = mine
            return True
        by_claim[s.claim] = mine
    return False
