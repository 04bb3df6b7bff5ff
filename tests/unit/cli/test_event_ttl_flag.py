"""``kubedra apiserver --event-ttl``: a Go duration; bad or negative values are usage errors
that start nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kubedra.cli.apiserver import apiserver


@pytest.mark.parametrize(("value", "message"), [
    ("1 hour", 'time: unknown unit " hour" in duration "1 hour"'),
    ("-5m", "must not be negative"),
])
def test_bad_event_ttl(tmp_path: Path, value: str, message: str) -> None:
    result = CliRunner().invoke(apiserver, ["--data-dir", str(tmp_path / "d"),
                                            "--event-ttl", value])
    assert result.exit_code == 2
    assert message in result.output
    assert not (tmp_path / "d").exists()
