"""``--kube-api-content-type``: the media type a component's client sends objects in and
asks for first (kube-scheduler's, kube-controller-manager's and the kubelet's flag).
JSON, the default, is the faster here (bench/README.md); protobuf is ``proto/kube.py``'s
wire, handed to the client (``client/`` does not import ``proto/``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import click

from kubedra.client.wire import JSON, ObjectWire
from kubedra.proto import kube

R = TypeVar("R")
DEFAULT = JSON
_WIRES: dict[str, ObjectWire | None] = {JSON: None, kube.MEDIA_TYPE: kube.Wire()}


def content_type_option(command: Callable[..., R]) -> Callable[..., R]:
    """The flag; the command gets ``content_type``."""
    return click.option(
        "--kube-api-content-type", "content_type", type=click.Choice(list(_WIRES)),
        default=DEFAULT, show_default=True,
        help="the media type of the objects this component sends to the API server (and "
             "asks for first); kinds without a protobuf form and patches stay JSON")(command)


def wire(content_type: str) -> ObjectWire | None:
    """The client's wire for ``content_type`` (None: JSON)."""
    return _WIRES[content_type]


def content_type_args(content_type: str) -> list[str]:
    """The flag for a component ``up`` starts (none for the default)."""
    return [] if content_type == DEFAULT else ["--kube-api-content-type", content_type]
