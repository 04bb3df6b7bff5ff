"""Project-wide pytest hooks: the tiers' markers (``e2e``, given to every test under
tests/e2e/, and ``timing``), per-vector-file pass/fail summary lines, and no run against
compiled modules older than their source.

The summary is counted where reports arrive: in the one process, or in pytest-xdist's
controller, which collects nothing itself; so each test carries its vector file in
``user_properties``, which the workers send along with every report."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

import kubedra

_PACKAGE = Path(kubedra.__file__).parent
_E2E = Path(__file__).parent / "e2e"

_COUNTS: dict[str, dict[str, int]] = defaultdict(lambda: {"passed": 0, "failed": 0, "skipped": 0})


def _compiled() -> list[tuple[Path, Path]]:
    """(source, compiled module) for each module setup.py compiled in place."""
    pairs = []
    for built in _PACKAGE.rglob("*.so"):
        for suffix in (".py", ".c"):  # a compiled module, or a C extension (setup.NATIVE)
            source = built.with_name(built.name.split(".", 1)[0] + suffix)
            if source.exists():
                pairs.append((source, built))
    return pairs


def pytest_report_header() -> str:
    return f"kubedra: {len(_compiled())} modules compiled (setup.py)"


def pytest_sessionstart(session: pytest.Session) -> None:
    """A compiled module shadows its source: after an edit the tests would run the old code."""
    stale = [str(source.relative_to(_PACKAGE.parent)) for source, built in _compiled()
             if source.stat().st_mtime > built.stat().st_mtime]
    if stale:
        pytest.exit(f"compiled modules older than their source ({', '.join(stale[:5])}"
                    f"{', ...' if len(stale) > 5 else ''}): rebuild them with `make compile`, "
                    "or run `make quick`, which removes them and tests plain Python",
                    returncode=4)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "vectors(name): the conformance vector file this test checks"
    )
    config.addinivalue_line(
        "markers", "e2e: starts real processes or servers (every test under tests/e2e/)")
    config.addinivalue_line(
        "markers", "timing: asserts a wall-clock bound, scaled by KUBEDRA_TEST_TIME_SCALE "
        "(tests/timing.py)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.is_relative_to(_E2E):
            item.add_marker(pytest.mark.e2e)
        marker = item.get_closest_marker("vectors")
        if marker is not None:
            item.user_properties.append(("vectors", marker.args[0]))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    name = dict(report.user_properties).get("vectors")
    if name is None:
        return
    if report.when == "call" or (report.when == "setup" and not report.passed):
        outcome = "skipped" if report.skipped else ("passed" if report.passed else "failed")
        _COUNTS[name][outcome] += 1


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _COUNTS:
        return
    terminalreporter.section("conformance vectors")
    for name in sorted(_COUNTS):
        c = _COUNTS[name]
        line = f"{name}: {c['passed']} passed, {c['failed']} failed"
        if c["skipped"]:
            line += f", {c['skipped']} skipped"
        terminalreporter.write_line(line)
