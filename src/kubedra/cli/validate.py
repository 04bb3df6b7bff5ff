"""``kubedra validate -f FILE``: check manifests offline as the API server would on create.

Each object goes through the server's own create pipeline (:mod:`kubedra.registry.pipeline`:
the size limit, strict fields as kubectl's default ``--validate=strict`` asks, decoding, the
namespace, identity, defaults, the kind's strategy with the given feature gates, validation),
only without the store. Problems are printed the way kubectl prints the API server's answer;
the exit status is 1 if any object is not valid.

An object is checked as the release that has its ``apiVersion``: ``--emulated-version``
(1.34 unless given) when that release has it, else the one that does
(``resource.k8s.io/v1`` is 1.34's, ``resource.k8s.io/v1alpha2`` 1.30's), with that release's
feature-gate defaults under ``--feature-gates``. What the server decides from other objects
(the namespace exists; it allows admin access to devices) is not checked: there is no store.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from kubedra.api import codec
from kubedra.api.features import FeatureGateError, FeatureGates, parse_feature_gates
from kubedra.api.kinds import Kind
from kubedra.api.release import (
    DEFAULT_RELEASE,
    RELEASES,
    Release,
    ReleaseError,
    parse_release,
)
from kubedra.api.scheme import GVR
from kubedra.registry import pipeline, resources
from kubedra.registry.strategies.base import AnyStrategy
from kubedra.validation import field
from kubedra.validation.field import FieldError

MANIFEST_SUFFIXES = (".json", ".yaml", ".yml")


@dataclass(frozen=True, slots=True)
class Source:
    """Manifest text and where it came from (a path, or ``STDIN``)."""

    name: str
    text: bytes


def _sources(filenames: tuple[str, ...], recursive: bool) -> Iterator[Source]:
    for filename in filenames:
        if filename == "-":
            yield Source("STDIN", sys.stdin.buffer.read())
            continue
        path = Path(filename)
        if path.is_dir():
            pattern = "**/*" if recursive else "*"
            for child in sorted(path.glob(pattern)):
                if child.is_file() and child.suffix in MANIFEST_SUFFIXES:
                    yield Source(str(child), child.read_bytes())
        elif path.exists():
            yield Source(filename, path.read_bytes())
        else:
            raise click.ClickException(f'the path "{filename}" does not exist')


def cause_text(field: str, message: str) -> str:
    """One cause of a 422 as kubectl prints it."""
    return f"{field}: {message}"


def invalid_message(kind: str, name: str, errors: list[FieldError]) -> str:
    """kubectl's rendering of a 422: one cause inline, several as a bulleted list."""
    return render_invalid(kind, name, [cause_text(str(e.field), e.body()) for e in errors])


def render_invalid(kind: str, name: str, texts: list[str]) -> str:
    """The rendering of a 422 from its causes' texts (repeated ones once)."""
    causes = list(dict.fromkeys(texts))
    head = f'The {kind} "{name}" is invalid: '
    if len(causes) == 1:
        return head + causes[0] + "\n"
    return head + "\n" + "".join(f"* {c}\n" for c in causes)


def _within(paths: list[str], prefix: str) -> list[str]:
    """The paths under ``prefix`` (an object's place in a List), relative to it."""
    if not prefix:
        return paths
    return [p[len(prefix) + 1:] for p in paths if p.startswith(prefix + ".")]


def release_of(kind: Kind, emulated: Release) -> Release:
    """The release an object of ``kind`` is checked as: ``emulated`` if it has the kind's
    version, else the release that has it."""
    releases = kind.row.releases
    return emulated if emulated in releases else min(releases, key=lambda r: r.name)


class Checker:
    """Validates objects one at a time, printing a line (or block) for each."""

    def __init__(self, namespace: str, gates: str, mode: str,
                 release: Release = DEFAULT_RELEASE) -> None:
        self.namespace = namespace
        self.release = release
        self.gates = gates
        self._strategies: dict[Release, dict[GVR, AnyStrategy]] = {}
        self.mode = mode.capitalize()  # kubectl's --validate names the fieldValidation values
        self.failed = False

    def check_gates(self) -> None:
        """Fail before any file is read when no release knows ``--feature-gates``."""
        errors: list[click.BadParameter] = []
        for release in (self.release, *(r for r in RELEASES if r != self.release)):
            try:
                self.strategies(release)
                return
            except click.BadParameter as err:
                errors.append(err)
        raise errors[0]

    def strategies(self, release: Release) -> dict[GVR, AnyStrategy]:
        """The strategy table under ``release``'s gates with ``--feature-gates`` applied."""
        table = self._strategies.get(release)
        if table is None:
            try:
                gates = parse_feature_gates(self.gates, FeatureGates.for_release(release))
            except FeatureGateError as err:
                raise click.BadParameter(f"{err} (release {release.name})",
                                         param_hint="--feature-gates") from None
            table = self._strategies[release] = resources.strategies(gates)
        return table

    def _fail(self, message: str) -> None:
        self.failed = True
        click.echo(message, nl=not message.endswith("\n"), err=True)

    def check_source(self, source: Source) -> None:
        try:
            docs = codec.load_documents(source.text)
        except codec.DecodeError as err:
            self._fail(f"error: error parsing {source.name}: {err}")
            return
        duplicates = self._duplicates(source, docs)
        for index, path, obj in codec.list_items(docs):
            self.check(source.name, obj, _within(duplicates[index], path))

    def _duplicates(self, source: Source, docs: list[Any]) -> list[list[str]]:
        """Repeated keys per document (loading keeps only the last value of each)."""
        if len(docs) == 1 and source.text.lstrip()[:1] == b"{":
            return [codec.duplicate_fields(source.text)]
        found = codec.yaml_duplicate_fields(source.text)
        return found if len(found) == len(docs) else [[] for _ in docs]

    def check(self, where: str, raw: Any, duplicates: list[str]) -> None:
        if not isinstance(raw, dict):
            self._fail(f"error: {where}: expected an object, got {type(raw).__name__}")
            return
        try:
            kind = codec.kind_of(raw)
        except codec.DecodeError as err:
            self._fail(f"error: {where}: {err}")
            return
        try:
            release = release_of(kind, self.release)
            strategy = self.strategies(release)[kind.resource.storage_gvr]
            with field.apimachinery(field.apimachinery_of(release)):  # as its server answers
                decoded = pipeline.admit_new(
                    strategy, kind, raw, namespace=self._namespace(raw), mode=self.mode,
                    duplicates=duplicates, size=len(codec.encode(raw)),
                )
        except pipeline.Invalid as err:
            self._fail(invalid_message(kind.kind, err.name, err.errors))
            return
        except pipeline.Rejected as err:
            self._fail(f"error: {where}: {err}")
            return
        for warning in decoded.warnings:
            click.echo(f"Warning: {warning}", err=True)
        click.echo(f"{kind.kind}/{decoded.obj.metadata.name} valid")

    def _namespace(self, raw: dict[str, Any]) -> str:
        """The request namespace kubectl would use: the object's own, else ``-n``."""
        meta = raw.get("metadata")
        own = meta.get("namespace") if isinstance(meta, dict) else None
        return own if isinstance(own, str) and own else self.namespace


@click.command()
@click.option("-f", "--filename", "filenames", multiple=True, required=True,
              help="A manifest file (YAML or JSON, several documents allowed), a directory of "
                   "them, or - for standard input. Repeatable.")
@click.option("-R", "--recursive", is_flag=True, help="Descend into subdirectories of -f dirs.")
@click.option("-n", "--namespace", default="default", show_default=True,
              help="Namespace for namespaced objects that name none.")
@click.option("--validate", "mode", type=click.Choice(["strict", "warn", "ignore"]),
              default="strict", show_default=True,
              help="Unknown or duplicate fields: an error, a warning, or ignored (as kubectl).")
@click.option("--feature-gates", default="", help="Gates as A=true,B=false.")
@click.option("--emulated-version", default=DEFAULT_RELEASE.name, show_default=True,
              help="The release to check as (1.30 or 1.34) where both have the object's "
                   "apiVersion; one only of them has resource.k8s.io's versions.")
def validate(
    filenames: tuple[str, ...], recursive: bool, namespace: str, mode: str, feature_gates: str,
    emulated_version: str,
) -> None:
    """Validate manifests offline as the API server validates a create."""
    try:
        release = parse_release(emulated_version)
    except ReleaseError as err:
        raise click.BadParameter(str(err), param_hint="--emulated-version") from None
    checker = Checker(namespace, feature_gates, mode, release)
    checker.check_gates()
    for source in _sources(filenames, recursive):
        checker.check_source(source)
    if checker.failed:
        sys.exit(1)
