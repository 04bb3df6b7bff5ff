"""Project-wide pytest hooks: per-vector-file pass/fail summary lines."""

from __future__ import annotations

from collections import defaultdict

import pytest

_FILE_OF: dict[str, str] = {}
_COUNTS: dict[str, dict[str, int]] = defaultdict(lambda: {"passed": 0, "failed": 0, "skipped": 0})


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "vectors(name): the conformance vector file this test checks"
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        marker = item.get_closest_marker("vectors")
        if marker is not None:
            _FILE_OF[item.nodeid] = marker.args[0]


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    name = _FILE_OF.get(report.nodeid)
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
