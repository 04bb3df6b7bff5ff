"""Random operation sequences checked against a trivially correct model of etcd semantics."""

from __future__ import annotations

import random

import pytest

from kubedra.storage.contract import (
    ConflictError,
    EventType,
    KeyExistsError,
    KeyValue,
    NotFoundError,
    Store,
)
from tests.storage_conformance.helpers import take

KEYS = [f"/m/{c}" for c in "abcdefgh"] + ["/n/a", "/n/b"]


class Model:
    """Full history: the state after every revision from ``base`` on."""

    def __init__(self, base: int) -> None:
        self.base = base
        self.states: list[dict[str, KeyValue]] = [{}]
        self.events: list[tuple[EventType, str, bytes]] = []

    @property
    def now(self) -> dict[str, KeyValue]:
        return self.states[-1]

    @property
    def revision(self) -> int:
        return self.base + len(self.states) - 1

    def at(self, revision: int) -> dict[str, KeyValue]:
        return self.states[revision - self.base]

    def commit(self, key: str, kv: KeyValue | None, kind: EventType, value: bytes) -> None:
        state = dict(self.now)
        if kv is None:
            del state[key]
        else:
            state[key] = kv
        self.states.append(state)
        self.events.append((kind, key, value))


async def step(store: Store, model: Model, rng: random.Random) -> None:
    key = rng.choice(KEYS)
    current = model.now.get(key)
    rev = model.revision + 1  # the revision the next write would get
    value = f"{key}@{rev}".encode()
    op = rng.choice(["create", "update", "delete", "stale"])
    if op == "create":
        if current is None:
            kv = await store.create(key, value)
            assert kv == KeyValue(key, value, rev, rev)
            model.commit(key, kv, EventType.ADDED, value)
        else:
            with pytest.raises(KeyExistsError):
                await store.create(key, value)
    elif current is None:
        with pytest.raises(NotFoundError):
            await (store.update(key, value, 1) if op == "update" else store.delete(key))
    elif op == "update":
        kv = await store.update(key, value, current.mod_revision)
        assert kv == KeyValue(key, value, current.create_revision, rev)
        model.commit(key, kv, EventType.MODIFIED, value)
    elif op == "delete":
        gone = await store.delete(key, current.mod_revision)
        assert gone == KeyValue(key, current.value, current.create_revision, rev)
        model.commit(key, None, EventType.DELETED, current.value)
    else:
        with pytest.raises(ConflictError) as info:
            await store.update(key, value, current.mod_revision - 1)
        assert info.value.current == current


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_random_history_matches_model(store: Store, seed: int) -> None:
    rng = random.Random(seed)
    model = Model(await store.current_revision())
    for _ in range(300):
        await step(store, model, rng)
    current = model.revision
    assert await store.current_revision() == current
    compact_to = model.base + (current - model.base) // 3
    await store.compact(compact_to)
    for rev in range(compact_to, current + 1):
        state = model.at(rev)
        for prefix in ("/m/", "/n/", "/"):
            listed = await store.list(prefix, revision=rev)
            assert listed.items == [state[k] for k in sorted(state) if k.startswith(prefix)]
        key = rng.choice(KEYS)
        assert await store.get(key, revision=rev) == state.get(key)
    after = compact_to - 1
    events = store.watch("/m/", after)
    try:
        expected = [e for e in model.events[after - model.base :] if e[1].startswith("/m/")]
        got = await take(events, len(expected))
    finally:
        await events.aclose()
    assert [(e.type, e.kv.key, e.kv.value) for e in got] == expected
    revisions = [e.revision for e in got]
    assert revisions == sorted(set(revisions)) and revisions[0] >= compact_to
