"""kubelet-checkpoint-upstream.json and kubelet-checkpoint-derived.json: the DRA manager
checkpoint file (JSON, checksum, legacy fallback, corruption) as the v1.30 kubelet has it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from kubedra.kubelet.checkpoint import (
    CheckpointError,
    CheckpointState,
    ClaimInfoState,
    checksum,
    marshal,
    unmarshal,
)
from tests.vectors import load, vector_cases

UPSTREAM = "kubelet-checkpoint-upstream.json"
DERIVED = "kubelet-checkpoint-derived.json"
U = load(UPSTREAM)
D = load(DERIVED)
NAME = "dramanager_checkpoint_test"


def _as_json(entries: list[ClaimInfoState]) -> Any:
    return json.loads(msgspec.json.encode(entries))


def _states(expected: list[dict[str, Any]]) -> list[ClaimInfoState]:
    return msgspec.json.decode(json.dumps(expected).encode(), type=list[ClaimInfoState])


@vector_cases(UPSTREAM, U["TestCheckpointGetOrCreate"])
def test_get_or_create(case: dict[str, Any], tmp_path: Path) -> None:
    state = CheckpointState(tmp_path, NAME)
    if case["checkpointContent"] is not None:
        (tmp_path / NAME).write_text(case["checkpointContent"])
    if case["expectedError"]:
        with pytest.raises(CheckpointError, match=case["expectedError"]):
            state.get_or_create()
        return
    entries = state.get_or_create()
    assert _as_json(entries) == case["expectedState"]
    if case["checkpointContent"] is None:
        assert (tmp_path / NAME).read_text() == '{"version":"v1","checksum":991151041}'
    else:  # re-written byte for byte
        state.store(entries)
        assert (tmp_path / NAME).read_text() == case["checkpointContent"]


@pytest.mark.vectors(UPSTREAM)
def test_state_store(tmp_path: Path) -> None:
    case = U["TestCheckpointStateStore"]
    state = CheckpointState(tmp_path, NAME)
    state.store(_states(case["store"]))
    assert (tmp_path / NAME).read_text() == case["expectedCheckpoint"]
    with pytest.raises(CheckpointError):
        CheckpointState("", NAME)
    with pytest.raises(CheckpointError, match="received empty string instead of checkpointName"):
        CheckpointState(tmp_path, "")


@pytest.mark.vectors(UPSTREAM)
def test_old_checkpoint_restore(tmp_path: Path) -> None:
    case = U["TestOldCheckpointRestore"]
    (tmp_path / NAME).write_text(case["oldCheckpointData"])
    state = CheckpointState(tmp_path, NAME)
    entries = state.get_or_create()
    state.store(entries)
    assert (tmp_path / NAME).read_text() == case["expectedDataAfterRemarshal"]


@vector_cases(DERIVED, D["cases"])
def test_derived(case: dict[str, Any]) -> None:
    entries = unmarshal(case["checkpointJSON"].encode())
    assert checksum("v1", entries) == case["checksum"]
    assert marshal(entries).decode() == case["checkpointJSON"]


@vector_cases(DERIVED, D["negativeCases"])
def test_derived_negative(case: dict[str, Any]) -> None:
    data = case["checkpointJSON"].encode()
    if case["expect"].startswith("valid"):
        assert unmarshal(data) == []
    elif case["name"] == "old-format-verified-with-new-struct":
        entries = unmarshal(data)  # accepted only through the legacy fallback
        assert checksum("v1", entries) == 453625682
        assert checksum("v1", entries, with_handles=False) == 153446146
    else:
        with pytest.raises(CheckpointError, match="checkpoint is corrupted"):
            unmarshal(data)
