"""``kubedra kubelet`` flags: labels and taints as ``--register-with-taints`` spells them."""

from __future__ import annotations

import click
import pytest

from kubedra.api.core import Taint
from kubedra.cli.kubelet import node_config, parse_taint


def test_taints_and_labels() -> None:
    assert parse_taint("gpu=true:NoSchedule") == Taint(key="gpu", value="true",
                                                       effect="NoSchedule")
    assert parse_taint("dedicated:NoExecute") == Taint(key="dedicated", effect="NoExecute")
    config = node_config("n", "8", "64Gi", "50", ("zone=a",), ("x:PreferNoSchedule",))
    assert config.all_labels()["zone"] == "a"
    assert config.all_labels()["kubernetes.io/hostname"] == "n"
    assert config.taints[0].effect == "PreferNoSchedule"


@pytest.mark.parametrize("bad", ["gpu", "gpu=true", "gpu:Sometimes", ":NoSchedule"])
def test_bad_taints_are_refused(bad: str) -> None:
    with pytest.raises(click.BadParameter, match="want KEY"):
        parse_taint(bad)


def test_bad_labels_are_refused() -> None:
    with pytest.raises(click.BadParameter, match="want KEY=VALUE"):
        node_config("n", "1", "1Gi", "1", ("novalue",), ())


def test_bad_capacity_is_refused() -> None:
    with pytest.raises(click.BadParameter, match="--memory 'lots'"):
        node_config("n", "1", "lots", "1", (), ())
