"""The instances of one node+driver and which of them are free.

Instances are ordered by slice name, then position inside the slice (upstream used lister order,
which is not deterministic). Usage is tracked per instance *name*: the k-th allocation result
naming ``X`` occupies the k-th instance named ``X``, so duplicate names (reported by
:attr:`Pool.duplicates`) are never merged and never handed out twice.
"""

from __future__ import annotations

from kubedra.allocation.instance import Instance, Verdict
from kubedra.allocation.matching import bits
from kubedra.allocation.selectors import Selector

_MASK_CACHE_LIMIT = 512


class PairMasks:
    """Which pool positions pass (class filter, request selector); filled lazily."""

    __slots__ = ("errors", "known", "ok")

    def __init__(self) -> None:
        self.known = 0
        self.ok = 0
        self.errors: dict[int, str] = {}


def pair_verdict(instance: Instance, filt: Selector | None, request: Selector) -> Verdict:
    """Class filter first (as upstream), then the request selector; errors carry their origin."""
    if filt is not None:
        v = filt.verdict(instance)
        if isinstance(v, str):
            return f"evaluate filter CEL expression: {v}"
        if not v:
            return False
    v = request.verdict(instance)
    if isinstance(v, str):
        return f"evaluate request CEL expression: {v}"
    return v


class Pool:
    """Ordered instances of one (node, driver) with a free bitmask."""

    __slots__ = ("_masks", "by_name", "driver", "free", "instances", "node", "version")

    def __init__(self, node: str, driver: str, instances: list[Instance]) -> None:
        self.node = node
        self.driver = driver
        self.instances = instances
        self.by_name: dict[str, list[int]] = {}
        for i, inst in enumerate(instances):
            self.by_name.setdefault(inst.name, []).append(i)
        self.free = (1 << len(instances)) - 1
        self.version = 0
        self._masks: dict[tuple[str | None, str], PairMasks] = {}

    @property
    def duplicates(self) -> list[str]:
        return sorted(name for name, pos in self.by_name.items() if len(pos) > 1)

    def set_usage(self, name: str, count: int) -> None:
        """``count`` allocation results name ``name``: occupy that many of its instances."""
        for k, pos in enumerate(self.by_name.get(name, ())):
            if k < count:
                self.free &= ~(1 << pos)
            else:
                self.free |= 1 << pos
        self.version += 1

    def matching(self, filt: Selector | None, request: Selector, within: int,
                 key: tuple[str | None, str] | None = None) -> PairMasks:
        """Pass/error masks for every position in ``within`` (evaluating only what is new).

        ``key`` = (filter expression, request expression), when the caller has it at hand.
        """
        if key is None:
            key = (filt.expression if filt is not None else None, request.expression)
        masks = self._masks.get(key)
        if masks is None:
            if len(self._masks) >= _MASK_CACHE_LIMIT:
                self._masks.clear()
            masks = self._masks[key] = PairMasks()
        todo = within & ~masks.known
        if todo:
            for pos in bits(todo):
                v = pair_verdict(self.instances[pos], filt, request)
                if isinstance(v, str):
                    masks.errors[pos] = v
                elif v:
                    masks.ok |= 1 << pos
            masks.known |= todo
        return masks
