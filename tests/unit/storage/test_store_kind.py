"""A data dir records which store its cluster lives in: a server started on the other store
would show an empty cluster, so it is refused with a message saying how to proceed."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubedra.storage.factory import KIND_FILE, StoreKindError, claim_data_dir, open_store


def test_first_start_records_the_kind_and_the_same_kind_is_let_in(tmp_path: Path) -> None:
    claim_data_dir(tmp_path / "d", "etcd")
    assert (tmp_path / "d" / KIND_FILE).read_text() == "etcd\n"
    claim_data_dir(tmp_path / "d", "etcd")


@pytest.mark.parametrize(("first", "then"), [("sqlite", "etcd"), ("etcd", "sqlite")])
def test_the_other_store_is_refused(tmp_path: Path, first: str, then: str) -> None:
    claim_data_dir(tmp_path, first)
    with pytest.raises(StoreKindError) as refused:
        claim_data_dir(tmp_path, then)
    assert str(refused.value) == (
        f"{tmp_path} holds a cluster stored in {first}, and this one would store in {then}: "
        f"it would show an empty cluster. Start it on {first} again, or give another data "
        f"dir (or remove {tmp_path} to start over)")
    assert (tmp_path / KIND_FILE).read_text() == f"{first}\n"


def test_a_data_dir_from_before_the_record_is_known_by_its_sqlite_file(tmp_path: Path) -> None:
    (tmp_path / "kubedra.db").write_bytes(b"")
    with pytest.raises(StoreKindError, match="stored in sqlite"):
        claim_data_dir(tmp_path, "etcd")
    claim_data_dir(tmp_path, "sqlite")
    assert (tmp_path / KIND_FILE).read_text() == "sqlite\n"


async def test_opening_sqlite_after_etcd_is_refused(tmp_path: Path) -> None:
    claim_data_dir(tmp_path, "etcd")
    with pytest.raises(StoreKindError):
        await open_store(tmp_path, None, compact_interval=0, retain=10)
    assert not (tmp_path / "kubedra.db").exists()
