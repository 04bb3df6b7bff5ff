"""The tutorial in docs/driver-sdk.md works as written: its driver module and its test (in
this process, and as a project of its own with the doc's pytest.ini), its manifests, and its
driver run as a program (logging at INFO)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kubedra.cli.validate import validate
from tests.unit.driver.helpers import DOC, blocks, write_project


async def test_tutorial_driver_passes_its_own_test(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    driver_src, test_src = blocks("python")[:2]
    assert len(driver_src.splitlines()) <= 52
    (tmp_path / "mydriver.py").write_text(driver_src)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "mydriver", raising=False)
    namespace: dict[str, Any] = {}
    exec(compile(test_src, "test_mydriver.py", "exec"), namespace)
    await namespace["test_prepare_writes_the_cdi_spec"](monkeypatch)


def run_pytest(project: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=120,
                          check=False)


def test_tutorial_test_runs_in_a_project_of_its_own(short_dir: Path) -> None:
    """Outside this repository (none of its pytest settings): the doc's pytest.ini is what
    makes the doc's async test run; without it pytest fails it as the doc says."""
    write_project(short_dir)
    done = run_pytest(short_dir)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    (short_dir / "pytest.ini").unlink()
    bare = run_pytest(short_dir)
    assert bare.returncode == 1
    assert "async def functions are not natively supported" in bare.stdout
    assert "async def functions are not natively supported" in DOC.read_text()


def test_tutorial_manifests_are_valid() -> None:
    (manifests,) = blocks("yaml")
    result = CliRunner().invoke(validate, ["-f", "-", "--emulated-version", "1.30"],
                                input=manifests, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "ResourceClass/mygpu valid", "ResourceClaimParameters/fast-a100 valid",
        "ResourceClaimTemplate/one-gpu valid", "Pod/uses-mygpu valid"]
    driver_src = blocks("python")[0]
    assert 'NAME = "mygpu.example.com"' in driver_src  # the class names the doc's driver


def start_driver(project: Path, root: Path, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "mydriver.py"], cwd=project, text=True, stderr=subprocess.PIPE,
        env={**os.environ, "KUBELET_ROOT_DIR": str(root), "CDI_DIR": str(root / "cdi"), **env})


def serve_then_stop(proc: subprocess.Popen[str], socket: Path) -> str:
    """Wait for the registration socket, SIGTERM, and return what the driver logged."""
    deadline = time.monotonic() + 30
    while not socket.exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[1]
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert not socket.exists()
    return err


def test_tutorial_driver_runs_and_logs_at_info(short_dir: Path) -> None:
    write_project(short_dir)
    root = short_dir / "root"
    socket = root / "plugins_registry" / "mygpu.example.com-reg.sock"
    logged = serve_then_stop(start_driver(short_dir, root), socket)
    assert re.search(r" INFO kubedra\.driver\.plugin: driver mygpu\.example\.com serving: "
                     r"registration .*-reg\.sock, DRA .*dra\.sock", logged), logged
    # a program that set up logging keeps it: here WARNING only, so no INFO line
    (short_dir / "quiet.py").write_text(
        "import logging, runpy\nlogging.basicConfig(level=logging.WARNING)\n"
        "runpy.run_path('mydriver.py', run_name='__main__')\n")
    quiet = subprocess.Popen(
        [sys.executable, "quiet.py"], cwd=short_dir, text=True, stderr=subprocess.PIPE,
        env={**os.environ, "KUBELET_ROOT_DIR": str(root), "CDI_DIR": str(root / "cdi")})
    assert "INFO" not in serve_then_stop(quiet, socket)
