"""The ``kubedra`` command. Subcommands live in their own modules and load lazily, so
``kubedra validate`` never pays for importing the API server or gRPC."""

from __future__ import annotations

import importlib
import importlib.util

import click

# name -> "module:attribute" of a click command
SUBCOMMANDS: dict[str, str] = {
    "validate": "kubedra.cli.validate:validate",
    "apiserver": "kubedra.cli.apiserver:apiserver",
    "scheduler": "kubedra.cli.scheduler:scheduler",
    "controller-manager": "kubedra.cli.controller_manager:controller_manager",
    "up": "kubedra.cli.up:up",
    "simulate": "kubedra.cli.simulate:simulate",
    "explain": "kubedra.cli.simulate:explain",
    "kubelet": "kubedra.cli.kubelet:kubelet",
    "node-pool": "kubedra.cli.nodepool:node_pool",
    "example-driver": "kubedra.cli.example_driver:example_driver",
    "fetch-kubectl": "kubedra.cli.kubectl:fetch_kubectl",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(
            name
            for name, target in SUBCOMMANDS.items()
            if importlib.util.find_spec(target.partition(":")[0]) is not None
        )

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = SUBCOMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, _, attr = target.partition(":")
        if importlib.util.find_spec(module_name) is None:
            return None
        command = getattr(importlib.import_module(module_name), attr)
        assert isinstance(command, click.Command)
        return command


@click.group(cls=LazyGroup)
@click.version_option(package_name="kubedra")
def main() -> None:
    """kubedra: Kubernetes Dynamic Resource Allocation with structured parameters."""
