"""``kubedra up``'s node flags: simulated nodes and fake Nodes would share the names
``node-0``, ... (an agent then takes over a fake Node and its pods fail to prepare), so the
pair is a usage error that starts nothing."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from kubedra.cli.up import up


def test_nodes_and_fake_nodes_exclude_each_other(tmp_path: Path) -> None:
    result = CliRunner().invoke(up, ["--data-dir", str(tmp_path / "d"), "--port", "0",
                                     "--nodes", "3", "--fake-nodes", "10"])
    assert result.exit_code == 2, result.output
    assert "--nodes and --fake-nodes exclude each other" in result.output
    assert not (tmp_path / "d").exists()
