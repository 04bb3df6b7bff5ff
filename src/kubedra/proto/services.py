"""The kubelet's choice of a DRA plugin's gRPC service (1.34's ``chosenService``), shared by
the kubelet and the driver SDK's fake kubelet so the rule and its texts live once."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from kubedra.api.goformat import go_quoted_list


class NoService(ValueError):
    """The plugin offers no service the kubelet speaks (upstream's text)."""


def choose_service(offered: Sequence[str], supported: Collection[str]) -> str:
    """The first of the plugin's services, in the plugin's order, that the kubelet supports."""
    if not offered:
        raise NoService("empty list of supported gRPC services (aka supported versions)")
    for service in offered:
        if service in supported:
            return service
    raise NoService(f"none of services supported by the plugin ({go_quoted_list(offered)}) "
                    f"are supported by the kubelet ({go_quoted_list(supported)})")
