"""Go durations as command-line values (``40s``, ``1m30s``), as Kubernetes' flags take them."""

from __future__ import annotations

import click

from kubedra.api.goformat import parse_duration


class Duration(click.ParamType):  # type: ignore[type-arg]
    """A Go duration (``40s``, ``1m30s``), in seconds; positive."""

    name = "duration"

    def convert(self, value: object, param: click.Parameter | None,
                ctx: click.Context | None) -> float:
        if isinstance(value, float):
            return value
        try:
            seconds = parse_duration(str(value))
        except ValueError as err:
            self.fail(str(err), param, ctx)
        if seconds <= 0:
            self.fail("must be positive", param, ctx)
        return seconds
