"""``kubedra controller-manager`` refuses bad flags with upstream's messages, before it
connects anywhere."""

from __future__ import annotations

from click.testing import CliRunner

from kubedra.cli.controller_manager import controller_manager


def test_unknown_feature_gate_is_refused() -> None:
    result = CliRunner().invoke(controller_manager, ["--feature-gates", "NoSuchGate=true"])
    assert result.exit_code == 2
    assert "unrecognized feature gate: NoSuchGate" in result.output


def test_negative_backoff_is_refused() -> None:
    result = CliRunner().invoke(controller_manager, ["--job-pod-failure-backoff", "-1"])
    assert result.exit_code == 2
    assert "--job-pod-failure-backoff" in result.output


def test_no_resource_claim_workers_is_refused() -> None:
    result = CliRunner().invoke(controller_manager, ["--concurrent-resource-claim-syncs", "0"])
    assert result.exit_code == 2
    assert "--concurrent-resource-claim-syncs" in result.output


def test_unknown_controller_is_refused() -> None:
    result = CliRunner().invoke(controller_manager, ["--controllers", "*,-nodelifecycle"])
    assert result.exit_code == 2
    assert '"nodelifecycle" is not in the list of known controllers' in result.output


def test_grace_period_is_a_go_duration() -> None:
    result = CliRunner().invoke(controller_manager, ["--node-monitor-grace-period", "40"])
    assert result.exit_code == 2
    assert 'time: missing unit in duration "40"' in result.output


def test_a_gate_of_the_1_34_release_passes_the_early_check() -> None:
    """Which release's gates apply is learnt from the server; a 1.34 gate is not refused
    before (here the missing kubeconfig ends the command)."""
    result = CliRunner().invoke(controller_manager, ["--feature-gates", "DRAAdminAccess=true",
                                                     "--kubeconfig", "/nonexistent"])
    assert result.exit_code == 1
    assert "unrecognized" not in result.output
