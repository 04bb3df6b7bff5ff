"""The committed modules in ``kubedra/proto/generated`` equal a fresh grpcio-tools run."""

from __future__ import annotations

from pathlib import Path

from kubedra.proto import compile as proto_compile


def test_committed_stubs_match_a_fresh_generation(tmp_path: Path) -> None:
    proto_compile.generate(tmp_path)
    fresh = {p.name: p.read_text() for p in tmp_path.iterdir()}
    committed = {
        p.name: p.read_text() for p in proto_compile.GENERATED_DIR.iterdir() if p.is_file()
    }
    assert sorted(committed) == sorted(fresh), "run `make protos` and commit the result"
    stale = [name for name in fresh if committed[name] != fresh[name]]
    assert not stale, f"stale generated modules {stale}: run `make protos` and commit"


def test_every_proto_file_is_generated() -> None:
    names = {p.name for p in proto_compile.GENERATED_DIR.iterdir()}
    for proto in proto_compile.proto_files():
        stem = proto.stem
        assert {f"{stem}_pb2.py", f"{stem}_pb2.pyi", f"{stem}_pb2_grpc.py"} <= names
